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
#   6. pictures: raspcc --dot (rendered by Graphviz when `dot` is installed), rasprun --trace and
#      --trace-png (a PNG decoded in Python: every panel present).
#   7. behaving: --opt=value and --opt value in both tools, - for standard input and output, --,
#      -q and -v, and on a pseudo-terminal (Python's pty): colour unless NO_COLOR, progress only
#      there and not with -q.
#   8. raspcc --batch: a manifest of good and bad lines, one JSON result each, in order, the
#      stats --stats --json gives, models that rasprun runs, exit 1 when a line failed.
#   9. the error flag (raspcc --error-flag, rasprun --flag and --info).
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
            grep -Eq '^selfcheck: +[0-9]+ inputs \(3 of one token at length 4, all up to length 4, [0-9]+ random up to 4\), 0 mismatches, ' "$d/out"; then
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
    assert c["inputs"] == c["runs"] + 3 + 9 + 27 + c["random"] and c["runs"] == 3, c
    assert c["exhaustive_len"] == 3 and c["mismatches"] == 0, c
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
    # the softmax inverse temperatures: 746 / (the smallest tie tolerance) and ln(max_len / 1e-12) / it,
    # against the heads rasprun --info lists
    "$bin/raspcc" rasp_examples/reverse.rasp -o "$d/rv.bin" --vocab abc --max-len 6 --stats --json >"$d/out" 2>"$d/err"
    "$bin/rasprun" "$d/rv.bin" --info >"$d/info" 2>&1
    if python3 - "$d/out" "$d/info" <<'EOF'
import json, math, re, sys
s = json.load(open(sys.argv[1]))
info = open(sys.argv[2]).read()
tau = min(float(t) for t in re.findall(r"tie tolerance ([0-9.e+-]+)", info))
assert math.isclose(s["softmax_beta"], 746 / tau, rel_tol=1e-5), (s, tau)  # --info prints tau to 6 digits
assert math.isclose(s["softmax_beta_within"], math.log(6 / 1e-12) / tau, rel_tol=1e-5), (s, tau)
assert re.search(r"^softmax beta: +>= [0-9.e+]+ .*, [0-9.e+]+ \(their weights 0\.0\)", info, re.M), info
EOF
    then pass; else fail "softmax_beta in --stats --json and --info: $(head -c 300 "$d/out") $(grep -i beta "$d/info")"; fi
    # a real-valued output: its error bound, no margin checks, the largest error the self-check saw
    if "$bin/raspcc" "$d/real.rasp" -o "$d/r.bin" --range -1..1 --tol 1e-5 --margin=1e-5 --mlp relu --stats --json \
        >"$d/out" 2>"$d/err" && python3 - "$d/out" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["error_bound"] > 0 and s["margin_checks"] == 0, s
c = s["selfcheck"]
# |value| <= 3 on -1..1: the bound there is error_bound + 3 error_rel
assert c["mismatches"] == 0 and c["inside_margin"] == 0 and 0 <= c["max_error"] <= s["error_bound"] + 3 * s["error_rel"], c
EOF
    then pass; else fail "cli real-valued --stats --json: $(head -c 300 "$d/out") $(head -n 1 "$d/err")"; fi
    "$bin/raspcc" "$d/real.rasp" -o "$d/r.bin" --range -1..1 --mlp gated --stats >"$d/out" 2>"$d/err"
    if grep -Eq '^error_bound: +[0-9.e+-]+$' "$d/out" && grep -q '^margin_checks: *0$' "$d/out" &&
        grep -Eq '^selfcheck: .*, 0 mismatches, largest error [0-9.e+-]+ \(bound [0-9.e+-]+( \+ [0-9.e+-]+ \|value\|)?\), [0-9.]+ s$' "$d/out"; then
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

