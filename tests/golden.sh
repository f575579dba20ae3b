#!/bin/sh
# Golden tests, run from the project root: sh tests/golden.sh BINDIR
#   1. every tests/golden/NAME.in through rasp_examples/NAME.rasp (reference evaluator, --json),
#      compared with NAME.out (outputs of the original RASP interpreter; exactly, with types,
#      an "ERROR: ..." line expects {"error": ...});
#   2. every tests/errors/NAME.rasp must fail (exit 2) with the diagnostics of NAME.err as the
#      first diagnostic lines of stderr;
#   3. every rasp_examples/NAME.rasp with tests/golden/NAME.in compiled to a model (vocab from the
#      header line; max-len the header's, or the longest golden input if longer): rasprun --json
#      --check on NAME.in must exit 0 and print NAME.out, and rasprun --verify --max-len L must
#      report 0 mismatches (one pass/fail each). L is the largest length such that the inputs up
#      to L (|V| + |V|^2 + ... + |V|^L) number at most GOLDEN_VERIFY_BUDGET (default 1400), or a
#      tenth of it for models over 100 MB (there each input costs 20-50 ms under the sanitizers).
#      The programs run in GOLDEN_JOBS (default 2) parallel lanes, each taking the next program.
#      raspcc self-checks every model before writing it (exit 3 on a disagreement).
#   4. the command-line conventions: --opt=value, a JSON --vocab list, --stats (text and JSON)
#      with the self-check and file_bytes, exit 2 for bad usage.
#   5. -D NAME=VALUE with --eval, -o (the model stores the program with VALUE written in) and
#      --dump-ir; the real-valued options --tol, --margin, --mlp and what --stats says of a
#      real-valued output (error_bound, margin_checks, the self-check's largest error).
# One line per failure, then "golden: N passed, M failed"; exit 1 on any failure.
# More loops (e.g. compiled models) add a function and one call at the bottom.
bin=${1:?usage: tests/golden.sh BINDIR}
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
. tests/golden_raspfut.sh # golden_raspfut: raspfut's command line

# Compares JSON lines: compare_json GOT WANT -> prints the first mismatch, status 1 if any.
compare_json() {
    python3 - "$1" "$2" <<'EOF'
import json, math, sys
def same(a, b):  # exact and typed: 1, 1.0 and true differ
    return type(a) is type(b) and a == b
got = [l for l in open(sys.argv[1]).read().splitlines() if l.strip()]
want = [l for l in open(sys.argv[2]).read().splitlines() if l.strip()]
if len(got) != len(want):
    print("expected %d lines, got %d" % (len(want), len(got))); sys.exit(1)
for i, (g, w) in enumerate(zip(got, want), 1):
    try: gj = json.loads(g)
    except ValueError: print("line %d: not JSON: %s" % (i, g[:80])); sys.exit(1)
    if w.startswith("ERROR"):
        ok = isinstance(gj, dict) and "error" in gj
    else:
        wj = json.loads(w)
        ok = isinstance(gj, list) and len(gj) == len(wj) and all(map(same, gj, wj))
    if not ok: print("line %d: want %s got %s" % (i, w[:100], g[:100])); sys.exit(1)
EOF
}

golden_eval() {
    for in in tests/golden/*.in; do
        name=$(basename "$in" .in)
        prog=rasp_examples/$name.rasp
        "$bin/raspcc" "$prog" --eval --json --inputs "$in" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ "$rc" -gt 1 ]; then
            fail "eval $name: exit $rc: $(head -n 1 "$tmp/err")"
        elif msg=$(compare_json "$tmp/out" "tests/golden/$name.out"); then
            pass
        else
            fail "eval $name: $msg"
        fi
    done
}

golden_errors() {
    for prog in tests/errors/*.rasp; do
        name=$(basename "$prog" .rasp)
        want=tests/errors/$name.err
        n=$(wc -l <"$want")
        "$bin/raspcc" "$prog" --eval a >/dev/null 2>"$tmp/err"
        rc=$?
        grep -E '^[^ ].*: (error|warning|note): ' "$tmp/err" | head -n "$n" >"$tmp/diag"
        if [ "$rc" != 2 ]; then
            fail "error $name: expected exit 2, got $rc"
        elif cmp -s "$tmp/diag" "$want"; then
            pass
        else
            fail "error $name: want '$(head -n 1 "$want")' got '$(head -n 1 "$tmp/diag")'"
        fi
    done
}

# A field of a program's header line ("# output: NAME   vocab: V   max-len: N"):
# header_field PROG KEY
header_field() {
    head -n 1 "$1" | sed -n "s/.*[# ]$2: *\([^ ]*\).*/\1/p"
}

