#!/bin/sh
# The theory testbed at small n (part of make check): every task compiled for n = 8 and 16 and
# run on 1000 random instances each; fails unless every (task, n) compiles and answers every
# instance right. `make testbed` runs the full sweep (docs/testbed.md).
# usage: tests/testbed.sh BINDIR
set -u
bin=${1:-bin}
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
