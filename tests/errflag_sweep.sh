#!/bin/sh
# The error flag on programs that raise: sh tests/errflag_sweep.sh BINDIR [LENGTHS] [RANDOM]
# Compiles every tests/errflag/sweep/*.rasp (flags on its first line) with --error-flag at each
# max-len of LENGTHS (default "6 13 30"; raspcc's self-check compares the flag with the checks on
# up to 2500 inputs) and runs `rasprun --verify --random RANDOM` (default 300) on the model: a
# flag that disagrees with the checks is a mismatch there (verify/check.c). Prints a line per
# model and "errflag-sweep: N passed, M failed" (with the inputs, errors agreed and refusals
# inside a margin summed); exit 1 on any failure.
bin=${1:?usage: tests/errflag_sweep.sh BINDIR [LENGTHS] [RANDOM]}
lengths=${2:-6 13 30}
random=${3:-300}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0 inputs=0 agreed=0 margins=0
for prog in tests/errflag/sweep/*.rasp; do
    name=$(basename "$prog" .rasp)
    flags=$(head -n 1 "$prog" | sed 's/^#//; s/   (.*//')
    for n in $lengths; do
        # shellcheck disable=SC2086 # flags are words
        if ! "$bin/raspcc" "$prog" $flags --max-len "$n" --error-flag -o "$tmp/m.bin" 2>"$tmp/err"; then
            echo "errflag-sweep: $name at $n: FAIL: $(tail -n 1 "$tmp/err")"
            failed=$((failed + 1))
            continue
        fi
        line=$("$bin/rasprun" "$tmp/m.bin" --verify --random "$random" --seed "$n" 2>"$tmp/err")
        status=$?
        counts=$(echo "$line" | sed -n 's/^verify: \([0-9]*\) inputs, \([0-9]*\) mismatches, \([0-9]*\) errors agreed\(, \([0-9]*\) inside the margin\)\{0,1\}.*/\1 \2 \3 \5/p')
        set -- $counts
        if [ "$status" -ne 0 ] || [ -z "$counts" ] || [ "$2" -ne 0 ]; then
            echo "errflag-sweep: $name at $n: FAIL: $line $(head -n 3 "$tmp/err")"
            failed=$((failed + 1))
            continue
        fi
        echo "errflag-sweep: $name at $n: $line"
        passed=$((passed + 1))
        inputs=$((inputs + $1))
        agreed=$((agreed + $3))
        margins=$((margins + ${4:-0}))
    done
done
echo "errflag-sweep: $inputs inputs, $agreed refused by model and reference alike, $margins inside a margin"
echo "errflag-sweep: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
