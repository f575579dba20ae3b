#!/usr/bin/env python3
"""The corpus table of docs/benchmarks.md: every entry of ../shared/corpus/{tma,rasp}.tsv compiled
and verified by ../shared/corpus/check.py, beside the layers and heads its paper gives.
usage: bench/corpus_table.py [--bin DIR] [--random K]   (run from the project root)
Prints a Markdown table; an entry that does not compile says why."""
import argparse, os, re, subprocess, sys

# The papers' own figures: heads per layer for the simulator paper's constructions (its figures
# and text), layers for the RASP paper's analysis (issue tracker #9 quotes them).
PAPER = {
    "mattranspose.rasp:Transpose()": "[1, 1]",
    "mattranspose.rasp:Transpose_3dot()": "[1, 1]",
    "matmultiplication.rasp:Matmul_3dot4()": "[1, 6, 9] (3x3)",
    "MaxMin.rasp:MaxMinSort()": "[5, 2]",
    "match2.rasp:Match2(19)": "[1]",
    "matinverse.rasp:Invert3x3()": "[1, 4, 1, 1, 1]",
    "activations.rasp:softmax()": "[1, 3]",
    "paper_examples.rasp:hist_bos": "1 layer",
    "paper_examples.rasp:hist_nobos": "1 layer",
    "paper_examples.rasp:reverse": "2 layers",
    "paper_examples.rasp:sort_bos": "2 layers",
    "paper_examples.rasp:hist2_bos": "2 layers",
    "paper_examples.rasp:sort_by_most_freq": "3 layers",
    "paper_examples.rasp:dyck1_ptf": "2 layers",
    "paper_examples.rasp:dyck2_ptf": "4 layers",
    "paper_examples.rasp:dyck3_ptf": "4 layers",
    "long_addition.rasp:longsum": "5 layers",
    "rover.rasp:res": "16 layers",
}

ap = argparse.ArgumentParser()
ap.add_argument("--bin", default="bin")
ap.add_argument("--random", type=int, default=500)
a = ap.parse_args()
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "corpus")
check = os.path.join(here, "check.py")
if not os.path.exists(check):
    print("(../shared/corpus not present)")
    sys.exit(0)
lens = {}
for corpus in ("tma", "rasp"):
    for line in open(os.path.join(here, corpus + ".tsv")):
        if line.startswith("#") or not line.strip():
            continue
        f, call, kind, rng, lengths = line.rstrip("\n").split("\t")
        lens["%s:%s" % (f, call)] = (max(int(x) for x in lengths.split(",")), kind, rng)
out = subprocess.run([sys.executable, check, "--bin", a.bin, "--random", str(a.random)], capture_output=True,
                     text=True).stdout
print("| program | tokens | max-len | paper | layers | heads | MLP hidden | non-zero | file | verify --random %d |" % a.random)
print("|---|---|---|---|---|---|---|---|---|---|")
for line in out.splitlines():
    m = re.match(r"(\S+)\s+(\S+)\s+(.*)$", line)
    if not m or m.group(1) not in ("ok", "MISMATCH", "REFUSED", "ERROR"):
        continue
    status, name, rest = m.groups()
    n, kind, rng = lens.get(name, ("?", "?", "?"))
    paper = PAPER.get(name, "")
    if status == "ok":
        v = re.search(r"verify: (\d+) inputs, (\d+) mismatches", rest)
        get = lambda k: (re.search(k + r"=(\[[^\]]*\]|\S+)", rest) or [None, "?"])[1].rstrip(";")
        size = re.search(r"file ([\d.]+) MB", rest)
        # "ok" is rasprun --verify's exit status 0: no mismatch (check.py keeps the line's tail only)
        err = re.search(r"largest error (\S+) \(bound ([^)]*)\)", rest)
        print("| %s | %s %s | %s | %s | %s | %s | %s | %s | %s MB | %s mismatches%s |" % (
            name, kind, rng, n, paper, get("layers"), get("heads"), get("mlp_hidden"), get("nonzero_params"),
            size.group(1) if size else "?", v.group(2) if v else "0",
            (", largest error %s (bound %s)" % err.groups()).replace("|", "\\|") if err else ""))
    else:
        why = rest.split("error: ")[-1][:90].replace("|", "/")
        print("| %s | %s %s | %s | %s | %s: %s | | | | | |" % (name, kind, rng, n, paper, status.lower(), why))
