#!/usr/bin/env python3
"""The error flag on many programs (tests/errflag.sh runs it; needs NumPy).

usage: tests/errflag_suite.py BINDIR [--random K] [--corpus DIR] [--long] [--sizes FILE]

Compiles with raspcc --error-flag (whose self-check already compares the flag with the checks on
up to 2500 inputs) and runs tests/errflag_diff.py on each model:
  - tests/errflag/*.rasp, programs that raise, one per kind of check (flags on their first line);
  - rasp_examples/*.rasp, at the vocabulary and max-len of each one's header line;
  - with --corpus, every entry of DIR/tma.tsv and DIR/rasp.tsv (the programs nobody here wrote)
    at the smallest length >= 5 it lists (else its largest; with --long its largest), as
    DIR/check.py writes them; an entry that does not compile
    without the flag either is listed as skipped.
With --sizes FILE, also compiles each without the flag and writes a Markdown table of the layers,
parameters, non-zeros and file sizes with and without it. Prints one line per model and
"errflag: N passed, M failed"; exit 1 on any failure.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def programs(corpus, tmp, long=False):
    """(name, path, flags) of every program."""
    out = []
    for f in sorted(os.listdir(os.path.join(HERE, "errflag"))):
        if f.endswith(".rasp"):
            path = os.path.join(HERE, "errflag", f)
            first = open(path).readline()
            flags = first.lstrip("#").split("(")[0].split()
            out.append(("errflag/" + f[:-5], path, flags))
    for f in sorted(os.listdir(os.path.join(ROOT, "rasp_examples"))):
        path = os.path.join(ROOT, "rasp_examples", f)
        if f.endswith(".rasp"):
            words = open(path).readline().lstrip("#").split()  # "output: hist   vocab: abcd   max-len: 8"
            head = dict(zip(words[0::2], words[1::2]))
            out.append((f[:-5], path, ["--vocab", head["vocab:"], "--max-len", head["max-len:"]]))
    if corpus:
        for table in ("tma", "rasp"):
            for line in open(os.path.join(corpus, table + ".tsv")):
                if line.startswith("#") or not line.strip():
                    continue
                f, call, kind, rng, lengths = line.rstrip("\n").split("\t")
                path = os.path.join(tmp, "corpus%d.rasp" % len(out))
                with open(path, "w") as o:
                    o.write(open(os.path.join(corpus, table, f)).read() + "\nout = %s;\n" % call)
                flags = ["--range", rng] if kind == "float" else ["--vocab", rng]
                ns = [int(x) for x in lengths.split(",")]
                n = max(ns) if long else min([x for x in ns if x >= 5] or [max(ns)])
                out.append(("%s:%s" % (f, call), path, flags + ["--max-len", str(n), "--output", "out"]))
    return out


def stats(bindir, path, flags, model):
    """raspcc --stats --json of one compile (None when it fails), and its stderr."""
    import json
    c = subprocess.run([os.path.join(bindir, "raspcc"), path, "-o", model, "--stats", "--json"] + flags,
                       capture_output=True, text=True, timeout=900)
    if c.returncode != 0:
        return None, c.stderr.strip().splitlines()[-1:] or ["?"]
    return json.loads(c.stdout.strip().splitlines()[-1]), []


# Programs the flag refuses though they compile without it, each with the reason it must give
# (checked: any other refusal fails). Invert3x3's output is real and an int where its transpose
# selects nothing; the flag checks such an int against every integer the output can reach, and
# the interval analysis of the model (through 1 / det and a product by squares) bounds the output
# only by about 6.5e13.
EXPECTED_REFUSALS = {
    "matinverse.rasp:Invert3x3()": "is real-valued and may be read as an int",
}


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    bindir = args[0]
    random_k = args[args.index("--random") + 1] if "--random" in args else "10"
    corpus = args[args.index("--corpus") + 1] if "--corpus" in args else None
    sizes = args[args.index("--sizes") + 1] if "--sizes" in args else None
    if corpus and not os.path.isfile(os.path.join(corpus, "check.py")):
        corpus = None
    import tempfile
    passed = failed = 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, flags in programs(corpus, tmp, "--long" in args):
            model = os.path.join(tmp, "m.bin")
            with_flag, why = stats(bindir, path, flags + ["--error-flag"], model)
            if with_flag is None:
                plain, _ = stats(bindir, path, flags, os.path.join(tmp, "plain.bin"))
                if plain is None and name.count(":"):
                    print("errflag: %s: skipped (does not compile without --error-flag either)" % name)
                    continue
                expected = EXPECTED_REFUSALS.get(name.split("/")[-1])
                if expected and expected in why[0]:
                    print("errflag: %s: refused as expected (%s)" % (name, expected))
                    passed += 1
                    continue
                print("errflag: %s: FAIL: raspcc --error-flag: %s" % (name, why[0][-200:]))
                failed += 1
                continue
            d = subprocess.run([sys.executable, os.path.join(HERE, "errflag_diff.py"), bindir, model, "--random", random_k],
                               capture_output=True, text=True)
            text = (d.stdout + d.stderr).strip()
            ok = d.returncode == 0
            print(text.splitlines()[-1].replace("m.bin", name) if ok else "errflag: %s: FAIL\n%s" % (name, text))
            passed += ok
            failed += not ok
            if sizes:
                plain, _ = stats(bindir, path, flags, os.path.join(tmp, "plain.bin"))
                if plain:
                    rows.append((name, plain, with_flag))
    if sizes:
        with open(sizes, "w") as o:
            o.write("| program | layers | +layers | parameters | + | non-zeros | + | file bytes | + |\n")
            o.write("|---|---|---|---|---|---|---|---|---|\n")
            for name, p, w in rows:
                o.write("| %s | %d | %d | %d | %.0f%% | %d | %.0f%% | %d | %.0f%% |\n" % (
                    name, p["layers"], w["layers"] - p["layers"], p["params"],
                    100.0 * (w["params"] - p["params"]) / p["params"], p["nonzero_params"],
                    100.0 * (w["nonzero_params"] - p["nonzero_params"]) / p["nonzero_params"], p["file_bytes"],
                    100.0 * (w["file_bytes"] - p["file_bytes"]) / p["file_bytes"]))
    print("errflag: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
