#!/bin/sh
# The Python package (python/raspcc) and its two scripts against rasprun: sh tests/python.sh BINDIR
# Runs tests/python_diff.py with a Python 3 that has NumPy and PyTorch ($PYTHON, else python3, else
# /usr/bin/python3, where Debian's python3-numpy and python3-torch install); prints "python:
# skipped" and succeeds when there is none. The corpus programs join when ../shared/corpus exists.
bin=${1:?usage: tests/python.sh BINDIR}
for py in ${PYTHON:-} python3 /usr/bin/python3; do
    if "$py" -c 'import numpy, torch' >/dev/null 2>&1; then
        PYTHON=$py exec "$py" tests/python_diff.py "$bin" --corpus ../shared/corpus
    fi
done
echo "python: skipped (no python3 with numpy and torch: apt-get install -y python3-numpy python3-torch)"
