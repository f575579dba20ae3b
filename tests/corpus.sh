#!/bin/sh
# The programs nobody here wrote (`make check`, after golden): sh tests/corpus.sh BINDIR [RANDOM]
# Runs ../shared/corpus/check.py (when that folder exists; otherwise prints "corpus: skipped") on
# the entries of tma.tsv and rasp.tsv that compile today: each is compiled at its lengths (the
# self-check compares the model with the reference evaluator before writing it) and verified with
# rasprun --verify --random RANDOM (default 100), exactly and typed. `make conformance` runs every
# entry, `make verify` these with 500 random inputs. The list grows as entries compile; an entry
# that stops compiling or disagrees fails the run. Then rover on 1000 well-formed queries
# (tests/rover_queries.py).
bin=${1:?usage: tests/corpus.sh BINDIR [RANDOM]}
random=${2:-100}
corpus=../shared/corpus
if [ ! -f "$corpus/check.py" ]; then
    echo "corpus: skipped ($corpus not present)"
    exit 0
fi
compiles="Transpose(),Transpose_3dot(),Matmul_3dot4(),Matmul4x4(),MaxMinSort(),Match2(19),Cofactor(),"
compiles="${compiles}Transpose_3dot_2h(),hist_bos,hist_nobos,reverse,sort_bos,hist2_bos,sort_by_most_freq,"
compiles="${compiles}dyck1_ptf,dyck2_ptf,dyck3_ptf,rover.rasp:res,longsum,"
compiles="${compiles}ReLU(),softmax(),softmaxrect_3dot(),matmul3dot2_2h(),softmaxrect_3dot_2h(),matmul_3dot3(),softmax_3dot()"
out=$(python3 "$corpus/check.py" --bin "$bin" --random "$random" --only "$compiles" 2>&1)
rc=$?
echo "$out" | grep -v '^ok ' || true
n_ok=$(echo "$out" | grep -c '^ok ')
echo "corpus: $n_ok passed, $(echo "$out" | tail -n 1)"
# rover on well-formed queries (random ones are almost all malformed), and its layer count
python3 tests/rover_queries.py "$bin" 1000 26 || rc=1
exit $rc
