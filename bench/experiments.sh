#!/bin/sh
# make experiments: every run of bench/experiments.list, once per seed, then the programmed
# embeddings and the compiler's answer for the tasks' RASP programs; bench/experiments.py turns
# the outputs into docs/experiments.md (between its GENERATED markers) and the loss-curve PNGs.
#
#   sh bench/experiments.sh BIN            (BIN holds raspfut and raspcc)
#   EXPERIMENTS_SEEDS="1 2 3"              seeds of every trained configuration
#   EXPERIMENTS_JOBS=2                     runs at once (each single-threaded)
#   EXPERIMENTS_ONLY=REGEX                 only the configurations whose id matches
#   EXPERIMENTS_FRESH=1                    rerun even the runs whose output is complete
# Outputs go to build/experiments/; a run whose output is complete and made with the same
# options is not run again, so an interrupted `make experiments` resumes.
set -eu
BIN=${1:-bin}
OUT=build/experiments
SEEDS=${EXPERIMENTS_SEEDS:-1 2 3}
JOBS=${EXPERIMENTS_JOBS:-2}
ONLY=${EXPERIMENTS_ONLY:-.}
mkdir -p "$OUT/runs" "$OUT/programmed"
tty=false
[ -t 1 ] && tty=true

if ! command -v gnuplot >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        echo "installing gnuplot-nox (loss curves)"
        (apt-get install -y gnuplot-nox >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y gnuplot-nox >/dev/null; }) ||
            echo "gnuplot-nox could not be installed: no loss-curve PNGs" >&2
    else
        echo "gnuplot is missing (sudo apt-get install gnuplot-nox): no loss-curve PNGs" >&2
    fi
fi

# One job per line: id seed options...
jobs=$OUT/jobs.txt
: > "$jobs"
grep -v '^[[:space:]]*#' bench/experiments.list | grep '|' | while IFS='|' read -r id row col opts own_seeds; do
    id=$(echo $id)
    echo "$id" | grep -Eq "$ONLY" || continue
    for s in ${own_seeds:-$SEEDS}; do echo "$id $s $opts" >> "$jobs"; done
done
total=$(wc -l < "$jobs")

$tty && echo "experiments: $total trained runs, $JOBS at a time (outputs in $OUT/runs)"
OUT=$OUT BIN=$BIN TTY=$tty xargs -r -P "$JOBS" -L 1 sh bench/experiment_run.sh < "$jobs"

# Programmed embeddings (no gradient): the hand-built targets on sparse and random backbones.
$tty && echo "programmed embeddings"
for task in "dyck1" "khop --k 1" "khop --k 2" "khop --k 3"; do
    name=$(echo "$task" | tr -d ' -' | sed 's/khopk/khop/')
    # run when EXPERIMENTS_ONLY matches the task's name or the word "programmed"
    { echo "$name" | grep -Eq "$ONLY" || echo programmed | grep -Eq "$ONLY"; } || continue
    for kind in sparse random; do
        for s in $SEEDS; do
            [ "$kind" = sparse ] && [ "$s" != "$(echo $SEEDS | cut -d' ' -f1)" ] && continue
            out=$OUT/programmed/$name.$kind.s$s.out
            # shellcheck disable=SC2086
            { echo "# raspfut train --task $task --n 16 --init programmed --backbone $kind --seed $s"
              "$BIN/raspfut" train --task $task --n 16 --init programmed --backbone $kind --seed "$s" --quiet; } > "$out" 2>&1 ||
                echo "programmed $name $kind failed (see $out)" >&2
            $tty && printf '  %-22s seed %-3s %s\n' "$name.$kind" "$s" "$(grep '^accuracy' "$out" || true)"
        done
    done
done

# The literal pipeline: RASP program -> raspcc --fut-target (refused: these programs need MLPs).
{
    echo "# $BIN/raspcc rasp_examples/dyck1.rasp --vocab '()' --max-len 16 --fut-target $OUT/dyck1.target.bin"
    "$BIN/raspcc" rasp_examples/dyck1.rasp --vocab '()' --max-len 16 --fut-target "$OUT/dyck1.target.bin" 2>&1 && echo "exit 0" || echo "exit $?"
    "$BIN/raspcc" rasp_examples/dyck1.rasp --vocab '()' --max-len 16 -o "$OUT/dyck1.model.bin" --stats 2>&1 | grep -E '^(layers|heads|mlp_hidden):'
    echo "# $BIN/raspcc bench/khop1.rasp --vocab 0..3 --max-len 16 --fut-target $OUT/khop1.target.bin"
    "$BIN/raspcc" bench/khop1.rasp --vocab 0..3 --max-len 16 --fut-target "$OUT/khop1.target.bin" 2>&1 && echo "exit 0" || echo "exit $?"
    "$BIN/raspcc" bench/khop1.rasp --vocab 0..3 --max-len 16 -o "$OUT/khop1.model.bin" --stats 2>&1 | grep -E '^(layers|heads|mlp_hidden):'
} > "$OUT/compiler.txt" 2>&1

python3 bench/experiments.py "$OUT" docs/experiments.md
$tty && echo "wrote docs/experiments.md and docs/experiments/*.png"
exit 0
