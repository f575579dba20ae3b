#!/usr/bin/env python3
"""Fails when codegen's files call each other in a cycle (make check).

Every pass may call earlier passes and the data helpers (vset.c, linview.c, ops.c), never a
later one: a file's non-static functions are the nodes' exports, and file A depends on file B
when A calls one of B's. Prints the cycles found, or "codegen: no cycle among N files"."""
import glob, os, re, sys

root = sys.argv[1] if len(sys.argv) > 1 else "codegen"
files = sorted(glob.glob(os.path.join(root, "*.c")))
text = {os.path.basename(f)[:-2]: open(f).read() for f in files}
home = {}
for name, src in text.items():
    for m in re.finditer(r"^(?!static)[A-Za-z_][\w \*]*?\b([a-z_][a-z_0-9]*)\([^;{]*\)\s*\{", src, re.M):
        home[m.group(1)] = name
calls = {name: set() for name in text}
for name, src in text.items():
    for fn, h in home.items():
        if h != name and re.search(r"\b" + fn + r"\s*\(", src):
            calls[name].add(h)

index, low, stack, on, cycles, counter = {}, {}, [], set(), [], [0]
def visit(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    for w in sorted(calls[v]):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            cycles.append(sorted(comp))
for v in sorted(calls):
    if v not in index:
        visit(v)
if cycles:
    for c in cycles:
        print("codegen: a cycle among " + ", ".join(c + ".c" for c in c))
        for a in c:
            print("  %s.c calls %s" % (a, ", ".join(b + ".c" for b in sorted(calls[a] & set(c)))))
    sys.exit(1)
print("codegen: no cycle among %d files" % len(text))
