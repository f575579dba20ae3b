#!/usr/bin/env python3
"""Where softmax attention at inverse temperature beta reproduces the model's hard attention.

usage: python3 bench/softmax_beta.py BINDIR        (not part of make check: a few minutes)

Compiles the rasp_examples at max lengths 8 and 64, programs that raise, real-valued and gated
programs, and runs each in NumPy (raspcc.machine) on its inputs (every input up to a length and
random ones, about 100) with hard attention and with softmax at beta = 10^(k/4), in two
formulations: exp(beta (S - max S)) (raspcc's torch module) and exp(beta S - max(beta S)) (the
order of softmax(beta * S) in the frameworks). An input agrees when the decoded output (atoms
and kinds, or the error message) is the same; real-valued outputs must agree to the bit.
Prints per program the smallest tie tolerance tau; over the inputs, the smallest gap between
a head's maximum and a key it does not average and the largest spread among the keys it
averages (raspcc.beta.score_spread), and the window they predict, ln((max_len + 1) / 1e-6) /
gap .. 1e-6 / spread (1e-6: the one-hot tolerance); raspcc.beta's bounds (within 1e-12:
ln(max_len / 1e-12) / tau; exact: 746 / tau); the smallest beta of the grid from which every
larger beta agrees up to the largest that does (by bisection on the grid, checked every ten
decades), and what fails above it.
"""

import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import numpy as np  # noqa: E402

import raspcc  # noqa: E402
from raspcc import machine  # noqa: E402
from raspcc.atoms import RaspError, format_sequence, parse_input  # noqa: E402
from raspcc.beta import score_spread  # noqa: E402
from python_diff import RAISING, REAL, header_field, make_inputs, vocab_atoms  # noqa: E402

GRID = [10 ** (k / 4) for k in range(0, 4 * 308 + 1)] + [1.7e308]


def outcome(model, tokens, beta, scaled):
    try:
        with np.errstate(all="ignore"):
            ids, values = model.encode(tokens)
            return format_sequence(machine.finish(model, machine.forward(model, ids, values, beta, scaled),
                                                  len(tokens)), True)
    except RaspError as e:
        return "error: %s" % e


def agreeing_range(model, inputs, scaled, start):
    """(lowest beta of the grid from which all agree, highest that agrees, what fails above it),
    by bisection from GRID[start] on either side, then checked on every tenth decade of the grid
    (an agreement that is not one interval is reported)."""
    want = [outcome(model, t, None, False) for t in inputs]
    memo = {}

    def ok(i):
        if i not in memo:
            memo[i] = all(outcome(model, t, GRID[i], scaled) == w for t, w in zip(inputs, want))
        return memo[i]

    coarse = list(range(0, len(GRID), 40)) + [len(GRID) - 1]
    good = start if ok(start) else next((i for i in coarse if ok(i)), None)
    if good is None:
        return None, None, "never"
    lo, hi = 0, good  # ok(hi); find the first ok index at or above lo
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    first = lo
    lo, hi = good, len(GRID) - 1
    if ok(hi):
        lo = hi
    while lo < hi:  # ok(lo); find the last ok index
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    last = lo
    gaps = [i for i in coarse if ok(i) != (first <= i <= last)]
    above = "-"
    if last + 1 < len(GRID):
        b = GRID[last + 1]
        bad = [(w, outcome(model, t, b, scaled)) for t, w in zip(inputs, want)]
        bad = [x for x in bad if x[0] != x[1]]
        above = "at %.3g: %d/%d inputs differ (%s)" % (b, len(bad), len(inputs), bad[0][1][:70])
    if gaps:
        above += "; NOT AN INTERVAL at beta %s" % ", ".join("%.3g" % GRID[i] for i in gaps[:3])
    return GRID[first], GRID[last], above


def cases(tmp, bindir):
    for prog in ("reverse", "hist", "double_hist", "sort", "sort_freq", "dyck1", "dyck2", "dyck3"):
        src = os.path.join(ROOT, "rasp_examples", prog + ".rasp")
        kind = "int" if header_field(src, "tokens") == "int" else "str"
        for n in (8, 64):
            yield "%s:%d" % (prog, n), src, header_field(src, "output"), ["--vocab", header_field(src, "vocab"),
                                                                          "--max-len", str(n)], kind
    for name, src, out, flags, kind in RAISING + REAL:
        yield name, src, out, flags, kind


def main():
    bindir = sys.argv[1] if len(sys.argv) > 1 else "bin"
    print("| program | min tau | min gap | max spread | predicted window | beta within 1e-12 | beta exact "
          "| agrees: exp(beta (S - max)) | agrees: softmax(beta S) | above the range (softmax(beta S)) |")
    print("|---|---:|---:|---:|---|---:|---:|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, src, out, flags, kind in cases(tmp, bindir):
            if not os.path.exists(src):
                path = os.path.join(tmp, "p.rasp")
                open(path, "w").write(src + "\n")
                src = path
            model_path = os.path.join(tmp, "m.bin")
            c = subprocess.run([os.path.join(bindir, "raspcc"), src, "--output", out, "-o", model_path] + flags,
                               capture_output=True, text=True)
            if c.returncode:
                print("| %s | refused |" % name)
                continue
            model = raspcc.load(model_path, verify_checksum=False)
            if kind == "float":
                lo, hi = flags[flags.index("--range") + 1].split("..")
                vocab = (float(lo), float(hi))
            else:
                vocab = vocab_atoms(flags[flags.index("--vocab") + 1])
            lines = make_inputs(kind, vocab, model.max_len, budget=60, randoms=40)
            inputs = []
            for line in lines:
                try:
                    t = parse_input(line)
                    model.encode(t)
                    inputs.append(t)
                except RaspError:
                    pass
            taus = [h["tie_tol"] for layer in model.layers for h in layer["heads"]]
            tau = min(taus) if taus else math.inf
            within = max((b for layer in raspcc.sufficient_beta(model) for b in layer), default=0)
            exact = max((b for layer in raspcc.exact_beta(model) for b in layer), default=0)
            start = min(range(len(GRID)), key=lambda i: abs(math.log(GRID[i]) - math.log(max(exact, 1))))
            gap, spread = math.inf, 0.0
            for t in inputs:
                for layer in score_spread(model, *model.encode(t)):
                    for sp, g in layer:
                        gap, spread = min(gap, g), max(spread, sp)
            window = "%.3g .. %s" % (math.log((model.max_len + 1) / 1e-6) / gap if gap < math.inf else 0,
                                     "%.3g" % (1e-6 / spread) if spread > 0 else "inf")
            r1 = agreeing_range(model, inputs, False, start)
            r2 = agreeing_range(model, inputs, True, start)
            fmt = lambda r: "never" if r[0] is None else "%.3g .. %.3g" % (r[0], r[1])  # noqa: E731
            print("| %s | %g | %.3g | %.3g | %s | %.3g | %.3g | %s | %s | %s |"
                  % (name, tau, gap, spread, window, within, exact, fmt(r1), fmt(r2), r2[2]), flush=True)
    print("\nbeta grid 10^(k/4), k = 0 .. 1232, and 1.7e308; %s" % "inputs per program: every input up to a "
          "length (at most 60) and 40 random ones, those the model takes")


if __name__ == "__main__":
    main()