# raspcc --dot and rasprun --trace / --trace-png, on sort at small lengths.
golden_pictures() {
    d=$tmp/pic
    mkdir -p "$d"
    check() { # check WHAT WANT GOT
        if [ "$3" = "$2" ]; then pass; else fail "pictures $1: want '$2' got '$3'"; fi
    }
    prog=rasp_examples/sort.rasp
    "$bin/raspcc" "$prog" --vocab 0..9 --max-len 4 --dot >"$d/g.dot" 2>"$d/err"
    check "--dot: exit and first line" "0 digraph rasp {" "$? $(head -n 1 "$d/g.dot")"
    check "--dot: sorted by layer 1 head 0" 1 "$(grep -c 'sorted\\naggregate(_, tokens, default=0)\\nlayer 1: head 0 (10 dims)' "$d/g.dot")"
    if command -v dot >/dev/null 2>&1; then
        if dot -Tsvg "$d/g.dot" >"$d/g.svg" 2>"$d/err" && grep -q '<svg' "$d/g.svg"; then pass; else fail "pictures: dot -Tsvg: $(head -n 1 "$d/err")"; fi
    else
        echo "golden: Graphviz not installed: --dot output not rendered (apt-get install graphviz)"
    fi
    # --dot FILE after the program, --dot=FILE, and with -o (both written, nothing on stdout)
    "$bin/raspcc" "$prog" --dot "$d/a.dot" --vocab 0..9 --max-len 4 >"$d/out" 2>&1
    check "--dot FILE" "0 0" "$? $(wc -c <"$d/out" | tr -d ' ')"
    "$bin/raspcc" "$prog" --vocab=0..9 --max-len=4 --dot="$d/b.dot" -o "$d/s.bin" >"$d/out" 2>&1
    check "--dot=FILE -o" "0 0" "$? $(wc -c <"$d/out" | tr -d ' ')"
    if cmp -s "$d/a.dot" "$d/g.dot" && cmp -s "$d/b.dot" "$d/g.dot" && [ -s "$d/s.bin" ]; then pass; else fail "pictures: --dot FILE differs from --dot"; fi
    "$bin/raspcc" "$prog" --vocab 0..9 --dot -o - >/dev/null 2>&1
    check "--dot and -o - both on stdout: exit" 2 "$?"
    # --trace: a section per stage, '+' on what each wrote, the output last
    "$bin/rasprun" "$d/s.bin" --trace '[3, 1, 2]' >"$d/t.txt" 2>"$d/err"
    check "--trace: exit" 0 "$?"
    check "--trace: sections" "embedding|layer 0 (attention: 2 heads; MLP: 8 hidden units)|layer 1 (attention: 1 head; MLP: 0 hidden units)" \
        "$(grep -E '^(embedding|layer)' "$d/t.txt" | tr '\n' '|' | sed 's/|$//')"
    check "--trace: sorted in layer 1" "  + sorted 0 1 2 3" "$(grep '+ sorted' "$d/t.txt" | tr -s ' ' | sed 's/^ /  /')"
    check "--trace: output" "output: [1, 2, 3]" "$(tail -n 1 "$d/t.txt")"
    "$bin/rasprun" "$d/s.bin" --trace 12 >"$d/t.txt" 2>&1
    check "--trace on a token outside the vocabulary: exit" "1" "$?"
    # --trace-png: a PNG with the embedding and both layers, red where the one-hot dims are 1
    "$bin/rasprun" "$d/s.bin" --trace-png "$d/t.png" '[3, 1, 2]' 2>"$d/err"
    check "--trace-png: exit" 0 "$?"
    if python3 - "$d/t.png" <<'EOF2'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, color = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and color == 2, "8-bit RGB"
    if kind == b"IDAT":
        idat += body
    pos += 12 + n
raw, stride, rows, prev = zlib.decompress(idat), 3 * w, [], bytearray(3 * w)
for y in range(h):  # undo the PNG row filters
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - 3] if i >= 3 else 0
        b, c = prev[i], prev[i - 3] if i >= 3 else 0
        p = a + b - c
        pred = [0, a, b, (a + b) // 2, a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) else b if abs(p - b) <= abs(p - c) else c][f]
        line[i] = (line[i] + pred) & 255
    rows.append(line)
    prev = line
# the panels: runs of columns holding pure red cells
red_cols = [x for x in range(w) if any(r[3 * x:3 * x + 3] == b"\xff\x00\x00" for r in rows)]
panels = 1 + sum(1 for a, b in zip(red_cols, red_cols[1:]) if b - a > 12)
assert panels == 3, "panels: %d" % panels
EOF2
    then pass; else fail "pictures: --trace-png: not the picture of 3 stages"; fi
    "$bin/rasprun" "$d/s.bin" --trace-png "$d/t2.png" abc abd >/dev/null 2>&1
    check "--trace-png with two inputs: exit" 2 "$?"
    rm -rf "$d"
}