# Length of the longest input of a golden .in file (strings: characters, lists: elements).
longest_input() {
    python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    line = line.strip()
    if line:
        n = max(n, len(json.loads(line) if line[0] in "\"[" else line))
print(n)' "$1"
}

# Size of a --vocab argument: "abc" (characters), "a,b,c" (comma list) or "0..9".
vocab_size() {
    python3 -c '
import sys
v = sys.argv[1]
if "," in v: print(len(v.split(",")))
elif ".." in v and len(v) > 2: lo, hi = v.split("..", 1); print(int(hi) - int(lo) + 1)
else: print(len(v))' "$1"
}

# One program through the compiled-model checks; prints one "pass" or "FAIL ..." line per check.
compiled_one() {
    name=$1
    prog=rasp_examples/$name.rasp
    in=tests/golden/$name.in
    d=$tmp/c.$name
    mkdir -p "$d"
    vocab=$(header_field "$prog" vocab)
    maxlen=$(header_field "$prog" max-len)
    [ -n "$maxlen" ] || maxlen=8
    longest=$(longest_input "$in")
    [ "$longest" -gt "$maxlen" ] && maxlen=$longest
    flags="--vocab '$vocab' --max-len $maxlen"
    if [ -z "$vocab" ]; then
        echo "FAIL compiled $name: no 'vocab:' in the header of $prog"
        return
    fi
    if ! "$bin/raspcc" "$prog" -o "$d/model.bin" --vocab "$vocab" --max-len "$maxlen" 2>"$d/err"; then
        echo "FAIL compile $name ($flags): $(head -n 1 "$d/err")"
        echo "FAIL verify $name: not compiled"
        rm -rf "$d"
        return
    fi
    "$bin/rasprun" "$d/model.bin" --json --check --inputs "$in" >"$d/out" 2>"$d/err"
    rc=$?
    if [ "$rc" != 0 ]; then
        result="FAIL check $name ($flags): rasprun --check exit $rc: $(head -n 1 "$d/err")"
    elif msg=$(compare_json "$d/out" "tests/golden/$name.out"); then
        result=pass
    else
        result="FAIL check $name ($flags): $msg"
    fi
    echo "$result"
    budget=${GOLDEN_VERIFY_BUDGET:-1400}
    [ "$(wc -c <"$d/model.bin")" -gt 100000000 ] && budget=$((budget / 10))
    nv=$(vocab_size "$vocab")
    L=0 total=0 pow=1
    while [ "$L" -lt "$maxlen" ]; do
        pow=$((pow * nv))
        [ $((total + pow)) -le "$budget" ] || break
        total=$((total + pow)) L=$((L + 1))
    done
    [ "$L" -ge 1 ] || L=1
    "$bin/rasprun" "$d/model.bin" --verify --max-len "$L" >"$d/out" 2>"$d/err"
    rc=$?
    line=$(grep '^verify:' "$d/out" | tail -n 1)
    case "$rc:$line" in
        "0:verify: "*", 0 mismatches,"*) result=pass ;;
        *) result="FAIL verify $name ($flags, --verify --max-len $L): exit $rc: ${line:-$(head -n 1 "$d/err")}" ;;
    esac
    echo "$result"
    rm -rf "$d"
}

