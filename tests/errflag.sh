#!/bin/sh
# The error flag (raspcc --error-flag) against rasprun's own errors: sh tests/errflag.sh BINDIR [RANDOM]
# Runs tests/errflag_suite.py (programs that raise, rasp_examples/, and the corpus programs of
# ../shared/corpus when it is there, each compiled with --error-flag and checked input by input by
# tests/errflag_diff.py) with a Python 3 that has NumPy ($PYTHON, else python3, else
# /usr/bin/python3); prints "errflag: skipped" and succeeds when there is none.
# --long (make verify): the corpus programs at the largest length they list.
bin=${1:?usage: tests/errflag.sh BINDIR [RANDOM] [--long]}
for py in ${PYTHON:-} python3 /usr/bin/python3; do
    if "$py" -c 'import numpy' >/dev/null 2>&1; then
        exec "$py" tests/errflag_suite.py "$bin" --random "${2:-10}" --corpus ../shared/corpus ${3:-}
    fi
done
echo "errflag: skipped (no python3 with numpy: apt-get install -y python3-numpy)"
