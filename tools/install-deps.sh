#!/bin/sh
# Installs the Debian packages the build needs when they are missing: as root it runs apt-get;
# otherwise it prints the one command that would. Used by `make`, `make check` and .ci/run.
# Extra packages a target needs can be named as arguments (make testbed: gnuplot-nox).
# python3-numpy runs the weights alone for tests/errflag.sh (the error flag against rasprun).
# With --python (`make python-deps`): python3-numpy and the optional python3-torch, which
# python/raspcc and tests/python.sh use.
set -eu
PKGS="flex bison check pkg-config liblapacke-dev libopenblas-dev libpng-dev libedit-dev clang libclang-rt-14-dev python3 python3-numpy"
if [ "${1:-}" = --python ]; then PKGS="python3-numpy python3-torch"; else PKGS="$PKGS $*"; fi
missing=""
# A bare machine needs make and a C compiler too; make install-check renders man pages (man-db).
# The Makefile runs this script once, before any other rule (build/deps.mk), so that parallel
# jobs never race it. Without dpkg, say what the build needs and leave the rest to it.
PKGS="make gcc libc6-dev man-db $PKGS"
if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-deps: not a Debian system; the build needs the equivalents of: $PKGS" >&2
    exit 0
fi
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
# Wait for another apt or dpkg to finish rather than fail on its lock.
apt="apt-get -o DPkg::Lock::Timeout=600"
cmd="$apt update && DEBIAN_FRONTEND=noninteractive $apt install -y --no-install-recommends$missing"
if [ "$(id -u)" = 0 ]; then
    echo "installing build dependencies:$missing"
    sh -c "$cmd" >/dev/null
else
    echo "missing build dependencies:$missing" >&2
    echo "install them with:  sudo sh -c '$cmd'" >&2
    exit 1
fi