golden_compiled() {
    jobs=${GOLDEN_JOBS:-2}
    lane=0
    while [ "$lane" -lt "$jobs" ]; do
        # Each lane takes the next program no other lane has claimed (mkdir is atomic).
        for in in tests/golden/*.in; do
            name=$(basename "$in" .in)
            [ -f "rasp_examples/$name.rasp" ] || continue
            mkdir "$tmp/claim.$name" 2>/dev/null && compiled_one "$name"
        done >"$tmp/lane.$lane" 2>&1 &
        lane=$((lane + 1))
    done
    wait
    for f in "$tmp"/lane.*; do
        while IFS= read -r l; do
            case $l in
                pass) pass ;;
                FAIL\ *) fail "${l#FAIL }" ;;
                *) echo "$l" ;;
            esac
        done <"$f"
    done
}

# The command-line conventions, on reverse (categorical) at small lengths.
golden_cli() {
    d=$tmp/cli
    mkdir -p "$d"
    prog=rasp_examples/reverse.rasp
    # --opt=value and a JSON --vocab list; --stats says what the self-check checked and file_bytes
    if "$bin/raspcc" "$prog" -o "$d/r.bin" --vocab='["a",",","?"]' --max-len=4 --stats >"$d/out" 2>"$d/err"; then
        size=$(wc -c <"$d/r.bin" | tr -d ' ')
        if grep -q "^file_bytes: *$size\$" "$d/out" &&
            grep -Eq '^selfcheck: +[0-9]+ inputs \(all up to length 4, [0-9]+ random up to 4\), 0 mismatches, ' "$d/out"; then
            pass
        else
            fail "cli --stats: $(tr '\n' ' ' <"$d/out")"
        fi
    else
        fail "cli compile with --opt=value and a JSON --vocab: $(head -n 1 "$d/err")"
    fi
    if "$bin/rasprun" "$d/r.bin" --json --check '[",", "?", "a"]' >"$d/out" 2>"$d/err" &&
        [ "$(cat "$d/out")" = '["a", "?", ","]' ]; then
        pass
    else
        fail "cli rasprun on a JSON-vocab model: $(cat "$d/out") $(head -n 1 "$d/err")"
    fi
    line=$("$bin/rasprun" "$d/r.bin" --verify --max-len=2 2>"$d/err")
    if [ "$line" = "verify: 12 inputs, 0 mismatches, 0 errors agreed" ]; then
        pass
    else
        fail "cli rasprun --verify --max-len=2: $line $(head -n 1 "$d/err")"
    fi
    # --stats --json: one JSON object with file_bytes and the self-check (null with --no-selfcheck)
    for sc in "" --no-selfcheck; do
        if "$bin/raspcc" "$prog" -o "$d/r2.bin" --vocab abc --max-len 3 --stats --json $sc >"$d/out" 2>"$d/err" &&
            python3 - "$d/out" "$(wc -c <"$d/r2.bin")" "$sc" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["file_bytes"] == int(sys.argv[2]), s
if sys.argv[3]:
    assert s["selfcheck"] is None, s
else:
    c = s["selfcheck"]
    assert c["inputs"] == 3 + 9 + 27 + c["random"] and c["exhaustive_len"] == 3 and c["mismatches"] == 0, c
EOF
        then
            pass
        else
            fail "cli --stats --json $sc: $(head -c 300 "$d/out") $(head -n 1 "$d/err")"
        fi
    done
    # bad usage or a bad --vocab: exit 2 and no file
    for args in "--vocab=abc --max-len=0" "--vocab=abc --no-selfcheck=yes" '--vocab=["a",1]' "--vocab=[" "--vocab"; do
        # shellcheck disable=SC2086
        "$bin/raspcc" "$prog" -o "$d/bad.bin" $args >/dev/null 2>"$d/err"
        rc=$?
        if [ "$rc" = 2 ] && [ ! -e "$d/bad.bin" ]; then pass; else fail "cli raspcc $args: exit $rc (want 2, no file)"; fi
    done
    rm -rf "$d"
}

# -D and the real-valued options, on small programs of their own.
golden_cli_options() {
    d=$tmp/opts
    mkdir -p "$d"
    printf 'N = 2;  # the shift\nout = tokens_int + N;\n' >"$d/shift.rasp"
    printf 'out = tokens_float * 2 + 1;\n' >"$d/real.rasp"
    check() { # check WHAT WANT GOT
        if [ "$3" = "$2" ]; then pass; else fail "cli $1: want '$2' got '$3'"; fi
    }
    check "-D N=5 --eval" "[6, 7]" "$("$bin/raspcc" "$d/shift.rasp" -D N=5 --eval '[1, 2]' 2>&1)"
    check "-DN=-1 -DN=3 --eval (the last counts)" "[4, 5]" \
        "$("$bin/raspcc" "$d/shift.rasp" -DN=-1 -DN=3 --eval '[1, 2]' 2>&1)"
    # the model stores the program with the value written in: rasprun --check agrees with it
    "$bin/raspcc" "$d/shift.rasp" -D N=5 -o "$d/s.bin" --vocab 0..3 --max-len 3 2>"$d/err"
    check "-D N=5 -o, rasprun --check" "[6, 7]" "$("$bin/rasprun" "$d/s.bin" --check '[1, 2]' 2>&1)"
    check "-D N=5 --dump-ir" "1" "$("$bin/raspcc" "$d/shift.rasp" -D N=5 --dump-ir 2>&1 | grep -c 'const(5)')"
    "$bin/raspcc" "$d/shift.rasp" -D M=5 --eval 1 >/dev/null 2>"$d/err"
    check "-D M (not assigned): exit and message" \
        "2 $d/shift.rasp: error: -D M: the program has no top-level assignment to 'M'" "$? $(head -n 1 "$d/err")"
    for args in "-D N" "-D =1" "-D 1N=1" "-D N=" "-D N=tokens --eval 1" "-D N=1 --dump-ast"; do
        # shellcheck disable=SC2086
        "$bin/raspcc" "$d/shift.rasp" $args >/dev/null 2>&1
        check "raspcc $args: exit" 2 "$?"
    done
    # a real-valued output: its error bound, no margin checks, the largest error the self-check saw
    if "$bin/raspcc" "$d/real.rasp" -o "$d/r.bin" --range -1..1 --tol 1e-5 --margin=1e-5 --mlp relu --stats --json \
        >"$d/out" 2>"$d/err" && python3 - "$d/out" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["error_bound"] > 0 and s["margin_checks"] == 0, s
c = s["selfcheck"]
assert c["mismatches"] == 0 and c["inside_margin"] == 0 and 0 <= c["max_error"] <= s["error_bound"], c
EOF
    then pass; else fail "cli real-valued --stats --json: $(head -c 300 "$d/out") $(head -n 1 "$d/err")"; fi
    "$bin/raspcc" "$d/real.rasp" -o "$d/r.bin" --range -1..1 --mlp gated --stats >"$d/out" 2>"$d/err"
    if grep -Eq '^error_bound: +[0-9.e+-]+$' "$d/out" && grep -q '^margin_checks: *0$' "$d/out" &&
        grep -Eq '^selfcheck: .*, 0 mismatches, largest error [0-9.e+-]+ \(bound [0-9.e+-]+\), [0-9.]+ s$' "$d/out"; then
        pass
    else
        fail "cli real-valued --stats: $(tr '\n' ' ' <"$d/out") $(head -n 1 "$d/err")"
    fi
    # an exact output: error_bound 0
    "$bin/raspcc" "$d/shift.rasp" -o "$d/s.bin" --vocab 0..3 --max-len 2 --stats >"$d/out" 2>&1
    check "exact output: error_bound" "error_bound:     0" "$(grep '^error_bound' "$d/out")"
    rm -f "$d/bad.bin"
    for args in "--tol 0" "--tol -1e-6" "--tol nan" "--margin inf" "--margin 1e-3x" "--mlp sigmoid" "--mlp"; do
        # shellcheck disable=SC2086
        "$bin/raspcc" "$d/real.rasp" -o "$d/bad.bin" --range -1..1 $args >/dev/null 2>&1
        rc=$?
        if [ "$rc" = 2 ] && [ ! -e "$d/bad.bin" ]; then pass; else fail "cli raspcc $args: exit $rc (want 2, no file)"; fi
    done
    "$bin/raspcc" "$d/real.rasp" --eval --tol 1e-3 '[1.5]' >/dev/null 2>&1
    check "--eval --tol: exit" 2 "$?"
    rm -rf "$d"
}

golden_eval
golden_raspfut
golden_errors
golden_compiled
golden_cli
golden_cli_options

echo "golden: $passed passed, $failed failed"
[ "$failed" = 0 ]
