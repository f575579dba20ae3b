#!/bin/sh
# The theory testbed at small n (part of make check): every task compiled for n = 8 and 16 and
# run on 1000 random instances each; fails unless every (task, n) compiles and answers every
# instance right. `make testbed` runs the full sweep (docs/testbed.md).
# A second, short run of the sanitized build checks the harness itself under ASan and UBSan.
# usage: tests/testbed.sh BINDIR SANBINDIR
set -u
bin=${1:-bin}
san=${2:-build/san/bin}
out=build/testbed-check
OPENBLAS_NUM_THREADS=1
export OPENBLAS_NUM_THREADS
if "$bin/rasptestbed" --n 8,16 --instances 1000 --check --no-plots --out "$out" > "$out.log" 2>&1; then
    echo "testbed: every task right on 1000 instances at n = 8, 16 ($out/results.md)"
else
    cat "$out.log"
    echo "testbed: FAILED (see $out.log)"
    exit 1
fi
# ASan reserves more address space than any --mem-gb limit: no limit there.
if "$san/rasptestbed" --n 8 --instances 30 --check --mem-gb 0 --out "$out-san" > "$out-san.log" 2>&1; then
    echo "testbed (sanitized harness): every task right on 30 instances at n = 8"
else
    cat "$out-san.log"
    echo "testbed (sanitized harness): FAILED (see $out-san.log)"
    exit 1
fi
