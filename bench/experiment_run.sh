#!/bin/sh
# One run of `make experiments` (bench/experiments.sh): OUT BIN TTY in the environment,
# arguments: id seed raspfut-train-options... Writes $OUT/runs/<id>.s<seed>.out (the command as
# its first line, then raspfut train's output) and .csv (the loss curve); a complete output made
# by the same command is kept unless EXPERIMENTS_FRESH is set.
id=$1; seed=$2; shift 2
out=$OUT/runs/$id.s$seed.out
csv=$OUT/runs/$id.s$seed.csv
want="# raspfut train $* --seed $seed --curve $csv"
if [ -z "${EXPERIMENTS_FRESH:-}" ] && [ -f "$out" ] && head -n 1 "$out" | grep -Fxq -- "$want" && grep -q '^accuracy ' "$out"; then
    status=kept
else
    echo "$want" > "$out.tmp"
    if "$BIN/raspfut" train "$@" --seed "$seed" --curve "$csv" --quiet >> "$out.tmp" 2>&1; then
        mv "$out.tmp" "$out"; status=done
    else
        mv "$out.tmp" "$out.failed"; status="FAILED (see $out.failed)"
    fi
fi
[ "$TTY" = true ] && printf '  %-24s seed %-3s %-5s %s\n' "$id" "$seed" "$status" "$(grep '^accuracy' "$out" 2>/dev/null)"
exit 0