# The command-line conventions of issue 12: --opt=value, -, --, -q, -v, colour and progress.
golden_behaving() {
    d=$tmp/beh
    mkdir -p "$d"
    check() { # check WHAT WANT GOT
        if [ "$3" = "$2" ]; then pass; else fail "behaving $1: want '$2' got '$3'"; fi
    }
    prog=rasp_examples/reverse.rasp
    # - for the program, the model and the inputs
    check "raspcc - --eval" "[o, l, l, e, h]" "$("$bin/raspcc" - --eval hello <"$prog" 2>&1)"
    check "raspcc -o - | rasprun -" "[c, b, a]" \
        "$("$bin/raspcc" "$prog" -o - --vocab abc --max-len 4 | "$bin/rasprun" - --check abc 2>&1)"
    "$bin/raspcc" "$prog" -o"$d/r.bin" --vocab abc --max-len 4 2>"$d/err"
    check "raspcc -oFILE, rasprun --inputs=-" "[b, a]|[c, c, a]" \
        "$(printf 'ab\nacc\n' | "$bin/rasprun" "$d/r.bin" --inputs=- 2>&1 | tr '\n' '|' | sed 's/|$//')"
    check "raspcc --dump-ast -" 0 "$("$bin/raspcc" - --dump-ast <"$prog" >/dev/null 2>&1; echo $?)"
    for args in "- --inputs - --eval" "$prog -o - --stats --vocab abc" "$prog -o - --fut-target - --vocab abc"; do
        # shellcheck disable=SC2086
        "$bin/raspcc" $args </dev/null >/dev/null 2>&1
        check "raspcc $args: exit" 2 "$?"
    done
    "$bin/rasprun" - --inputs - </dev/null >/dev/null 2>&1
    check "rasprun - --inputs -: exit" 2 "$?"
    printf 's = shift(tokens, 1, "_");\n' >"$d/shift.rasp"
    "$bin/raspcc" "$d/shift.rasp" --vocab abc --max-len 4 --fut-target "$d/t.bin" 2>"$d/err"
    "$bin/raspcc" "$d/shift.rasp" --vocab abc --max-len 4 --fut-target - >"$d/t2.bin" 2>>"$d/err"
    check "--fut-target - is --fut-target FILE" "same" "$(cmp -s "$d/t.bin" "$d/t2.bin" && echo same)$(head -n 1 "$d/err")"
    "$bin/raspcc" "$prog" -o "$d/p.bin" --vocab abc --max-len 3 2>/dev/null
    check "--trace-png -: a PNG on stdout" "PNG" "$("$bin/rasprun" "$d/p.bin" --trace-png - abc | head -c 4 | tail -c 3)"
    # -q leaves out rasprun's notes and summaries: a real-valued model's check summary
    printf 'out = tokens_float * 2 + 1;\n' >"$d/real.rasp"
    "$bin/raspcc" "$d/real.rasp" -o "$d/real.bin" --range -1..1 2>/dev/null
    check "rasprun --check: the summary" 1 "$("$bin/rasprun" "$d/real.bin" --check '[0.5]' 2>&1 >/dev/null | grep -c '^rasprun: check: ')"
    check "rasprun --check -q" "" "$("$bin/rasprun" "$d/real.bin" --check -q '[0.5]' 2>&1 >/dev/null)"
    # --opt=value and --opt value for rasprun's options
    check "rasprun --verify --random=20 --seed=3" "verify: 20 inputs, 0 mismatches, 0 errors agreed" \
        "$("$bin/rasprun" "$d/r.bin" --verify --random=20 --seed=3 2>&1)"
    check "rasprun --verify --random 20 --seed 3" "verify: 20 inputs, 0 mismatches, 0 errors agreed" \
        "$("$bin/rasprun" "$d/r.bin" --verify --random 20 --seed 3 2>&1)"
    check "rasprun --bench=2" 1 "$("$bin/rasprun" "$d/r.bin" --bench=2 2>&1 | grep -c '2 runs')"
    check "rasprun --json=1: exit" 2 "$("$bin/rasprun" "$d/r.bin" --json=1 ab >/dev/null 2>&1; echo $?)"
    # --: inputs that start with '-'; an unknown short option is refused
    check "raspcc -- -ab" "[b, a, -]" "$("$bin/raspcc" "$prog" --eval -- -ab 2>&1)"
    check "rasprun -- -ab" 'error: token "-" at position 0 is not in the vocabulary' "$("$bin/rasprun" "$d/r.bin" -- -ab 2>&1)"
    check "raspcc -x: exit" 2 "$("$bin/raspcc" "$prog" --eval -x >/dev/null 2>&1; echo $?)"
    # -q: no warnings; -v: a line a step on stderr, stdout unchanged
    printf 'set example "hello"\nx = tokens;\n' >"$d/w.rasp"
    check "warning without -q" 1 "$("$bin/raspcc" "$d/w.rasp" --eval abc 2>&1 >/dev/null | grep -c 'warning: REPL command ignored')"
    check "-q" "" "$("$bin/raspcc" "$d/w.rasp" --eval abc -q 2>&1 >/dev/null)"
    "$bin/raspcc" "$prog" -o "$d/v.bin" --vocab abc --max-len 4 -v >"$d/out" 2>"$d/err"
    check "-v: stdout" "" "$(cat "$d/out")"
    check "-v: steps" "raspcc: elaborated|raspcc: compiled|raspcc: self-check|raspcc: wrote" \
        "$(sed 's/^\(raspcc: [a-z-]*\).*/\1/' "$d/err" | tr '\n' '|' | sed 's/|$//')"
    check "rasprun -v" 1 "$("$bin/rasprun" "$d/v.bin" -v abc 2>&1 >/dev/null | grep -c '^rasprun: loaded ')"
    check "-q -v: exit" 2 "$("$bin/raspcc" "$prog" --eval -q -v abc >/dev/null 2>&1; echo $?)"
    # colour and progress: on a terminal only, colour never with NO_COLOR, progress never with -q
    printf 'x = tokens +;\n' >"$d/bad.rasp"
    if python3 - "$bin" "$d/bad.rasp" "$prog" "$d/r.bin" <<'EOF2'
import os, pty, subprocess, sys
bin, bad, prog, model = sys.argv[1:5]
def stderr_of(args, tty, env=None):
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.update(env or {})
    if not tty:
        return subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=e).stderr
    m, s = pty.openpty()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=s, env=e)
    os.close(s)
    out = b""
    while True:
        try:
            chunk = os.read(m, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    p.wait()
    os.close(m)
    return out
err = [bin + "/raspcc", bad, "--eval", "a"]
assert b"[1;31merror:" in stderr_of(err, True), "no colour on a terminal"
assert b"" not in stderr_of(err, True, {"NO_COLOR": "1"}), "colour with NO_COLOR"
assert b"" not in stderr_of(err, False), "colour in a pipe"
assert stderr_of(err, True, {"NO_COLOR": ""}).count(b"[1;31m") == 1, "NO_COLOR empty means colour"
comp = [bin + "/raspcc", prog, "--vocab", "abc", "--max-len", "4", "--stats"]
assert b"raspcc: self-check [" in stderr_of(comp, True), "no self-check progress on a terminal"
assert stderr_of(comp, False) == b"", "progress in a pipe"
assert stderr_of(comp + ["-q"], True) == b"", "progress with -q"
ver = [bin + "/rasprun", model, "--verify"]
assert b"] 100%" in stderr_of(ver, True), "no --verify progress on a terminal"
assert stderr_of(ver, False) == b"", "--verify progress in a pipe"
manifest = os.path.join(os.path.dirname(model), "m.jsonl")
with open(manifest, "w") as f:
    f.write('{"program": "%s", "vocab": "abc", "max-len": 3}\n' % prog * 2)
bat = [bin + "/raspcc", "--batch", manifest]
assert b"raspcc: batch [" in stderr_of(bat, True), "no --batch progress on a terminal"
assert stderr_of(bat, False) == b"", "--batch progress in a pipe"
EOF2
    then pass; else fail "behaving: colour and progress on a terminal (see above)"; fi
    rm -rf "$d"
}

