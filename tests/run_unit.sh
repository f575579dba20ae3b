#!/bin/sh
# Runs each Check test executable in DIR; prints one summary line "N passed, N failed".
dir=$1; shift
total_fail=0; total_pass=0
for t in "$@"; do
    out=$("$dir/$t" 2>&1); rc=$?
    line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks:' | tail -n 1)
    checks=$(printf '%s' "$line" | sed -n 's/.*Checks: \([0-9]*\).*/\1/p')
    fails=$(printf '%s' "$line" | sed -n 's/.*Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2/p')
    f=$(( $(echo "$fails" | awk '{print $1+$2}') + 0 ))
    if [ "$rc" != 0 ] || [ -z "$line" ]; then
        printf '%s\n' "$out" | tail -n 30
        [ "$f" = 0 ] && f=1
    fi
    total_pass=$((total_pass + ${checks:-0} - f)); total_fail=$((total_fail + f))
    printf '  %-28s %s\n' "$t" "${line:-crashed (exit $rc)}"
done
echo "unit ($dir): $total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ]
