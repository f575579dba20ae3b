#!/bin/sh
# The runtime's paths against the reference evaluator, on programs an outside tester wrote to reach
# them (tests/runtime_paths/MANIFEST): each program compiled by COMPILE_BIN's raspcc, then run by
# RUN_BIN's rasprun (the sanitized build in `make check`):
#   rasprun --verify --random 200 --seed 5, and --verify --max-len 2: 0 mismatches;
#   rasprun --inputs F --check on inputs of mixed lengths (the longest first, then short ones, then
#   the longest again: a batch's first input decides the paths, a longer one re-decides): exit 0.
# One line per failure, then "runtime paths: N passed, M failed"; exit 1 on any failure.
#   sh tests/runtime_paths.sh COMPILE_BIN RUN_BIN
compile_bin=${1:?usage: tests/runtime_paths.sh COMPILE_BIN RUN_BIN}
run_bin=${2:?usage: tests/runtime_paths.sh COMPILE_BIN RUN_BIN}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
tab=$(printf '\t')
# the loop runs in a subshell (a pipe): it counts in files
grep -v '^#' tests/runtime_paths/MANIFEST | while IFS="$tab" read -r name vocab len opts; do
    [ -n "$name" ] || continue
    model=$tmp/$name.bin
    # shellcheck disable=SC2086
    if ! "$compile_bin/raspcc" "tests/runtime_paths/$name.rasp" -o "$model" --vocab "$vocab" --max-len "$len" -q $opts; then
        echo "FAIL $name: raspcc refused"
        echo x >> "$tmp/failed"
        continue
    fi
    for check in "--random 200 --seed 5" "--max-len 2"; do
        # shellcheck disable=SC2086
        out=$("$run_bin/rasprun" "$model" --verify $check -q 2>&1)
        case $out in
        *" 0 mismatches"*) echo x >> "$tmp/passed" ;;
        *) echo "FAIL $name --verify $check: $out"; echo x >> "$tmp/failed" ;;
        esac
    done
    python3 - "$vocab" "$len" > "$tmp/$name.in" <<'PY'
import json, random, sys
vocab, n = sys.argv[1], int(sys.argv[2])
random.seed(n)
if vocab.startswith("["):
    atoms, text = json.loads(vocab), False
elif ".." in vocab:
    lo, hi = map(int, vocab.split(".."))
    atoms, text = list(range(lo, hi + 1)), False
else:
    atoms, text = list(vocab), True
for length in [n, 1, 3, n // 2, 2, n, n - 1, 0, 5, n]:
    seq = [random.choice(atoms) for _ in range(max(length, 0))]
    print("".join(seq) if text and seq else json.dumps(seq))
PY
    if "$run_bin/rasprun" "$model" --inputs "$tmp/$name.in" --check -q > "$tmp/$name.out" 2> "$tmp/$name.err"; then
        echo x >> "$tmp/passed"
    else
        echo "FAIL $name --inputs --check: $(head -3 "$tmp/$name.err")"
        echo x >> "$tmp/failed"
    fi
done
[ -f "$tmp/passed" ] && passed=$(wc -l < "$tmp/passed")
[ -f "$tmp/failed" ] && failed=$(wc -l < "$tmp/failed")
echo "runtime paths: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
