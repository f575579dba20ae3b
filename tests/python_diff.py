#!/usr/bin/env python3
"""examples/python/run_numpy.py and run_torch.py against rasprun (tests/python.sh runs this).

usage: python3 tests/python_diff.py BINDIR [--corpus DIR] [--quick]

Compiles each case (rasp_examples/*.rasp with the vocabularies tests/golden.sh uses, small
programs that raise, real-valued programs with --range and --mlp gated, the corpus programs
tests/corpus.sh compiles when DIR holds them), makes inputs (golden inputs, every input up to
a length, random ones, and inputs the model refuses: too long, a token outside the vocabulary
or the range, malformed literals), and runs rasprun, run_numpy.py and run_torch.py on them with
and without --json. Their standard output and exit status must be identical, byte for byte,
with one stated exception: real-valued outputs printed with --json (all 17 digits) may differ
from rasprun's in the last digits, since rasprun sums each product element as one fused
multiply-add chain over the weight column's stored entries (runtime/kernels.h), which NumPy and
PyTorch (their BLAS, rounding each product apart) do not reproduce; there each such number
must lie within 1e-12 (relative) of rasprun's, and everything else on the line must be
identical. Also: inputs given on the command line, and a corrupted model file (exit 2 for all three). Cases run on PYTHON_TEST_JOBS threads (2). One line
per failure; "python: N passed, M failed".
"""

import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = {"numpy": os.path.join(ROOT, "examples/python/run_numpy.py"),
           "torch": os.path.join(ROOT, "examples/python/run_torch.py")}

# (name, source or rasp_examples file, output, raspcc flags, token kind)
RAISING = [
    ("dict_miss", 'd = {"a": 1, "b": 2}; r = d[tokens];', "r", ["--vocab", "abc", "--max-len", "4"], "str"),
    ("div_zero", "r = 1 / (indices - 1);", "r", ["--vocab", "ab", "--max-len", "4"], "str"),
    ("average_strings", "r = aggregate(select(indices, 0, >=), tokens);", "r", ["--vocab", "ab", "--max-len", "4"], "str"),
    ("mixed_kinds", 'r = 1 if tokens == "a" else "z";', "r", ["--vocab", "ab", "--max-len", "4"], "str"),
    ("mixed_positions", "r = aggregate(select(indices, length - indices, ==), tokens);", "r",
     ["--vocab", "ab", "--max-len", "4"], "str"),
    ("several_keys", 'r = aggregate(select(tokens, "a", ==) or select(indices, indices, ==), tokens, "-");', "r",
     ["--vocab", "ab", "--max-len", "4"], "str"),
    ("bool_output", 'r = tokens == "a" and indices > 0;', "r", ["--vocab", "ab", "--max-len", "5"], "str"),
    ("kinds_shared", 'r = "q" if indices else (0.0 if tokens == "a" else 0);', "r", ["--vocab", "ab", "--max-len", "3"],
     "str"),
    ("negative_zero", "tokens = tokens_int; r = 0.0 * tokens;", "r", ["--vocab", "-1,5,7", "--max-len", "3"], "int"),
    ("signed_zero_tokens", "tokens = tokens_float; r = aggregate(select(indices, length - 1 - indices, ==), tokens);", "r",
     ["--vocab", "[0.0, -0.0, 1.5]", "--max-len", "3"], "list"),
    ("per_length", "tokens = tokens_int; r = (length / 7) * aggregate(select(indices, indices, <=), tokens);", "r",
     ["--vocab", "0..3", "--max-len", "5"], "int"),
]
REAL = [
    ("real_softmax", "tokens = tokens_float; e = 2.718 ^ tokens; r = e / aggregate(select(indices, indices, <=), e);",
     "r", ["--range", "-3..3", "--max-len", "6"], "float"),
    ("real_round", "tokens = tokens_float; r = round(tokens * 2) + (tokens > 1);", "r",
     ["--range", "-3..3", "--max-len", "6"], "float"),
    ("real_margin", "tokens = tokens_float; r = 0 if tokens < 0 else tokens;", "r",
     ["--range", "-1..1", "--max-len", "6", "--margin", "0.01"], "float"),
    ("gated_product", "tokens = tokens_float; r = tokens * aggregate(select(indices, 0, ==), tokens);", "r",
     ["--range", "-3..3", "--max-len", "6", "--mlp", "gated"], "float"),
    ("gated_roots", "tokens = tokens_float; r = (tokens + 4) ^ 0.5 - 1 / (tokens + 4);", "r",
     ["--range", "-3..3", "--max-len", "6", "--mlp", "gated"], "float"),
]
# tests/corpus.sh's list: (file, call or output, kind, vocab or range, lengths)
CORPUS = ["Transpose()", "Transpose_3dot()", "Matmul_3dot4()", "MaxMinSort()", "Match2(19)", "Cofactor()",
          "Transpose_3dot_2h()", "hist_bos", "hist_nobos", "reverse", "sort_bos", "hist2_bos", "sort_by_most_freq",
          "dyck1_ptf", "dyck2_ptf", "dyck3_ptf"]


