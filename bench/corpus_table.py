#!/usr/bin/env python3
"""The corpus table of docs/benchmarks.md: every entry of ../shared/corpus/{tma,rasp}.tsv compiled
and verified by ../shared/corpus/check.py, beside the layers and heads its paper gives.
usage: bench/corpus_table.py [--bin DIR] [--random K]   (run from the project root)
Prints a Markdown table; an entry that does not compile says why. Then the real-valued entries
(and Invert3x3, a real quotient of integers) again with --mlp gated, whose default --tol is 1e-9."""
import argparse, json, os, re, subprocess, sys, tempfile

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


# The real-valued entries again with gated MLPs (exact products, quadratic pieces; --tol 1e-9).
print()
print("With `--mlp gated` (default --tol 1e-9):")
print()
print("| program | tokens | max-len | layers | MLP hidden | non-zero | file | bound | verify --random %d |" % a.random)
print("|---|---|---|---|---|---|---|---|---|")
with tempfile.TemporaryDirectory() as tmp:
    for corpus in ("tma",):
        for line in open(os.path.join(here, corpus + ".tsv")):
            if line.startswith("#") or not line.strip():
                continue
            f, call, kind, rng, lengths = line.rstrip("\n").split("\t")
            name = "%s:%s" % (f, call)
            if kind != "float" and call != "Invert3x3()":
                continue
            prog, model = os.path.join(tmp, "p.rasp"), os.path.join(tmp, "m.bin")
            with open(prog, "w") as o:
                o.write(open(os.path.join(here, corpus, f)).read() + "\nout = %s;\n" % call)
            n = max(int(x) for x in lengths.split(","))
            c = subprocess.run([os.path.join(a.bin, "raspcc"), prog, "--output", "out", "-o", model, "--max-len", str(n),
                                "--mlp", "gated", "--stats", "--json"] + (["--range", rng] if kind == "float" else ["--vocab", rng]),
                               capture_output=True, text=True)
            if c.returncode != 0:
                why = ([l for l in c.stderr.splitlines() if "error" in l] or ["?"])[0].split("error: ")[-1][:90]
                print("| %s | %s %s | %d | refused: %s | | | | | |" % (name, kind, rng, n, why.replace("|", "/")))
                continue
            st = json.loads(c.stdout)
            v = subprocess.run([os.path.join(a.bin, "rasprun"), model, "--verify", "--random", str(a.random)],
                               capture_output=True, text=True)
            last = ((v.stdout + v.stderr).strip().splitlines() or ["?"])[-1]
            mm = re.search(r"(\d+) mismatches", last)
            err = re.search(r"largest error (\S+)", last)
            print("| %s | %s %s | %d | %s | %s | %s | %.1f MB | %.3g + %.3g \\|value\\| | %s mismatches%s |" % (
                name, kind, rng, n, st.get("layers"), st.get("mlp_hidden"), st.get("nonzero_params"),
                os.path.getsize(model) / 1e6, st.get("error_bound", 0), st.get("error_rel", 0),
                mm.group(1) if mm and v.returncode == 0 else "MISMATCH:",
                ", largest error %s" % err.group(1) if err else " " + last[-60:]))