# raspcc --batch: one JSON line per manifest line, errors included.
golden_batch() {
    d=$tmp/batch
    mkdir -p "$d"
    printf 'N = 2;\nout = tokens_int + N;\n' >"$d/shift.rasp"
    cat >"$d/m.jsonl" <<EOF2
{"id": "rev", "program": "rasp_examples/reverse.rasp", "model": "$d/rev.bin", "max-len": 4}
{"id": "sort", "program": "rasp_examples/sort.rasp", "vocab": "0..5", "max-len": 3, "model": "$d/sort.bin"}

{"id": "syntax", "source": "x = tokens +;", "name": "bad.rasp"}
{"id": "missing", "program": "$d/nope.rasp"}
{"id": "flag", "program": "rasp_examples/reverse.rasp", "max-len": 0}
not json
{"id": "D", "program": "$d/shift.rasp", "vocab": [0, 1, 2], "max-len": 3, "defines": {"N": 5}, "model": "$d/shift.bin"}
EOF2
    "$bin/raspcc" --batch "$d/m.jsonl" --vocab abc >"$d/out" 2>"$d/err"
    rc=$?
    "$bin/raspcc" rasp_examples/reverse.rasp --vocab abc --max-len 4 --stats --json >"$d/stats.json" 2>&1
    if [ "$rc" = 1 ] && python3 - "$d/out" "$d/stats.json" <<'EOF2'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 7, "%d result lines" % len(lines)
res = [json.loads(l) for l in lines]
want = [(1, "rev", 0), (2, "sort", 0), (4, "syntax", 2), (5, "missing", 2), (6, "flag", 2), (7, None, 2), (8, "D", 0)]
for r, (line, id, status) in zip(res, want):
    assert (r["line"], r.get("id"), r["status"]) == (line, id, status), r
    assert (r["stats"] is None) == (status != 0) and (r["messages"] == []) == (status == 0), r
# the stats are --stats --json's, key for key
keys = set(json.load(open(sys.argv[2])))
assert set(res[0]["stats"]) == keys and res[0]["stats"]["selfcheck"]["mismatches"] == 0, res[0]["stats"]
assert res[0]["output"] == "reverse" and res[0]["model"].endswith("rev.bin"), res[0]
m = res[2]["messages"][0]
assert (m["severity"], m["file"], m["line"], m["col"]) == ("error", "bad.rasp", 1, 13), m
assert res[3]["messages"][0]["message"].startswith("cannot read "), res[3]
assert res[4]["messages"][0]["message"] == "--max-len needs a positive integer, got '0'", res[4]
assert res[5]["messages"][0]["message"].startswith("manifest line 7 is not JSON"), res[5]
EOF2
    then pass; else fail "batch: exit $rc: $(head -c 400 "$d/out") $(head -n 2 "$d/err")"; fi
    check() { # check WHAT WANT GOT
        if [ "$3" = "$2" ]; then pass; else fail "batch $1: want '$2' got '$3'"; fi
    }
    # the models it wrote run, -D written in
    check "rev.bin" "[c, b, a]" "$("$bin/rasprun" "$d/rev.bin" --check abc 2>&1)"
    check "sort.bin" "[1, 3, 5]" "$("$bin/rasprun" "$d/sort.bin" --check '[5, 1, 3]' 2>&1)"
    check "shift.bin (-D N=5)" "[5, 7]" "$("$bin/rasprun" "$d/shift.bin" --check '[0, 2]' 2>&1)"
    # all good: exit 0, read from stdin; an unreadable manifest: exit 2
    head -n 2 "$d/m.jsonl" | "$bin/raspcc" --batch - --vocab abc --no-selfcheck >"$d/out" 2>&1
    check "--batch - (2 good lines): exit, lines" "0 2" "$? $(wc -l <"$d/out" | tr -d ' ')"
    "$bin/raspcc" --batch "$d/none.jsonl" >/dev/null 2>&1
    check "--batch of a missing manifest: exit" 2 "$?"
    "$bin/raspcc" --batch "$d/m.jsonl" rasp_examples/reverse.rasp >/dev/null 2>&1
    check "--batch with a program: exit" 2 "$?"
    rm -rf "$d"
}

