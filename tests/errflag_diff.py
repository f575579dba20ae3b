#!/usr/bin/env python3
"""The error flag against rasprun's own errors (tests/errflag.sh runs it; needs NumPy).

usage: tests/errflag_diff.py BINDIR MODEL.bin [--random K] [--seed S]

For a model compiled with raspcc --error-flag, runs many inputs (every input up to the length
where they number a few hundred, K random ones of every length, inputs one and three tokens over
max_len, inputs with a token outside the vocabulary; real-valued tokens: values in the range, on a grid
of sixteenths of it and 5e-7 and 2e-6 beside it, at its ends and outside it) through

  - rasprun MODEL --json --flag (the runtime's checks, and the flag as the weights computed it;
    rasprun itself fails an input whose flag disagrees with its checks, exit 3), and
  - raspcc.run_weights in NumPy (python/raspcc: the weights alone, no check, no metadata but the
    plain decoding),

and requires, input by input: an input rasprun runs and refuses has err != 0 at some position in
both, one it answers err = 0 everywhere in both and the same atoms from the plain decoding (but
one rasprun answers with a note, its flag set inside the flag's band: there NumPy's flag may
be either, and the plain decoding must still agree); an
input rasprun cannot embed (too long, a token outside the vocabulary) cannot be encoded in NumPy
either (InputError); a real-valued token outside the range (rasprun refuses it before running)
raises the flag in NumPy. Prints one line: "errflag: MODEL: N inputs (E refused, B inside the
flag's band, L too long or outside the vocabulary, R out of range), all agree", or the first disagreements and exit 1.
"""
import itertools
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import numpy as np  # noqa: E402

import raspcc  # noqa: E402
from raspcc.atoms import InputError, format_sequence, json_atom  # noqa: E402


def literal(tokens):
    """The input as rasprun reads it: a JSON-like list of atoms."""
    return "[" + ", ".join(json_atom(t) for t in tokens) + "]"


def same_output(model, line, got, atoms):
    """rasprun's JSON line against the plain decoding: byte for byte, but a real-valued output
    within twice the model's error bound (each is within it of the program's value; NumPy's sums
    are not rasprun's fused multiply-add chains)."""
    if format_sequence(atoms, True) == line:
        return True
    out = model.output
    if out["kind"] != "numerical" or model.output_values or len(got) != len(atoms):
        return False
    return all(type(g) is type(a) and (g == a or (isinstance(a, float) and abs(g - a) <= 2 * (
        out["error_bound"] + out["error_rel"] * abs(a)))) for g, a in zip(got, atoms))