def header_field(path, key):
    m = re.search(r"[# ]%s: *(\S+)" % key, open(path).readline())
    return m.group(1) if m else None


def vocab_atoms(vocab):
    if ".." in vocab and len(vocab) > 2 and "," not in vocab:
        lo, hi = vocab.split("..", 1)
        return list(range(int(lo), int(hi) + 1))
    if vocab.startswith("["):  # a JSON list (-0.0 and 0.0 are two tokens)
        return json.loads(vocab)
    if "," in vocab:
        return [int(v) if re.fullmatch(r"-?\d+", v) else v for v in vocab.split(",")]
    return list(vocab)


def literal(tokens, kind):
    if kind == "str" and all(isinstance(t, str) and len(t) == 1 and t not in '"' for t in tokens):
        return json.dumps("".join(tokens))
    if kind == "float":
        return "[" + ", ".join("%.3f" % t for t in tokens) + "]"
    return "[" + ", ".join(json.dumps(t) for t in tokens) + "]"


def make_inputs(kind, vocab, max_len, golden=None, budget=150, randoms=40, seed=1):
    """Golden lines, every input up to the length the budget allows, random ones, refusals."""
    rng = random.Random(seed)
    lines = list(golden or [])
    if kind == "float":
        lo, hi = vocab
        for k in range(budget):
            n = 1 + k % max_len
            lines.append(literal([round(rng.uniform(lo, hi), 3) for _ in range(n)], kind))
        lines += [literal([hi + 0.5], kind), literal([lo] * (max_len + 1), kind), "[1, 2]", "[True]", '["a"]',
                  literal([hi + 0.5, lo], kind)[:-1] + ', "a"]', literal([lo] * max_len, kind)[:-1] + ', "a"]']
    else:
        length, total = 0, 0
        while length < max_len and total + len(vocab) ** (length + 1) <= budget:
            length += 1
            total += len(vocab) ** length
        frontier = [[]]
        for _ in range(length):
            frontier = [f + [v] for f in frontier for v in vocab]
            lines += [literal(f, kind) for f in frontier]
        for _ in range(randoms):
            lines.append(literal([rng.choice(vocab) for _ in range(rng.randint(1, max_len))], kind))
        lines += [literal([vocab[0]] * (max_len + 1), kind), '["not-a-token"]', "[1.5]", "[True, 2]",
                  '["not-a-token", 1.5]', "[1.5, " + ", ".join([json.dumps(vocab[0])] * max_len) + "]"]  # two refusals
    lines += ['""', "[1,", '"ab', "[a]", "[1] 2", "  [ ]  "]
    return lines


def run(cmd):
    p = subprocess.run(cmd, capture_output=True)
    return p.returncode, p.stdout, p.stderr


NUMBER = re.compile(rb"-?\d+\.\d+(?:e[-+]\d+)?|-?\d+e[-+]\d+")


def close_enough(want: bytes, got: bytes) -> bool:
    """Identical but for floats within 1e-12 (relative) of each other."""
    w, g = NUMBER.split(want), NUMBER.split(got)
    wn, gn = NUMBER.findall(want), NUMBER.findall(got)
    if w != g or len(wn) != len(gn):
        return False
    return all(abs(float(a) - float(b)) <= 1e-12 * max(1.0, abs(float(a))) for a, b in zip(wn, gn))


class Diff:
    """Runs cases and counts; cases may run on several threads (each in its own files)."""

    def __init__(self, python, bindir, tmp):
        self.python, self.bindir, self.tmp = python, bindir, tmp
        self.passed = self.failed = 0
        self.lock = threading.Lock()

    def ok(self):
        with self.lock:
            self.passed += 1

    def fail(self, msg):
        with self.lock:
            self.failed += 1
            print("FAIL " + msg, flush=True)

    def compile(self, name, source, output, flags):
        prog = os.path.join(self.tmp, name + ".rasp")
        if not os.path.exists(source):
            open(prog, "w").write(source + "\n")
            source = prog
        model = os.path.join(self.tmp, name + ".bin")
        code, _, err = run([os.path.join(self.bindir, "raspcc"), source, "--output", output, "-o", model] + flags)
        if code != 0:
            self.fail("%s: raspcc %s: exit %d: %s" % (name, " ".join(flags), code, err.decode()[-200:].strip()))
            return None
        return model

    def compare(self, name, model, lines, real_valued, modes=([], ["--json"])):
        path = os.path.join(self.tmp, name + ".in")
        open(path, "w").write("\n".join(lines) + "\n")
        for json_flag in modes:
            want = run([os.path.join(self.bindir, "rasprun"), model] + json_flag + ["--inputs", path])
            for backend, script in SCRIPTS.items():
                got = run([self.python, script, model] + json_flag + ["--inputs", path])
                what = "%s %s%s" % (name, backend, " --json" if json_flag else "")
                if got[0] != want[0]:
                    self.fail("%s: exit %d, rasprun %d: %s" % (what, got[0], want[0], got[2].decode()[-300:]))
                    continue
                wl, gl = want[1].split(b"\n"), got[1].split(b"\n")
                tolerant = json_flag and real_valued
                bad = [i for i, (a, b) in enumerate(zip(wl, gl)) if a != b and not (tolerant and close_enough(a, b))]
                if len(wl) != len(gl) or bad:
                    i = bad[0] if bad else min(len(wl), len(gl)) - 1
                    self.fail("%s: input %r: rasprun %r, got %r" % (what, lines[i] if i < len(lines) else "?",
                                                                    wl[i][:160] if i < len(wl) else b"",
                                                                    gl[i][:160] if i < len(gl) else b""))
                else:
                    self.ok()

    def case(self, name, source, output, flags, kind, golden=None, max_len=None, quick=False):
        model = self.compile(name, source, output, flags)
        if model is None:
            return None
        if kind == "float":
            lo, hi = flags[flags.index("--range") + 1].split("..")
            vocab = (float(lo), float(hi))
        else:
            vocab = vocab_atoms(flags[flags.index("--vocab") + 1])
        max_len = max_len or int(flags[flags.index("--max-len") + 1])
        lines = make_inputs(kind, vocab, max_len, golden, budget=40 if quick else 150, randoms=10 if quick else 40)
        self.compare(name, model, lines, kind == "float", [["--json"]] if quick else [[], ["--json"]])
        return model