# 9. the error flag: tests/errflag/single_key.rasp compiled with --error-flag, rasprun --flag (text
#    and --json) on tests/errflag/golden.in printing exactly tests/errflag/golden.out (the flag 0
#    where the input passes, set where it fails, none where it cannot be embedded), --info naming
#    the flag, and the usage errors.
golden_errflag() {
    d=$tmp/errflag
    mkdir -p "$d"
    check() { # check WHAT WANT GOT
        if [ "$3" = "$2" ]; then pass; else fail "errflag $1: want '$2' got '$3'"; fi
    }
    "$bin/raspcc" tests/errflag/single_key.rasp --vocab ab --max-len 5 --error-flag -o "$d/m.bin" 2>"$d/err"
    check "raspcc --error-flag: exit" 0 "$?"
    "$bin/rasprun" "$d/m.bin" --flag --inputs tests/errflag/golden.in >"$d/out" 2>>"$d/err"
    rc=$?
    "$bin/rasprun" "$d/m.bin" --flag --json --inputs tests/errflag/golden.in >>"$d/out" 2>>"$d/err"
    check "rasprun --flag: exit (some inputs fail)" "1 1" "$rc $?"
    if cmp -s "$d/out" tests/errflag/golden.out; then pass; else fail "rasprun --flag: output differs from tests/errflag/golden.out"; diff "$d/out" tests/errflag/golden.out | head -5; fi
    "$bin/rasprun" "$d/m.bin" --info >"$d/info"
    if grep -q '^error flag: *residual dim [0-9]* (err)' "$d/info" && grep -q '^compile flags: .*--error-flag' "$d/info"; then pass
    else fail "rasprun --info: no error flag line"; fi
    "$bin/raspcc" tests/errflag/single_key.rasp --eval --error-flag ab >/dev/null 2>&1
    check "raspcc --eval --error-flag: exit" 2 "$?"
    "$bin/rasprun" "$d/m.bin" --flag --check ab >/dev/null 2>&1
    check "rasprun --flag --check: exit" 2 "$?"
    "$bin/raspcc" rasp_examples/reverse.rasp --vocab ab --max-len 3 -o "$d/plain.bin" 2>>"$d/err"
    out=$("$bin/rasprun" "$d/plain.bin" --flag ab 2>&1)
    check "rasprun --flag on a model without a flag" "[b, a]
flag: none
rasprun: warning: --flag: this model has no error flag (compile it with raspcc --error-flag)" "$out"
    rm -rf "$d"
}

golden_eval
golden_raspfut
golden_errors
golden_compiled
golden_cli
golden_cli_options
golden_pictures
golden_behaving
golden_batch
golden_errflag

echo "golden: $passed passed, $failed failed"
[ "$failed" = 0 ]
