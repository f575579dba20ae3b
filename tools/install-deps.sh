#!/bin/sh
# Installs the Debian packages the build needs when they are missing: as root it runs apt-get;
# otherwise it prints the one command that would. Used by `make`, `make check` and .ci/run.
# Extra packages a target needs can be named as arguments (make testbed: gnuplot-nox).
set -eu
PKGS="flex bison check pkg-config liblapacke-dev libopenblas-dev clang libclang-rt-14-dev python3 $*"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y$missing"
if [ "$(id -u)" = 0 ]; then
    echo "installing build dependencies:$missing"
    sh -c "$cmd" >/dev/null
else
    echo "missing build dependencies:$missing" >&2
    echo "install them with:  sudo sh -c '$cmd'" >&2
    exit 1
fi
