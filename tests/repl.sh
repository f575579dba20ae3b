#!/bin/sh
# The original REPL's own tests (../shared/corpus/rasp/tests): each in/NAME.txt is typed into
# the REPL, run from the original's repository root, and must print exactly tgt/NAME.txt, where
# "[current]" stands for that root's absolute path and the target ends with one extra newline.
# Skipped (said so) when that folder is not there.
# usage: sh tests/repl.sh BIN_DIR [ORIGINAL_ROOT]
set -u
bin=$(cd "$1" && pwd)
root=${2:-../shared/corpus/rasp}
if [ ! -d "$root/tests/in" ]; then
    echo "repl transcripts: skipped ($root/tests/in not found)"
    exit 0
fi
root=$(cd "$root" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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
echo "repl transcripts: $pass passed, $fail failed${failed:+ ($failed )}"
[ "$fail" -eq 0 ]
