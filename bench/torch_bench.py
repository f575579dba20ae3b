#!/usr/bin/env python3
"""Sequences per second: rasprun against the torch module (raspcc.to_torch) on the CPU.

usage: python3 bench/torch_bench.py BINDIR      (bench/torch.sh runs it in `make bench`)

For reverse, hist, sort, sort_freq and dyck2 of rasp_examples/ at max lengths 8, 64 and 256
(BENCH_ONLY="reverse:8 sort:64" picks some), compiled with their header's vocabulary:
  - rasprun M.bin --bench K: one sequence of the maximum length per forward pass, sparse weight
    plans (rasprun's default) and plain dense products; sequences/s = 1e6 / (us per pass);
  - the torch module (float64, softmax at the default beta, torch.no_grad) on random inputs of
    the maximum length, batches of 1 and 64: sequences/s = batch * passes / seconds.
Both time the forward pass alone (no tokenizing, checks or decoding), on one thread
(OPENBLAS_NUM_THREADS=1, torch.set_num_threads(1)); each figure is the best of 3 rounds of at
least BENCH_MIN_S seconds (0.2) each, after a warm-up pass (on a shared machine interference
only slows a round down). Prints a Markdown table.
"""

import os
import random
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402

import raspcc  # noqa: E402
from raspcc.torch_model import encode  # noqa: E402

MIN_S = float(os.environ.get("BENCH_MIN_S", "0.2"))
ONLY = set(os.environ.get("BENCH_ONLY", "").split())
PROGRAMS = ["reverse", "hist", "sort", "sort_freq", "dyck2"]
LENGTHS = [8, 64, 256]


def header_field(path, key):
    m = re.search(r"[# ]%s: *(\S+)" % key, open(path).readline())
    return m.group(1) if m else None


ROUNDS = 3  # the best of this many rounds: the machine is shared, so interference only slows


def timed(fn, min_s=MIN_S):
    """Calls per second of fn: the best of ROUNDS rounds of at least min_s seconds each, after
    one warm-up call."""
    fn()
    best = 0.0
    for _ in range(ROUNDS):
        calls, t0 = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            dt = time.perf_counter() - t0
            if dt >= min_s:
                break
        best = max(best, calls / dt)
    return best


def rasprun_rates(bindir, model):
    """(sparse, dense) sequences/s from rasprun --bench, K calibrated to take MIN_S."""
    def bench(k):
        out = subprocess.run([os.path.join(bindir, "rasprun"), model, "--bench", str(k)], capture_output=True,
                             text=True, check=True).stdout
        m = re.search(r"dense ([\d.]+) us/run, sparse ([\d.]+) us/run", out)
        return float(m.group(2)), float(m.group(1))
    sparse_us, _ = bench(1)
    k = max(1, int(MIN_S * 1e6 / max(sparse_us, 1e-3)))
    runs = [bench(k) for _ in range(ROUNDS)]
    return 1e6 / min(r[0] for r in runs), 1e6 / min(r[1] for r in runs)


def torch_rate(net, model, batch, rng):
    vocab = model.vocab
    inputs = [[rng.choice(vocab) for _ in range(model.max_len)] for _ in range(batch)]
    ids, lengths, values = encode(model, inputs)
    with torch.no_grad():
        return batch * timed(lambda: net(ids, lengths, values))


def main():
    bindir = sys.argv[1] if len(sys.argv) > 1 else "bin"
    torch.set_num_threads(1)
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    rng = random.Random(1)
    print("| program | max len | D | layers | rasprun sparse | rasprun dense | torch batch 1 | torch batch 64 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for prog in PROGRAMS:
            src = os.path.join(ROOT, "rasp_examples", prog + ".rasp")
            for n in LENGTHS:
                if ONLY and "%s:%d" % (prog, n) not in ONLY:
                    continue
                path = os.path.join(tmp, "%s_%d.bin" % (prog, n))
                c = subprocess.run([os.path.join(bindir, "raspcc"), src, "-o", path, "--vocab",
                                    header_field(src, "vocab"), "--max-len", str(n)], capture_output=True, text=True)
                if c.returncode != 0:
                    print("| %s | %d | refused: %s |||||" % (prog, n, (c.stderr.strip().splitlines() or ["?"])[-1][:80]))
                    continue
                model = raspcc.load(path, verify_checksum=False)
                sparse, dense = rasprun_rates(bindir, path)
                net = raspcc.to_torch(model)
                b1, b64 = torch_rate(net, model, 1, rng), torch_rate(net, model, 64, rng)
                rates = " | ".join("%.0f" % r if r >= 100 else "%.3g" % r for r in (sparse, dense, b1, b64))
                print("| %s | %d | %d | %d | %s |" % (prog, n, model.d_model, len(model.layers), rates), flush=True)
    print("\nsequences/s of the maximum length, forward pass only, one CPU thread (torch %s, float64)"
          % torch.__version__)


if __name__ == "__main__":
    main()
