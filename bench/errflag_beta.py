#!/usr/bin/env python3
"""Where softmax attention at inverse temperature beta keeps the error flag right.

usage: python3 bench/errflag_beta.py BINDIR        (not part of make check: a few minutes)

Compiles with raspcc --error-flag the rasp_examples at max_len 8 and the programs of
tests/errflag/ (programs that raise), runs each in NumPy (raspcc.machine) on about 150 inputs
(every input up to a length, then random ones) with hard attention (the runtime's outcome: does
the input raise?) and with softmax at beta = 10^(k/2), 1 <= beta <= 1e20, then 1e30, 1e100 and
1e300, in the torch module's formulation exp(beta (S - max S)). At each beta an input agrees when
its flag (err != 0 at some position) says what the hard run says; "reading >= 0.5" when err >= 0.5
at some position does. Prints per program the smallest and largest beta of the grid between
which every beta agrees on every input (the interval that holds the default, 746 / tau per head:
raspcc.beta.exact_beta), for both readings.
"""

import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402

import raspcc  # noqa: E402
from raspcc import machine  # noqa: E402
from raspcc.atoms import RaspError  # noqa: E402

GRID = [10 ** (k / 2) for k in range(0, 41)] + [1e30, 1e100, 1e300]
EXAMPLES = [("reverse", "abc"), ("hist", "abc"), ("double_hist", "abc"), ("sort", "0..4"), ("sort_freq", "abc"),
            ("dyck1", "()"), ("dyck2", "(){}"), ("dyck3", "(){}[]")]


def inputs_for(model, rng):
    vocab, out = model.vocab, []
    if model.numeric_tokens:
        lo, hi = model.numeric_tokens["lo"], model.numeric_tokens["hi"]
        grid = [lo + (hi - lo) * j / 16 for j in range(17)]
        for _ in range(150):
            n = rng.randint(1, model.max_len)
            out.append([rng.choice(grid) + rng.choice([0, 5e-7, -5e-7, 0.01]) if rng.random() < 0.5 else
                        rng.uniform(lo, hi) for _ in range(n)])
        return [[min(hi, max(lo, x)) for x in t] for t in out]
    n = 1
    while len(out) + len(vocab) ** n <= 60 and n <= model.max_len:
        out += [[vocab[(c // len(vocab) ** i) % len(vocab)] for i in range(n)] for c in range(len(vocab) ** n)]
        n += 1
    while len(out) < 150:
        out.append([rng.choice(vocab) for _ in range(rng.randint(1, model.max_len))])
    return out


def raised(model, tokens):
    try:
        machine.run(model, tokens)
        return False
    except RaspError:
        return True


def flag(model, tokens, beta):
    ids, values = model.encode(tokens)
    with np.errstate(all="ignore"):
        X = machine.forward(model, ids, values, beta)[-1]
    return X[1 : len(tokens) + 1, model.error_flag_dim]


def interval(ok):
    """The run of True around the default (the grid's longest run of True), as (lo, hi) betas."""
    best, start = (None, None, 0), None
    for i, good in enumerate(ok + [False]):
        if good and start is None:
            start = i
        if not good and start is not None:
            if i - start > best[2]:
                best = (GRID[start], GRID[i - 1], i - start)
            start = None
    return best[0], best[1]


def main():
    bindir = sys.argv[1] if len(sys.argv) > 1 else "bin"
    jobs = [(name, os.path.join(ROOT, "rasp_examples", name + ".rasp"), ["--vocab", vocab, "--max-len", "8"])
            for name, vocab in EXAMPLES]
    for f in sorted(os.listdir(os.path.join(ROOT, "tests", "errflag"))):
        if f.endswith(".rasp"):
            path = os.path.join(ROOT, "tests", "errflag", f)
            jobs.append((f[:-5], path, open(path).readline().lstrip("#").split("(")[0].split()))
    rng = random.Random(1)
    print("| program | inputs (raise) | any err != 0: beta from | to | err >= 0.5: from | to |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, flags in jobs:
            model_path = os.path.join(tmp, "m.bin")
            subprocess.run([os.path.join(bindir, "raspcc"), path, "-o", model_path, "--error-flag"] + flags, check=True,
                           capture_output=True)
            model = raspcc.load(model_path)
            inputs = inputs_for(model, rng)
            hard = [raised(model, t) for t in inputs]
            exact_ok, half_ok = [], []
            for beta in GRID:
                flags_at = [flag(model, t, beta) for t in inputs]
                exact_ok.append(all(bool(np.any(f != 0)) == h for f, h in zip(flags_at, hard)))
                half_ok.append(all(bool(np.any(f >= 0.5)) == h for f, h in zip(flags_at, hard)))
            (a, b), (c, d) = interval(exact_ok), interval(half_ok)
            print("| %s | %d (%d) | %.3g | %.3g | %.3g | %.3g |" % (name, len(inputs), sum(hard), a or 0, b or 0, c or 0, d or 0))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
