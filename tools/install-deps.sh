#!/bin/sh
# Installs the Debian packages the build and the tests need when they are missing: as root it
# runs apt-get; otherwise it prints the one command that would. The Makefile runs it once, before
# any other rule (through build/deps.mk), so parallel jobs never race it; .ci/run runs it too.
#   build:  make, a C compiler, flex, bison, pkg-config, LAPACKE and OpenBLAS
#   tests:  check (unit tests), python3 (test scripts), man-db (make install-check renders the
#           man pages), clang and its runtime (make fuzz)
# On a system without dpkg it says what it would need and leaves the rest to the build.
set -eu
PKGS="make gcc libc6-dev flex bison check pkg-config liblapacke-dev libopenblas-dev python3 man-db clang libclang-rt-14-dev"
if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-deps: not a Debian system; the build needs the equivalents of: $PKGS" >&2
    exit 0
fi
missing=""
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
