#!/bin/sh
# `make demo`: the main job end to end. Compile the RASP paper's reverse into transformer
# weights, run the weights alone, and check them against the reference evaluator on every input.
#   sh tools/demo.sh [BINDIR [EXAMPLES]]   (default bin and rasp_examples; make install-check
#                                           runs it on the installed tools and examples)
set -eu
bin=${1:-bin}
prog=${2:-rasp_examples}/reverse.rasp
model=$(mktemp -d)/reverse.bin
trap 'rm -rf "$(dirname "$model")"' EXIT

echo "== the program ($prog)"
grep -v '^#' "$prog"
echo
echo "== reference evaluator:  raspcc $prog --eval hello abcd"
"$bin/raspcc" "$prog" --eval hello abcd
echo
echo "== compile:  raspcc $prog -o reverse.bin --vocab abcdehlo --max-len 8 --stats"
"$bin/raspcc" "$prog" -o "$model" --vocab abcdehlo --max-len 8 --stats
echo
echo "== run the weights:  rasprun reverse.bin --check hello abcd"
"$bin/rasprun" "$model" --check hello abcd
echo
echo "== verify every input up to length 5 against the reference:  rasprun reverse.bin --verify --max-len 5"
"$bin/rasprun" "$model" --verify --max-len 5
