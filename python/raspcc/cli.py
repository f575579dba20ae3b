"""The command line shared by examples/python/run_numpy.py and run_torch.py.

    PROG MODEL [--json] [--inputs FILE | INPUT ...]

prints on standard output exactly what ``rasprun MODEL [--json] ...`` prints: one line per
input, ``[a, b]`` (REPL style) or a JSON array, and for an input that fails ``error: MESSAGE``
or ``{"error": "MESSAGE"}``. Exit status as rasprun's: 0 fine, 1 some input failed, 2 bad
usage or a model file it refuses (the message on standard error, prefixed with PROG).

A backend is a function ``(model, inputs) -> results``: for each input (a list of atoms) its
output atoms, or the RaspError it fails with.
"""

from __future__ import annotations

import os
import sys
from typing import Callable, List, Optional, Sequence, Union

from .atoms import Atom, RaspError, decode_text, encode_text, format_sequence, json_atom, parse_input
from .model import Model, ModelError, load

Result = Union[List[Atom], RaspError]
Backend = Callable[[Model, Sequence[List[Atom]]], List[Result]]

USAGE = "usage: %s MODEL.bin [--json] [--inputs FILE | INPUT ...]\n"


def _usage_error(prog: str, msg: str) -> int:
    sys.stderr.write("%s: %s\n%s(%s --help for details)\n" % (prog, msg, USAGE % prog, prog))
    return 2


def _input_lines(path: str) -> List[str]:
    """The lines of an --inputs file ('-': standard input) that are not blank, as rasprun reads them."""
    data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [decode_text(l) for l in lines if l.strip(b" \t\r\n")]


def main(prog: str, backend: Backend, argv: Optional[Sequence[str]] = None, help_text: str = "") -> int:
    args = [decode_text(os.fsencode(a)) for a in (sys.argv[1:] if argv is None else argv)]
    model_path, inputs_file, texts, json = None, None, [], False
    i = 0
    while i < len(args):
        a, value = args[i], None
        if a.startswith("--") and "=" in a:
            a, value = a.split("=", 1)
        if a in ("--help", "-h"):
            sys.stdout.write(USAGE % prog + help_text)
            return 0
        if a == "--inputs":
            if value is None:
                if i + 1 >= len(args):
                    return _usage_error(prog, "option '--inputs' needs a value")
                i += 1
                value = args[i]
            inputs_file = value
        elif value is not None:
            return _usage_error(prog, "option '%s' takes no value" % a)
        elif a == "--json":
            json = True
        elif a.startswith("--"):
            return _usage_error(prog, "unknown option '%s'" % a)
        elif model_path is None:
            model_path = a
        else:
            texts.append(a)
        i += 1
    if model_path is None:
        return _usage_error(prog, "no model given")
    if inputs_file is not None and texts:
        return _usage_error(prog, "give --inputs FILE or inputs, not both")
    if inputs_file is None and not texts:
        return _usage_error(prog, "no inputs: give --inputs FILE or INPUT ...")
    try:
        model = load(model_path)
    except ModelError as e:
        sys.stderr.write("%s: %s\n" % (prog, e))
        return 2
    if inputs_file is not None:
        try:
            texts = _input_lines(inputs_file)
        except OSError:
            sys.stderr.write("%s: cannot open inputs file %s\n" % (prog, inputs_file))
            return 2
    parsed: List[Union[List[Atom], RaspError]] = []
    for t in texts:
        try:
            parsed.append(parse_input(t))
        except RaspError as e:
            parsed.append(e)
    good = [p for p in parsed if not isinstance(p, RaspError)]
    results = iter(backend(model, good))
    out = sys.stdout.buffer
    all_ok = True
    for p in parsed:
        r = p if isinstance(p, RaspError) else next(results)
        if isinstance(r, RaspError):
            all_ok = False
            line = '{"error": %s}' % json_atom(str(r)) if json else "error: %s" % r
        else:
            line = format_sequence(r, json)
        out.write(encode_text(line) + b"\n")
    out.flush()
    return 0 if all_ok else 1
