#!/bin/sh
# The error flag (raspcc --error-flag) against rasprun's own errors: sh tests/errflag.sh BINDIR [RANDOM]
# First the outsider's findings as rasprun sees them (tests/errflag/margin_edge.rasp,
# one_kind_length.rasp, int_or_token.rasp: exit codes and the band's note). Then
# tests/errflag_suite.py (programs that raise, rasp_examples/, and the corpus programs of
# ../shared/corpus when it is there, each compiled with --error-flag and checked input by input by
# tests/errflag_diff.py) with a Python 3 that has NumPy ($PYTHON, else python3, else
# /usr/bin/python3); prints "errflag: skipped" and succeeds when there is none.
# --long (make verify): the corpus programs at the largest length they list.
bin=${1:?usage: tests/errflag.sh BINDIR [RANDOM] [--long]}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
check() { # check WHAT WANT GOT
    if [ "$3" = "$2" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "errflag: $1: want '$2' got '$3'"; fi
}
# 001: 1e-6 (1 + 2^-45) passes the margin check (it fails where |v - c| <= 1e-6): rasprun
# answers, notes the flag set inside its band, exits 0; 1e-6 itself is refused with the flag set.
"$bin/raspcc" tests/errflag/margin_edge.rasp --range -1..1 --max-len 5 --error-flag -o "$tmp/m1.bin"
check "001: compile" 0 "$?"
out=$("$bin/rasprun" "$tmp/m1.bin" '[0.0000010000000000000283303518448449476175]' 2>"$tmp/err")
check "001: rasprun beside the margin: exit and answer" "0 [T]" "$? $out"
check "001: the band's note" 1 "$(grep -c "^rasprun: note: the error flag is set .* inside the flag's band" "$tmp/err")"
out=$("$bin/rasprun" "$tmp/m1.bin" --flag '[0.000001]' 2>/dev/null)
check "001: rasprun on the margin: exit" "1" "$?"
case $out in "error: within the margin"*"flag: ["[1-9]*) check "001: refused, flag set" 1 1 ;; *) check "001: refused, flag set" "error, flag >= 1" "$out" ;; esac
# 002: the self-check used to fail (an internal compiler error) on "aa"
"$bin/raspcc" tests/errflag/one_kind_length.rasp --vocab a --max-len 9 --error-flag -o "$tmp/m2.bin" 2>"$tmp/err"
check "002: compile" 0 "$?"
out=$("$bin/rasprun" "$tmp/m2.bin" --verify 2>&1)
check "002: verify" "verify: 9 inputs, 0 mismatches, 6 errors agreed" "$out"
# 003: refused ("not bounded by a few thousand") though |out| <= 2
"$bin/raspcc" tests/errflag/int_or_token.rasp --range -2..2 --max-len 5 --error-flag -o "$tmp/m3.bin" 2>"$tmp/err"
check "003: compile" "0 " "$? $(cat "$tmp/err")"
echo "errflag-findings: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || exit 1
for py in ${PYTHON:-} python3 /usr/bin/python3; do
    if "$py" -c 'import numpy' >/dev/null 2>&1; then
        exec "$py" tests/errflag_suite.py "$bin" --random "${2:-10}" --corpus ../shared/corpus ${3:-}
    fi
done
echo "errflag: skipped (no python3 with numpy: apt-get install -y python3-numpy)"
