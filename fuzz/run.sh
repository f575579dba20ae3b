#!/bin/sh
# Runs libFuzzer targets: fuzz/run.sh SECONDS TARGET...
# Each build/fuzz/TARGET runs for SECONDS, starting from the committed seed corpus
# fuzz/corpus/TARGET/ and growing a working copy in fuzz/corpus-work/TARGET/ (gitignored).
# Crashing inputs are written to fuzz/corpus-work/TARGET-artifacts/; keep each one that was fixed in
# tests/fuzz_regressions/<stage>/ so that the unit tests replay it. fuzz/TARGET.options, when it
# exists, holds extra libFuzzer flags for that target (one line).
set -eu
[ $# -ge 2 ] || { echo "usage: $0 SECONDS TARGET..." >&2; exit 2; }
secs=$1; shift
status=0
for t in "$@"; do
    bin=build/fuzz/$t
    [ -x "$bin" ] || { echo "fuzz: $bin not built (make fuzz builds it)" >&2; status=1; continue; }
    seeds=fuzz/corpus/$t
    work=fuzz/corpus-work/$t
    art=fuzz/corpus-work/$t-artifacts
    mkdir -p "$work" "$art" "$seeds"
    dict=""
    [ -f "fuzz/$t.dict" ] && dict="-dict=fuzz/$t.dict"
    opts=""
    [ -f "fuzz/$t.options" ] && opts=$(cat "fuzz/$t.options")
    echo "fuzz: $t for ${secs}s (corpus $work, seeds $seeds)"
    if ! "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
            -print_final_stats=1 -artifact_prefix="$art/" $dict $opts "$work" "$seeds"; then
        echo "fuzz: $t FAILED; reproducer in $art/" >&2
        status=1
    fi
done
exit $status
