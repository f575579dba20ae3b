"""RASP atoms as Python values, printed and parsed exactly as the C tools do.

An atom is a Python ``bool``, ``int``, ``float`` or ``str`` (``bool`` is tested before ``int``:
``True`` and ``1`` are different atoms, as in the model file and in ``rasprun --json``).

Strings hold text as the C tools hold bytes: a byte that is not part of valid UTF-8 is kept
as a lone surrogate (``errors="surrogateescape"``), so ``encode_text`` gives back the exact
bytes. The C tools split a string input into its *bytes*; ``parse_input`` does the same, so an
input ``"é"`` is two one-byte atoms there and here alike.

Contract of this module (ir/value.c and ir/input.c are the reference):
  - ``format_atom(a)``: ``value_format`` (error messages): ``True``, ``3``, Python's ``repr`` of
    a float, a string in double quotes without escaping.
  - ``repl_atom(a)``: ``value_print_repl``: ``T``/``F``, a float rounded to 3 decimals.
  - ``json_atom(a)``: ``value_print_json``: ``true``, ``null`` for a non-finite float, strings
    with ``\\"``, ``\\\\``, ``\\n``, ``\\t`` and ``\\u00XX`` escapes only.
  - ``parse_input(text)``: ``input_parse``: a string literal, a list of atom literals or a bare
    word; the same error messages, including the parser's syntax errors for the malformed
    literals users type (missing or extra brackets and commas); for exotic malformed
    expressions (dicts, comprehensions) the message starts the same but may be worded
    differently.
  - ``convert_token(token_type, a)``: ``ir_convert_token``.
"""

from __future__ import annotations

import math
import re
from typing import List, Optional, Tuple, Union

Atom = Union[bool, int, float, str]

INT64_MAX = 2**63 - 1


class RaspError(ValueError):
    """An input the model fails on; ``str(e)`` is the message rasprun prints after ``error: ``."""


class InputError(RaspError):
    """An input the model cannot take (malformed, too long, a token outside its vocabulary)."""


def kind_name(a: Atom) -> str:
    """The atom's kind as the C tools name it: bool, int, float or string."""
    if isinstance(a, bool):
        return "bool"
    if isinstance(a, int):
        return "int"
    if isinstance(a, float):
        return "float"
    return "string"


def as_double(a: Atom) -> float:
    """``value_as_double``: the numeric value of a bool, int or float (0.0 for a string)."""
    return 0.0 if isinstance(a, str) else float(a)


def float_repr(f: float) -> str:
    """Python's repr of a float, which ir/value.c's float_repr reproduces."""
    return repr(float(f))


def format_atom(a: Atom) -> str:
    if isinstance(a, bool):
        return "True" if a else "False"
    if isinstance(a, int):
        return str(a)
    if isinstance(a, float):
        return float_repr(a)
    return '"' + a + '"'


def repl_atom(a: Atom) -> str:
    if isinstance(a, bool):
        return "T" if a else "F"
    if isinstance(a, float):
        # str(round(v, 3)) of the original REPL; floats of 1e16 and more are integers already
        return float_repr(round(a, 3) if abs(a) < 1e16 else a)
    if isinstance(a, int):
        return str(a)
    return a


def json_atom(a: Atom) -> str:
    if isinstance(a, bool):
        return "true" if a else "false"
    if isinstance(a, int):
        return str(a)
    if isinstance(a, float):
        return float_repr(a) if math.isfinite(a) else "null"
    out = []
    for ch in a:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def format_sequence(atoms: List[Atom], json: bool) -> str:
    """One output line of rasprun (without the newline): ``[a, b]`` REPL style or JSON."""
    return "[" + ", ".join(json_atom(a) if json else repl_atom(a) for a in atoms) + "]"