def inputs_for(model, rng, k):
    """(tokens, what) pairs: what is 'run', 'long', 'vocab' or 'range'."""
    N, out = model.max_len, []
    nt = model.numeric_tokens
    if nt is not None:
        lo, hi = float(nt["lo"]), float(nt["hi"])
        # the ends, a grid (where programs compare: thresholds and their margins), and beside it
        grid = [lo + (hi - lo) * j / 16 for j in range(17)]
        inside = [x + d for x in grid for d in (0.0, 5e-7, -5e-7, 2e-6, -2e-6) if lo <= x + d <= hi and "e" not in repr(x + d)]

        def uniform():  # rasprun's literals take no exponent: a number that needs one is 0.0 or lo
            x = rng.uniform(lo, hi)
            return x if "e" not in repr(x) else (0.0 if lo <= 0.0 <= hi else lo)

        for n in range(1, N + 1):
            for _ in range(k):
                out.append(([rng.choice(inside) if rng.random() < 0.3 else uniform() for _ in range(n)], "run"))
            for bad in (hi + 0.5, lo - 1.0, hi + 1e-3 * (1 + hi - lo)):
                toks = [uniform() for _ in range(n)]
                toks[rng.randrange(n)] = bad
                out.append((toks, "range"))
        out.append(([lo] * (N + 1), "long"))
        return out
    vocab = model.vocab
    total, L = 0, 0
    while L < N and total + len(vocab) ** (L + 1) <= 400:
        L += 1
        total += len(vocab) ** L
    for n in range(1, L + 1):
        out += [(list(t), "run") for t in itertools.product(vocab, repeat=n)]
    for n in range(L + 1, N + 1):
        out += [([rng.choice(vocab) for _ in range(n)], "run") for _ in range(k)]
    for extra in (1, 3):
        out.append(([rng.choice(vocab) for _ in range(N + extra)], "long"))
    stranger = "@" if isinstance(vocab[0], str) else 1000003
    for n in (1, min(3, N), N):
        toks = [rng.choice(vocab) for _ in range(n)]
        toks[rng.randrange(n)] = stranger
        out.append((toks, "vocab"))
    return out


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    bindir, path = args[0], args[1]
    k = int(args[args.index("--random") + 1]) if "--random" in args else 20
    seed = int(args[args.index("--seed") + 1]) if "--seed" in args else 1
    model = raspcc.load(path)
    if model.error_flag_dim is None:
        sys.exit("errflag: %s has no error flag (compile it with raspcc --error-flag)" % path)
    cases = inputs_for(model, random.Random(seed), k)
    text = "".join(literal(t) + "\n" for t, _ in cases)
    p = subprocess.run([os.path.join(bindir, "rasprun"), path, "--json", "--flag", "--inputs", "-"], input=text,
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        print("errflag: %s: rasprun exited %d: %s" % (path, p.returncode, p.stderr.strip()[:400]))
        return 1
    lines = p.stdout.splitlines()
    if len(lines) != 2 * len(cases):
        print("errflag: %s: rasprun printed %d lines for %d inputs" % (path, len(lines), len(cases)))
        return 1
    bad, counts = [], {"run": 0, "refused": 0, "band": 0, "long": 0, "vocab": 0, "range": 0}
    for (tokens, what), out_line, flag_line in zip(cases, lines[0::2], lines[1::2]):
        flag_json = json.loads(flag_line)
        got, flag, note = json.loads(out_line), flag_json["flag"], flag_json.get("note")
        raised = isinstance(got, dict)
        try:
            atoms, err = raspcc.run_weights(model, tokens)
            encoded = True
        except InputError:
            encoded = False
        where = literal(tokens)
        if what in ("long", "vocab"):
            counts[what] += 1
            if not raised or flag is not None or encoded:
                bad.append("%s (%s): rasprun %s, flag %s, NumPy %s" % (where, what, out_line, flag,
                                                                      "encoded it" if encoded else "refused it"))
            continue
        if what == "range":
            counts["range"] += 1
            if not raised or flag is not None or not encoded or not np.any(err != 0):
                bad.append("%s (outside the range): rasprun %s, NumPy flag %s" % (where, out_line,
                                                                                 err if encoded else "not encoded"))
            continue
        counts["run"] += 1
        counts["refused"] += raised
        set_c = flag is not None and any(x != 0 for x in flag)
        set_py = encoded and bool(np.any(err != 0))
        if not encoded or flag is None:
            bad.append("%s: not run (rasprun %s)" % (where, out_line))
        elif note is not None:  # answered, flag set inside the band: NumPy's own rounding may go either way
            counts["band"] += 1
            if raised or not set_c or not same_output(model, out_line, got, atoms):
                bad.append("%s: rasprun %s with the note %r, its flag %s" % (where, out_line, note, flag))
        elif raised != set_c or raised != set_py:
            bad.append("%s: rasprun %s, its flag %s, NumPy's %s" % (where, out_line, flag, list(err)))
        elif not raised and not same_output(model, out_line, got, atoms):
            bad.append("%s: rasprun %s, plain decoding %s" % (where, out_line, format_sequence(atoms, True)))
    name = os.path.basename(path)
    if bad:
        for b in bad[:10]:
            print("errflag: %s: %s" % (name, b))
        print("errflag: %s: %d of %d inputs disagree" % (name, len(bad), len(cases)))
        return 1
    print("errflag: %s: %d inputs (%d refused, %d inside the flag's band, %d too long or outside the vocabulary, %d out "
          "of range), all agree" % (name, len(cases), counts["refused"], counts["band"], counts["long"] + counts["vocab"],
                                   counts["range"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
