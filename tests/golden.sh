#!/bin/sh
# Golden tests, run from the project root: sh tests/golden.sh BINDIR
#   1. every tests/golden/NAME.in through rasp_examples/NAME.rasp (reference evaluator, --json),
#      compared with NAME.out (outputs of the original RASP interpreter; numbers within 1e-9,
#      an "ERROR: ..." line expects {"error": ...});
#   2. every tests/errors/NAME.rasp must fail (exit 2) with the diagnostics of NAME.err as the
#      first diagnostic lines of stderr.
# One line per failure, then "golden: N passed, M failed"; exit 1 on any failure.
# More loops (e.g. compiled models) add a function and one call at the bottom.
bin=${1:?usage: tests/golden.sh BINDIR}
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# Compares JSON lines: compare_json GOT WANT -> prints the first mismatch, status 1 if any.
compare_json() {
    python3 - "$1" "$2" <<'EOF'
import json, math, sys
def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool): return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b
got = [l for l in open(sys.argv[1]).read().splitlines() if l.strip()]
want = [l for l in open(sys.argv[2]).read().splitlines() if l.strip()]
if len(got) != len(want):
    print("expected %d lines, got %d" % (len(want), len(got))); sys.exit(1)
for i, (g, w) in enumerate(zip(got, want), 1):
    try: gj = json.loads(g)
    except ValueError: print("line %d: not JSON: %s" % (i, g[:80])); sys.exit(1)
    if w.startswith("ERROR"):
        ok = isinstance(gj, dict) and "error" in gj
    else:
        wj = json.loads(w)
        ok = isinstance(gj, list) and len(gj) == len(wj) and all(map(same, gj, wj))
    if not ok: print("line %d: want %s got %s" % (i, w[:100], g[:100])); sys.exit(1)
EOF
}

golden_eval() {
    for in in tests/golden/*.in; do
        name=$(basename "$in" .in)
        prog=rasp_examples/$name.rasp
        "$bin/raspcc" "$prog" --eval --json --inputs "$in" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ "$rc" -gt 1 ]; then
            fail "eval $name: exit $rc: $(head -n 1 "$tmp/err")"
        elif msg=$(compare_json "$tmp/out" "tests/golden/$name.out"); then
            pass
        else
            fail "eval $name: $msg"
        fi
    done
}

golden_errors() {
    for prog in tests/errors/*.rasp; do
        name=$(basename "$prog" .rasp)
        want=tests/errors/$name.err
        n=$(wc -l <"$want")
        "$bin/raspcc" "$prog" --eval a >/dev/null 2>"$tmp/err"
        rc=$?
        grep -E '^[^ ].*: (error|warning|note): ' "$tmp/err" | head -n "$n" >"$tmp/diag"
        if [ "$rc" != 2 ]; then
            fail "error $name: expected exit 2, got $rc"
        elif cmp -s "$tmp/diag" "$want"; then
            pass
        else
            fail "error $name: want '$(head -n 1 "$want")' got '$(head -n 1 "$tmp/diag")'"
        fi
    done
}

golden_eval
golden_errors

echo "golden: $passed passed, $failed failed"
[ "$failed" = 0 ]