def decode_text(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def encode_text(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


def same_atom(a: Atom, b: Atom) -> bool:
    """Exact, typed equality (1, 1.0 and True differ; -0.0 differs from 0.0; NaN equals NaN)."""
    if kind_name(a) != kind_name(b):
        return False
    if isinstance(a, float):
        return math.copysign(1, a) == math.copysign(1, b) and (a == b or (math.isnan(a) and math.isnan(b)))
    return a == b


def vocab_equal(a: Atom, b: Atom) -> bool:
    """rasprun's token match: Python's ``==`` on atoms (1 == 1.0 == True; a string never equals
    a number), except that -0.0 is not 0.0 (the program can print the sign)."""
    if isinstance(a, str) != isinstance(b, str):
        return False
    if isinstance(a, float) and isinstance(b, float) and a == 0 and b == 0:
        return math.copysign(1, a) == math.copysign(1, b)
    return a == b


TOKEN_TYPES = ("tokens_str", "tokens_int", "tokens_float", "tokens_bool")


def convert_token(token_type: str, a: Atom) -> Atom:
    """An input atom converted as the program's token type requires (``ir_convert_token``)."""
    if token_type == "tokens_str" and isinstance(a, str):
        return a
    if token_type == "tokens_int" and not isinstance(a, (str, float)):
        return int(a)
    if token_type == "tokens_float" and not isinstance(a, str):
        return float(a)
    if token_type == "tokens_bool" and isinstance(a, bool):
        return a
    raise InputError("input token %s is not valid for %s" % (format_atom(a), token_type))


# ---- parsing inputs (ir/input.c on top of the RASP scanner and grammar) ----

_TOKEN = re.compile(
    r"""(?P<skip>[ \t\r\n\f\v]+|\#[^\n]*)
      | (?P<number>[0-9]+(?:\.[0-9]+)?[eE][+-]?[0-9]+|[0-9]+\.[0-9]+)
      | (?P<integer>[0-9]+)
      | (?P<string>"[^"\r\n]*")
      | (?P<unterminated>"[^"\r\n]*)
      | (?P<identifier>[a-zA-Z_][a-zA-Z_0-9]*)
      | (?P<op>==|!=|<=|>=|[-+*/%^=()\[\]{},:;<>])
      | (?P<other>.)""",
    re.VERBOSE | re.DOTALL,
)
_KEYWORDS = {"def", "for", "in", "return", "load", "if", "else", "and", "or", "not"}
_BINARY = {"+", "-", "*", "/", "%", "^", "==", "!=", "<", ">", "<=", ">=", "and", "or", "in", "if", "else"}

Token = Tuple[str, str]  # (kind as the parser names it, text)


def _scan(text: str) -> Tuple[List[Token], Optional[str]]:
    """The tokens of text and the first lexical error (the scanner goes on after one)."""
    tokens: List[Token] = []
    first_error: Optional[str] = None
    for m in _TOKEN.finditer(text):
        kind, t = m.lastgroup, m.group()
        error = None
        if kind == "skip":
            continue
        if kind == "number":
            tokens.append(("number", t))
        elif kind == "integer":
            if int(t) > INT64_MAX:
                error = "integer literal %s is too large (the maximum is %d)" % (t[:40], INT64_MAX)
            tokens.append(("integer", t if error is None else "0"))
        elif kind in ("string", "unterminated"):
            if kind == "unterminated":
                error = "unterminated string literal"
                t += '"'
            tokens.append(("string", t))
        elif kind == "identifier":
            tokens.append(("'%s'" % t if t in _KEYWORDS else "identifier", t))
        elif kind == "op":
            tokens.append(("'%s'" % t, t))
        else:
            c = encode_text(t)[0]  # the C scanner reports the first byte
            error = "unexpected character '%s'" % (t if 0x20 <= c < 0x7F else "\\x%02x" % c)
        if error and first_error is None:
            first_error = error
    return tokens, first_error


class _SyntaxError(Exception):
    pass


class _Parser:
    """The literal subset of the RASP expression grammar, with its syntax-error messages.

    An element is parsed as any operand/operator chain so that ``[a]`` or ``[1 + 2]`` parse
    (and are then refused as non-atoms, as the C tools do). The value of a node is the atom
    when the node is an atom literal, else ``None``."""

    def __init__(self, tokens: List[Token]):
        self.toks = tokens + [("end of file", "")]
        self.at = 0

    def peek(self) -> Token:
        return self.toks[self.at]

    def take(self) -> Token:
        t = self.toks[self.at]
        self.at += 1
        return t

    def fail(self, expecting: str) -> None:
        raise _SyntaxError("syntax error, unexpected %s, expecting %s" % (self.peek()[0], expecting))

    def starts_operand(self) -> bool:
        k, t = self.peek()
        return k in ("identifier", "integer", "number", "string", "'not'", "'('", "'['", "'-'", "'+'")

    # expr = unary (binop unary)*; the value is an atom only for a lone literal operand
    def expr(self) -> Tuple[str, object]:
        node = self.unary()
        while True:
            k, t = self.peek()
            if t in _BINARY and k != "string":
                self.take()
                self.unary()
                node = ("expr", None)
            elif k in ("'['", "'('"):
                self.postfix()
                node = ("expr", None)
            else:
                return node

    def unary(self) -> Tuple[str, object]:
        k, t = self.peek()
        if k in ("'-'", "'+'", "'not'"):
            self.take()
            inner = self.unary()
            if k != "'not'" and inner[0] == "literal" and type(inner[1]) in (int, float):
                return ("unary", -inner[1] if k == "'-'" else inner[1])
            return ("expr", None)
        if not self.starts_operand():
            self.fail("expression")
        return self.primary()

    def postfix(self) -> None:
        k, _ = self.take()
        if k == "'['":
            self.expr()
            if self.peek()[0] != "']'":
                self.fail("operator or ']'")
            self.take()
        else:
            self.items("')'", "operator, ')' or ','", allow_empty=True)

    def items(self, close: str, after_item: str, allow_empty: bool, first_after: Optional[str] = None) -> list:
        values = []
        if allow_empty and self.peek()[0] == close:
            self.take()
            return values
        while True:
            if not self.starts_operand():
                self.fail("expression or %s" % close if allow_empty and not values else "expression")
            values.append(self.expr())
            k = self.peek()[0]
            if k == close:
                self.take()
                return values
            if k != "','":
                self.fail(first_after if (first_after and len(values) == 1) else after_item)
            self.take()
            allow_empty = False

    def primary(self) -> Tuple[str, object]:
        k, t = self.take()
        if k == "integer":
            return ("literal", int(t))
        if k == "number":
            return ("literal", float(t))
        if k == "string":
            return ("literal", t[1:-1])
        if k == "identifier":
            return ("name", t)
        if k == "'('":
            inner = self.expr()
            if self.peek()[0] != "')'":
                self.fail("operator or ')'")
            self.take()
            return inner
        # '[': a list
        return ("list", self.items("']'", "operator, ',' or ']'", True, "operator, 'for', ',' or ']'"))


def _atom_of(node: Tuple[str, object]) -> Optional[Atom]:
    kind, v = node
    if kind in ("literal", "unary"):
        return v  # type: ignore[return-value]
    if kind == "name" and v in ("True", "False"):
        return v == "True"
    return None


def parse_input(text: str) -> List[Atom]:
    """One input as rasprun reads it: ``"hello"`` (its bytes), ``[1, -2.5, "a", True]`` or a bare
    word. Raises InputError with rasprun's message."""
    text = text.lstrip(" \t").rstrip(" \t\r\n")
    if not text:
        raise InputError('empty input (write "" for the empty sequence)')
    if text[0] not in '"[':
        return _characters(text)
    tokens, lex_error = _scan(text)
    parser = _Parser(tokens)
    try:
        node = parser.expr()
        if parser.peek()[0] != "end of file":
            parser.fail("operator or end of file")
        why = lex_error
    except _SyntaxError as e:
        why = lex_error if lex_error and _lex_error_first(text, tokens, parser.at) else str(e)
        node = None
    if why is not None:
        short = encode_text(text)[:60]
        raise InputError("bad input %s: %s" % (decode_text(short), why))
    assert node is not None
    if node[0] == "literal" and isinstance(node[1], str):
        return _characters(node[1])
    if node[0] != "list":
        raise InputError('bad input: expected a string "..." or a list [...] of atoms')
    atoms: List[Atom] = []
    for i, item in enumerate(node[1]):  # type: ignore[arg-type]
        a = _atom_of(item)
        if a is None:
            raise InputError("bad input: element %d of the list is not an atom literal "
                             "(a number, a string, True or False)" % (i + 1))
        atoms.append(a)
    return atoms


def _lex_error_first(text: str, tokens: List[Token], failed_at: int) -> bool:
    """Whether the first lexical error comes before the token the parser failed on (the scanner
    records an error when it reaches it; the parser stops at its failing token)."""
    seen = 0
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "skip":
            continue
        if kind in ("unterminated", "other") or (kind == "integer" and int(m.group()) > INT64_MAX):
            return True
        seen += 1
        if seen > failed_at:
            return False
    return True


def _characters(s: str) -> List[Atom]:
    return [decode_text(bytes([b])) for b in encode_text(s)]