def main():
    args = sys.argv[1:]
    bindir = args[0]
    corpus = args[args.index("--corpus") + 1] if "--corpus" in args else None
    python = os.environ.get("PYTHON", sys.executable)
    jobs = int(os.environ.get("PYTHON_TEST_JOBS", "2"))
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(jobs) as pool:
        d = Diff(python, bindir, tmp)
        cases = []  # (name, source, output, flags, kind, golden)
        for f in sorted(os.listdir(os.path.join(ROOT, "rasp_examples"))):
            if not f.endswith(".rasp"):  # simulator/ and the like: their own tests
                continue
            name = f[:-5]
            prog = os.path.join(ROOT, "rasp_examples", f)
            vocab = header_field(prog, "vocab")
            kind = "int" if header_field(prog, "tokens") == "int" else "str"
            golden_in = os.path.join(ROOT, "tests/golden", name + ".in")
            golden = [l.strip() for l in open(golden_in) if l.strip()] if os.path.exists(golden_in) else []
            max_len = max([int(header_field(prog, "max-len") or 8)] +
                          [len(json.loads(l)) if l[0] in '"[' else len(l) for l in golden])
            cases.append((name, prog, header_field(prog, "output"), ["--vocab", vocab, "--max-len", str(max_len)],
                          kind, golden))
        cases += [c + (None,) for c in RAISING + REAL]
        models = list(pool.map(lambda c: d.case(*c), cases))
        if corpus and os.path.exists(os.path.join(corpus, "tma.tsv")):
            list(pool.map(lambda c: d.case(*c, quick=True), corpus_cases(corpus)))
        model = models[len(models) - len(RAISING + REAL) - 1]  # the last example
        if model:  # inputs on the command line, and a file the loader must refuse
            want = run([os.path.join(bindir, "rasprun"), model, "--json", "[1, 2]", "abc", "[1,"])
            raw = bytearray(open(model, "rb").read())
            raw[-1] ^= 1
            bad = os.path.join(tmp, "corrupt.bin")
            open(bad, "wb").write(bytes(raw))
            for backend, script in SCRIPTS.items():
                got = run([python, script, model, "--json", "[1, 2]", "abc", "[1,"])
                if got[:2] == want[:2]:
                    d.ok()
                else:
                    d.fail("%s: inputs on the command line: %r vs rasprun %r" % (backend, got[:2], want[:2]))
                code, _, err = run([python, script, bad, "x"])
                rcode, _, rerr = run([os.path.join(bindir, "rasprun"), bad, "x"])
                if code == rcode == 2 and err.split(b": ", 1)[1] == rerr.split(b": ", 1)[1]:
                    d.ok()
                else:
                    d.fail("%s: corrupted model: exit %d %r vs rasprun %d %r" % (backend, code, err, rcode, rerr))
        print("python: %d passed, %d failed" % (d.passed, d.failed))
        return 1 if d.failed else 0


def corpus_cases(corpus):
    """The corpus entries tests/corpus.sh compiles (and Ulib's, which compile too), at their
    largest listed length, on fewer inputs, with --json only (REPL printing is tested above)."""
    for table in ("tma", "rasp"):
        for line in open(os.path.join(corpus, table + ".tsv")):
            if line.startswith("#") or not line.strip():
                continue
            f, call, kind, rng, lengths = line.rstrip("\n").split("\t")
            if call not in CORPUS:
                continue
            src = open(os.path.join(corpus, table, f)).read() + "\nout = %s;\n" % call
            max_len = max(int(x) for x in lengths.split(","))
            flags = ["--max-len", str(max_len)] + (["--range", rng] if kind == "float" else ["--vocab", rng])
            name = re.sub(r"\W+", "_", "corpus_%s_%s" % (os.path.splitext(os.path.basename(f))[0], call)).strip("_")
            yield name, src, "out", flags, kind, None


if __name__ == "__main__":
    sys.exit(main())
