#!/bin/sh
# Long differential sweeps (`make verify`), run from the project root: sh tests/verify.sh BINDIR
# For every rasp_examples/NAME.rasp, compiled with the vocab and max-len of its header line:
#   exhaustive  rasprun --verify --max-len 6 (every input over the vocabulary of length 1..6;
#               VERIFY_MAX_LEN overrides 6, never above the header's max-len)
#   random      rasprun --verify --random 2000 --seed 1 (inputs of lengths up to the header's
#               max-len; VERIFY_RANDOM overrides 2000)
# each must exit 0 with 0 mismatches. Then bench/fut_sweep.sh BINDIR 1 (one trial per
# configuration), when it exists, tests/corpus.sh BINDIR 500 (the corpus programs) and
# tests/errflag.sh BINDIR 100 --long (the error flag, the corpus at its largest lengths). The programs run in VERIFY_JOBS (default 2) parallel lanes, each
# taking the next unclaimed program. One line per program, then "verify: N passed, M failed"
# (two checks per program, one for the raspfut sweep); exit 1 on any failure.
bin=${1:?usage: tests/verify.sh BINDIR}
maxlen=${VERIFY_MAX_LEN:-6}
random=${VERIFY_RANDOM:-2000}
jobs=${VERIFY_JOBS:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
# One BLAS thread per process: the lanes already use the cores.
OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
export OPENBLAS_NUM_THREADS

header_field() {
    head -n 1 "$1" | sed -n "s/.*[# ]$2: *\([^ ]*\).*/\1/p"
}

# Runs one --verify mode: sweep NAME MODEL ARGS... -> prints "<ok|FAIL> <verify line or error>"
sweep() {
    "$bin/rasprun" "$@" >"$d/out" 2>"$d/err"
    rc=$?
    line=$(grep '^verify:' "$d/out" | tail -n 1)
    case "$rc:$line" in
        "0:verify: "*", 0 mismatches,"*) echo "ok ${line#verify: }" ;;
        *) echo "FAIL exit $rc: ${line:-$(head -n 1 "$d/err")}" ;;
    esac
}

# One program: writes $tmp/res.NAME with two lines, "<ok|FAIL> exhaustive ..." and "... random ...".
verify_one() {
    name=$1
    prog=rasp_examples/$name.rasp
    d=$tmp/w.$name
    mkdir -p "$d"
    t0=$(date +%s)
    vocab=$(header_field "$prog" vocab)
    ml=$(header_field "$prog" max-len)
    [ -n "$ml" ] || ml=8
    L=$maxlen
    [ "$L" -gt "$ml" ] && L=$ml
    flags="--vocab '$vocab' --max-len $ml"
    if [ -z "$vocab" ]; then
        printf 'FAIL no vocab: in the header\nFAIL not compiled\n' >"$tmp/res.$name"
    elif ! "$bin/raspcc" "$prog" -o "$d/model.bin" --vocab "$vocab" --max-len "$ml" 2>"$d/err"; then
        printf 'FAIL compile (%s): %s\nFAIL not compiled\n' "$flags" "$(head -n 1 "$d/err")" >"$tmp/res.$name"
    else
        {
            r=$(sweep "$d/model.bin" --verify --max-len "$L")
            echo "${r%% *} exhaustive<=$L: ${r#* }"
            r=$(sweep "$d/model.bin" --verify --random "$random" --seed 1)
            echo "${r%% *} random $random: ${r#* }"
        } >"$tmp/res.$name"
    fi
    echo "$flags, $(($(date +%s) - t0)) s" >"$tmp/info.$name"
    rm -rf "$d"
}

lane=0
while [ "$lane" -lt "$jobs" ]; do
    for prog in rasp_examples/*.rasp; do
        name=$(basename "$prog" .rasp)
        mkdir "$tmp/claim.$name" 2>/dev/null && verify_one "$name"
    done &
    lane=$((lane + 1))
done
wait

passed=0
failed=0
for prog in rasp_examples/*.rasp; do
    name=$(basename "$prog" .rasp)
    line="$name ($(cat "$tmp/info.$name" 2>/dev/null)):"
    status=ok
    while IFS= read -r r; do
        case $r in
            ok\ *) passed=$((passed + 1)) ;;
            *) failed=$((failed + 1)) status=FAIL ;;
        esac
        line="$line ${r#* };"
    done <"$tmp/res.$name"
    echo "$status ${line%;}"
done

# Runs one whole-suite step: step NAME FILTER COMMAND... -> "ok NAME (COMMAND, T s): <its last
# line>", or "FAIL NAME (COMMAND):" and its output through FILTER (a grep -E pattern to keep, or
# "-v PATTERN" to drop; "" keeps every line).
step() {
    name=$1 filter=$2
    shift 2
    t0=$(date +%s)
    if "$@" >"$tmp/step" 2>&1; then
        passed=$((passed + 1))
        echo "ok $name ($*, $(($(date +%s) - t0)) s): $(tail -n 1 "$tmp/step")"
    else
        failed=$((failed + 1))
        echo "FAIL $name ($*):"
        case $filter in
        "") cat "$tmp/step" ;;
        "-v "*) grep -v "${filter#-v }" "$tmp/step" ;;
        *) grep -E "$filter" "$tmp/step" ;;
        esac
    fi
}

if [ -f bench/fut_sweep.sh ]; then
    step "raspfut selftest sweep" 'FAIL|configurations' sh bench/fut_sweep.sh "$bin" 1
fi
# The programs of ../shared/corpus that compile, with 500 random inputs each.
step corpus "" sh tests/corpus.sh "$bin" 500
# The error flag at the corpus programs' largest lengths, 100 random inputs of every length each.
step "error flag" "-v all agree" sh tests/errflag.sh "$bin" 100 --long

echo "verify: $passed passed, $failed failed ($(($(date +%s) - start)) s)"
[ "$failed" = 0 ]
