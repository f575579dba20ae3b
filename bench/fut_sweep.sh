#!/bin/sh
# The raspfut selftest sweep (docs/fut.md "Measured results"): every backbone kind, L = 1..3,
# H = 1..3, d in {2, 5, 8}, residual and not, causal and not. One line per configuration, then
# the largest error and condition number per kind. Exits 1 when any selftest fails its bound
# (1e-9 sparse/looped, 1e-6 random).
#   sh bench/fut_sweep.sh [BINDIR] [TRIALS]      (make verify / make bench run it with bin/)
BIN=${1:-bin}/raspfut
TRIALS=${2:-3}
[ -x "$BIN" ] || { echo "fut_sweep: $BIN not built" >&2; exit 2; }
fail=0
tmp=$(mktemp)
printf '%-7s %2s %2s %2s %-4s %-6s %6s %6s %6s %10s %10s\n' kind L H d res causal m bound N cond max_err
for kind in sparse looped random; do
  for L in 1 2 3; do for H in 1 2 3; do for d in 2 5 8; do
    for res in 0 1; do for causal in 0 1; do
      flags=""
      [ $res = 1 ] && flags="$flags --residual"
      [ $causal = 1 ] && flags="$flags --causal"
      out=$("$BIN" selftest --kind $kind --layers $L --heads $H --width $d $flags --trials $TRIALS --seed $((L*100+H*10+d))); rc=$?
      [ $rc = 0 ] || fail=1
      m=$(printf '%s\n' "$out" | awk '$1=="m"{print $2}')
      lb=$(printf '%s\n' "$out" | awk '$1=="lower_bound"{print $2}')
      N=$(printf '%s\n' "$out" | awk '$1=="columns"{print $2}')
      cond=$(printf '%s\n' "$out" | awk '$1=="condition_number"{print $2}')
      err=$(printf '%s\n' "$out" | awk '$1=="max_abs_error"{print $2}')
      printf '%-7s %2s %2s %2s %-4s %-6s %6s %6s %6s %10s %10s%s\n' $kind $L $H $d $res $causal "$m" "$lb" "${N:--}" "${cond:--}" "$err" "$([ $rc = 0 ] || echo '  FAIL')"
      echo "$kind $err ${cond:-0}" >> "$tmp"
    done; done
  done; done; done
done
echo
for kind in sparse looped random; do
  awk -v k=$kind '$1==k { e=$2+0; c=$3+0; if (e>me) me=e; if (c>mc) mc=c; n++ }
    END { if (k=="random") printf "%-7s configurations %d  max_abs_error %.3e  max condition number %.3e\n", k, n, me, mc;
          else printf "%-7s configurations %d  max_abs_error %.3e\n", k, n, me }' "$tmp"
done
rm -f "$tmp"
[ $fail = 0 ] && echo "fut_sweep: all selftests within bounds" || echo "fut_sweep: FAILURES"
exit $fail
