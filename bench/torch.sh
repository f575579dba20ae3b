#!/bin/sh
# rasprun against the torch module, sequences/s (`make bench`, after bench/run.sh):
#   sh bench/torch.sh [BINDIR]
# Runs bench/torch_bench.py with a Python 3 that has NumPy and PyTorch ($PYTHON, else python3,
# else /usr/bin/python3); prints "bench torch: skipped" without one.
bin=${1:-bin}
for py in ${PYTHON:-} python3 /usr/bin/python3; do
    if "$py" -c 'import numpy, torch' >/dev/null 2>&1; then
        # glibc hands buffers over 128 KiB back to the kernel after each operation; PyTorch then
        # page-faults every batch-sized tensor afresh (costly here: see docs/benchmarks.md)
        MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-4294967296} MALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_THRESHOLD_:-4294967296} \
            OPENBLAS_NUM_THREADS=1 exec "$py" bench/torch_bench.py "$bin"
    fi
done
echo "bench torch: skipped (no python3 with numpy and torch: apt-get install -y python3-numpy python3-torch)"
