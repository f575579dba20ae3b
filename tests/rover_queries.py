#!/usr/bin/env python3
"""Rover (the original RASP repository's logic-inference program, ../shared/corpus/rasp/rover.rasp)
on queries it was written for: random inputs over its vocabulary are almost all malformed (the
reference raises), so the corpus check's random inputs barely exercise it. This generates
well-formed queries (base clauses `a<A`, `b#C`, inferences `x<A:x#B`, `a<X:b<X`, a question at
the end), seeded, compiles rover, and compares the model with the reference evaluator on every
query as typed JSON; it also keeps the layer count from growing back (31 before switches; the RASP analysis: 16).
usage: tests/rover_queries.py BINDIR [COUNT] [MAX_LEN]    (from the project root)"""
import json, os, random, subprocess, sys, tempfile

ROVER = "../shared/corpus/rasp/rover.rasp"
VOCAB = '["a","b","c","x","X","A","B","C","<","#",":",",","?"]'
MAX_LAYERS = 16


def queries(count, max_len, seed=1):
    rng = random.Random(seed)
    elements, sets, ops = "abc", "ABC", "<#"

    def base():
        return rng.choice(elements) + rng.choice(ops) + rng.choice(sets)

    def inference():
        if rng.random() < 0.5:
            return "x" + rng.choice(ops) + rng.choice(sets) + ":x" + rng.choice(ops) + rng.choice(sets)
        return rng.choice(elements) + rng.choice(ops) + "X:" + rng.choice(elements) + rng.choice(ops) + "X"

    out = set()
    for _ in range(100 * count):
        if len(out) == count:
            break
        clauses = [base() if rng.random() < 0.55 else inference() for _ in range(rng.randint(0, 4))]
        q = ",".join(clauses + [base()]) + "?"
        if len(q) <= max_len:
            out.add(q)
    return sorted(out)


def main():
    bindir = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    max_len = int(sys.argv[3]) if len(sys.argv) > 3 else 26
    if not os.path.exists(ROVER):
        print("rover: skipped (%s not present)" % ROVER)
        return 0
    qs = queries(count, max_len)
    with tempfile.TemporaryDirectory() as d:
        model, inputs = os.path.join(d, "rover.bin"), os.path.join(d, "in.txt")
        with open(inputs, "w") as f:
            for q in qs:
                f.write(json.dumps(list(q)) + "\n")
        stats = subprocess.run([os.path.join(bindir, "raspcc"), ROVER, "--output", "res", "--vocab", VOCAB,
                                "--max-len", str(max_len), "--stats", "--json", "-o", model],
                               capture_output=True, text=True)
        if stats.returncode != 0:
            print("rover: compile failed: " + stats.stderr.strip()[-400:])
            return 1
        layers = json.loads(stats.stdout)["layers"]
        got = subprocess.run([os.path.join(bindir, "rasprun"), model, "--json", "--inputs", inputs],
                             capture_output=True, text=True).stdout.splitlines()
        want = subprocess.run([os.path.join(bindir, "raspcc"), ROVER, "--output", "res", "--eval", "--json",
                               "--inputs", inputs], capture_output=True, text=True).stdout.splitlines()
    bad = [(q, g, w) for q, g, w in zip(qs, got, want) if g != w]
    answers = {}
    for w in want:
        v = json.loads(w)
        key = v[-1] if isinstance(v, list) else "error"
        answers[key] = answers.get(key, 0) + 1
    ok = len(got) == len(want) == len(qs) and not bad and layers <= MAX_LAYERS
    for q, g, w in bad[:5]:
        print("rover: %s: model %s, reference %s" % (q, g, w))
    print("rover: %d queries up to length %d (%s), %d disagree, %d layers (at most %d)%s" %
          (len(qs), max_len, ", ".join("%s %d" % kv for kv in sorted(answers.items())), len(bad), layers,
           MAX_LAYERS, "" if ok else ": FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
