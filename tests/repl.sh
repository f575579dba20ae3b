#!/bin/sh
# The REPL (bin/rasp) on transcripts: what is typed in, and exactly what must be printed.
#
# 1. The original REPL's own tests (../shared/corpus/rasp/tests): each in/NAME.txt is typed in,
#    run from the original's repository root, and must print exactly tgt/NAME.txt, where
#    "[current]" stands for that root's absolute path and the target ends with one extra
#    newline. Skipped (said so) when that folder is not there.
# 2. Our own, tests/repl/NAME.in -> NAME.out, for what those do not reach (examples, selectors,
#    full seq display, containers, draw, compile); their outputs were checked line by line
#    against the original's printing code (its REPL.py), not produced by it. Each runs in an
#    empty folder; a model it compiles must pass rasprun --verify, and a drawing it writes must
#    be Graphviz dot (rendered when `dot` is installed).
# usage: sh tests/repl.sh BIN_DIR [ORIGINAL_ROOT]
set -u
bin=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=${2:-$here/../../shared/corpus/rasp}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

report() { # label pass fail failed-names
    echo "$1: $2 passed, $3 failed${4:+ ($4 )}"
    [ "$3" -eq 0 ] || status=1
}

if [ -d "$root/tests/in" ]; then
    root=$(cd "$root" && pwd)
    pass=0 fail=0 failed=""
    for in in "$root"/tests/in/*.txt; do
        name=$(basename "$in")
        (cd "$root" && "$bin/rasp" < "$in") > "$tmp/out" 2> "$tmp/err"
        printf '\n' >> "$tmp/out"
        sed "s|\[current\]|$root|g" "$root/tests/tgt/$name" > "$tmp/want"
        if cmp -s "$tmp/out" "$tmp/want"; then
            pass=$((pass + 1))
        else
            fail=$((fail + 1))
            failed="$failed $name"
            if [ -n "${REPL_DIFF:-}" ]; then diff "$tmp/want" "$tmp/out" | head -40; fi
        fi
    done
    report "repl transcripts of the original" $pass $fail "$failed"
else
    echo "repl transcripts of the original: skipped ($root/tests/in not found)"
fi

pass=0 fail=0 failed=""
for in in "$here"/repl/*.in; do
    name=$(basename "$in" .in)
    work="$tmp/$name"
    mkdir -p "$work"
    ok=1
    (cd "$work" && "$bin/rasp" < "$in") > "$tmp/out" 2> "$tmp/err" || ok=0
    if ! cmp -s "$tmp/out" "$here/repl/$name.out"; then
        ok=0
        if [ -n "${REPL_DIFF:-}" ]; then diff "$here/repl/$name.out" "$tmp/out" | head -40; fi
    fi
    for model in "$work"/*.bin; do
        [ -e "$model" ] || continue
        "$bin/rasprun" "$model" --verify > /dev/null 2>&1 || { ok=0; echo "rasprun --verify failed: $model"; }
    done
    for drawing in "$work"/comp_flows/*.dot; do
        [ -e "$drawing" ] || continue
        head -1 "$drawing" | grep -q '^digraph ' || ok=0
        if command -v dot > /dev/null 2>&1; then dot -Tsvg "$drawing" > /dev/null 2>&1 || ok=0; fi
    done
    if [ $ok -eq 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); failed="$failed $name"; fi
done
report "repl transcripts of our own" $pass $fail "$failed"
exit $status
