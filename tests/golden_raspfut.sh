# raspfut's command line (sourced by tests/golden.sh, which provides $bin, $tmp, pass and fail):
# every command's --help; run with many inputs, --inputs FILE and standard input; sizes of 0
# refused; malformed numbers refused with their place; options that do not apply refused (--seed
# and --m for sparse and looped backbones, another command's options); a target with d_k = 0;
# and docs/fut.md's worked example (section 7) end to end, against T(X) computed here in Python.
golden_raspfut() {
    d=$tmp/fut
    mkdir -p "$d"
    fut=$bin/raspfut
    want_exit() { # want_exit WHAT WANT_RC WANT_STDERR_SUBSTRING -- COMMAND...
        what=$1 want=$2 msg=$3
        shift 4
        "$@" >"$d/out" 2>"$d/err"
        rc=$?
        if [ "$rc" = "$want" ] && grep -qF -- "$msg" "$d/err"; then
            pass
        else
            fail "raspfut $what: exit $rc (want $want), stderr '$(head -n 1 "$d/err")' (want '$msg')"
        fi
    }

    # every command answers --help (and `raspfut help CMD`) with its usage and options, exit 0
    for cmd in backbone program run selftest random-target task tasktest; do
        for form in "$cmd --help" "$cmd -h" "help $cmd"; do
            # shellcheck disable=SC2086
            if "$fut" $form >"$d/out" 2>"$d/err" && head -n 1 "$d/out" | grep -q "^usage: raspfut $cmd " &&
                grep -q '^options:$' "$d/out" && [ ! -s "$d/err" ]; then
                pass
            else
                fail "raspfut $form: $(head -n 1 "$d/out") $(head -n 1 "$d/err")"
            fi
        done
    done
    if "$fut" --help | grep -q '^  tasktest '; then pass; else fail "raspfut --help lists no commands"; fi
    if "$fut" backbone --help | grep -q 'm <= 20000' && "$fut" backbone --help | grep -q 'm <= 25000'; then
        pass
    else
        fail "raspfut backbone --help does not state the limits on m"
    fi

    # a backbone, a target, an embedding
    "$fut" backbone --kind sparse --layers 1 --heads 1 --width 3 -o "$d/ut.bin" >/dev/null &&
        "$fut" random-target --layers 1 --heads 1 --width 3 --seed 1 -o "$d/t.bin" &&
        "$fut" program "$d/t.bin" -b "$d/ut.bin" -o "$d/e.bin" >/dev/null ||
        fail "raspfut: could not build a backbone, a target and an embedding"

    # run: 100 inputs on the command line, the same from --inputs FILE and from standard input
    args="" i=1
    : >"$d/inputs"
    while [ "$i" -le 100 ]; do
        args="$args $i,0,-$i;0,1,0"
        echo "$i,0,-$i;0,1,0" >>"$d/inputs"
        i=$((i + 1))
    done
    # shellcheck disable=SC2086
    "$fut" run "$d/ut.bin" "$d/e.bin" $args >"$d/args.out" 2>"$d/err"
    if [ $? = 0 ] && [ "$(grep -c . "$d/args.out")" = 200 ] && [ "$(grep -c '^$' "$d/args.out")" = 99 ]; then
        pass
    else
        fail "raspfut run with 100 inputs: $(grep -c . "$d/args.out") rows printed (want 200): $(head -n 1 "$d/err")"
    fi
    if "$fut" run "$d/ut.bin" "$d/e.bin" --inputs "$d/inputs" | cmp -s - "$d/args.out"; then pass; else
        fail "raspfut run --inputs FILE differs from the same inputs as arguments"; fi
    if "$fut" run "$d/ut.bin" "$d/e.bin" --inputs - <"$d/inputs" | cmp -s - "$d/args.out"; then pass; else
        fail "raspfut run --inputs - differs from the same inputs as arguments"; fi
    n=$("$fut" run "$d/ut.bin" "$d/e.bin" --json --inputs="$d/inputs" |
        python3 -c 'import json, sys; r = json.load(sys.stdin); print(len(r), r[-1]["input"], len(r[-1]["output"]))')
    if [ "$n" = "100 99 2" ]; then pass; else fail "raspfut run --json --inputs: '$n' (want '100 99 2')"; fi

    # sizes are >= 1: 0 is refused, never read as "the default"
    shape="--layers 1 --heads 1 --width 2"
    want_exit "backbone --m 0" 2 "bad value for --m: '0'" -- "$fut" backbone --kind random $shape --m 0 -o "$d/x.bin"
    want_exit "selftest --len 0" 2 "bad value for --len: '0'" -- "$fut" selftest --kind sparse $shape --len 0
    want_exit "selftest --trials 0" 2 "bad value for --trials: '0'" -- "$fut" selftest --kind sparse $shape --trials 0
    want_exit "backbone --layers 0" 2 "bad value for --layers: '0'" -- "$fut" backbone --kind sparse --layers 0 \
        --heads 1 --width 2 -o "$d/x.bin"
    want_exit "tasktest --inputs 0" 2 "bad value for --inputs: '0'" -- "$fut" tasktest match2 --M 3 -b "$d/ut.bin" \
        --inputs 0
    want_exit "backbone --width 0x10" 2 "bad value for --width: '0x10'" -- "$fut" backbone --kind sparse \
        --layers 1 --heads 1 --width 0x10 -o "$d/x.bin"
    # the limit on m: a sparse backbone past 20000
    want_exit "backbone past m = 20000" 2 "m=20480 out of range (need L,H,d >= 1, m <= 20000)" -- "$fut" backbone \
        --kind sparse --layers 2 --heads 1 --width 4096 -o "$d/x.bin"

    # malformed numbers in an INPUT: refused with their place, nothing printed
    for case in "1,,0,0|row 1, number 2: empty (two commas in a row)" \
        "0x10,0,0|row 1, number 1: \"0x10\" is not a decimal number" \
        "1,0,0;1e-400,0,0|row 2, number 1: 1e-400 is too small for a double: it would read as 0" \
        "1,0,1e999|row 1, number 3: 1e999 is too large for a double" \
        "1,0,nan|row 1, number 3: \"nan\" is not a decimal number" \
        "1,0|row 1 has 2 numbers, expected 3"; do
        want_exit "run ${case%%|*}" 2 "${case#*|}" -- "$fut" run "$d/ut.bin" "$d/e.bin" "1,0,0" "${case%%|*}"
        if [ -s "$d/out" ]; then fail "raspfut run ${case%%|*}: printed output before refusing"; else pass; fi
    done
    printf '1,0,0\n\n1,0x1,0\n' >"$d/bad_inputs"
    want_exit "run --inputs (a bad line)" 2 "$d/bad_inputs:3: row 1, number 2: \"0x1\" is not a decimal number" -- \
        "$fut" run "$d/ut.bin" "$d/e.bin" --inputs "$d/bad_inputs"

    # options that would be ignored are refused
    want_exit "backbone sparse --seed" 2 "--seed applies to random backbones only" -- \
        "$fut" backbone --kind sparse $shape --seed 3 -o "$d/x.bin"
    want_exit "backbone looped --seed" 2 "--seed applies to random backbones only" -- \
        "$fut" backbone --kind looped $shape --seed=3 -o "$d/x.bin"
    want_exit "backbone looped --m" 2 "--m applies to random backbones only" -- \
        "$fut" backbone --kind looped $shape --m 30 -o "$d/x.bin"
    want_exit "selftest sparse --m" 2 "--m applies to random backbones only" -- \
        "$fut" selftest --kind sparse $shape --m 30
    want_exit "backbone --trials" 2 "--trials is not an option of raspfut backbone" -- \
        "$fut" backbone --kind sparse $shape --trials 3 -o "$d/x.bin"
    want_exit "run --residual" 2 "--residual is not an option of raspfut run" -- \
        "$fut" run "$d/ut.bin" "$d/e.bin" --residual "1,0,0"
    want_exit "task match2 --seed" 2 "--seed has nothing to draw" -- "$fut" task match2 --M 3 --seed 1 -o "$d/x.bin"
    want_exit "task parity --positions --seed" 2 "--seed has nothing to draw" -- \
        "$fut" task parity --n 4 --k 2 --positions 0,3 --seed 1 -o "$d/x.bin"
    want_exit "tasktest parity --len" 2 "--len applies to match2 only" -- \
        "$fut" tasktest parity --n 4 --k 2 --len 3 -b "$d/ut.bin"
    # --seed does select the random backbone's weights
    for s in 1 1 2; do "$fut" backbone --kind random $shape --seed "$s" -o "$d/r$s.bin" >/dev/null; done
    "$fut" backbone --kind random $shape --seed 1 -o "$d/r1b.bin" >/dev/null
    if cmp -s "$d/r1.bin" "$d/r1b.bin" && ! cmp -s "$d/r1.bin" "$d/r2.bin"; then pass; else
        fail "raspfut backbone --kind random --seed: the seed does not determine the weights"; fi

    # a target whose heads have d_k = 0
    python3 - "$d/dk0.bin" <<'EOF'
import json, struct, sys
names = ["w_q", "w_k", "w_v", "w_o"]
shapes = {"w_q": [3, 0], "w_k": [3, 0], "w_v": [3, 3], "w_o": [3, 3]}
header, off = {"__metadata__": {"format": "raspfut-target", "version": "1", "layers": "1", "heads": "1",
                                "width": "3", "residual": "false", "causal": "false"}}, 0
for n in names:
    size = 8 * shapes[n][0] * shapes[n][1]
    header["layers.0.heads.0." + n] = {"dtype": "F64", "shape": shapes[n], "data_offsets": [off, off + size]}
    off += size
h = json.dumps(header).encode()
h += b" " * (-len(h) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + b"\0" * off)
EOF
    want_exit "program (a target with d_k = 0)" 2 \
        "tensor 'layers.0.heads.0.w_q' has shape [3, 0]: an empty matrix (every extent must be at least 1: a head needs d_k >= 1)" \
        -- "$fut" program "$d/dk0.bin" -b "$d/ut.bin" -o "$d/x.bin"

    # docs/fut.md section 7: W_Q = [1; 2], W_K = [1; 0], W_V = [1; 1], W_O = [1 -1] on X = [1 0; 0 1; 1 1]
    python3 - "$d/t7.bin" <<'EOF'
import json, struct, sys
w = {"w_q": [[1], [2]], "w_k": [[1], [0]], "w_v": [[1], [1]], "w_o": [[1, -1]]}
header, data = {"__metadata__": {"format": "raspfut-target", "version": "1", "layers": "1", "heads": "1",
                                 "width": "2", "residual": "false", "causal": "false"}}, b""
for n, m in w.items():
    flat = [x for row in m for x in row]
    header["layers.0.heads.0." + n] = {"dtype": "F64", "shape": [len(m), len(m[0])],
                                       "data_offsets": [len(data), len(data) + 8 * len(flat)]}
    data += struct.pack("<%dd" % len(flat), *flat)
h = json.dumps(header).encode()
h += b" " * (-len(h) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + data)
EOF
    for kind in sparse "random --seed 1"; do
        # shellcheck disable=SC2086
        "$fut" backbone --kind $kind --layers 1 --heads 1 --width 2 -o "$d/ut7.bin" >/dev/null &&
            "$fut" program "$d/t7.bin" -b "$d/ut7.bin" -o "$d/e7.bin" >/dev/null &&
            "$fut" run "$d/ut7.bin" "$d/e7.bin" --json "1 0;0 1;1 1" >"$d/out" 2>"$d/err"
        if python3 - "$d/out" 2>"$d/py" <<'EOF'; then pass; else fail "raspfut docs/fut.md section 7 ($kind): $(cat "$d/out" "$d/err") $(tail -n 1 "$d/py")"; fi
import json, math, sys
X = [[1, 0], [0, 1], [1, 1]]
q = [x[0] * 1 + x[1] * 2 for x in X]          # X W_Q (d_k = 1, so no scaling)
k = [x[0] * 1 + x[1] * 0 for x in X]          # X W_K
v = [x[0] + x[1] for x in X]                  # X W_V
want = []
for i in range(3):
    s = [q[i] * k[j] for j in range(3)]
    e = [math.exp(t - max(s)) for t in s]
    o = sum(e[j] * v[j] for j in range(3)) / sum(e)
    want.append([o, -o])                      # times W_O = [1 -1]
got = json.load(open(sys.argv[1]))[0]["output"]
err = max(abs(g - w) for gr, wr in zip(got, want) for g, w in zip(gr, wr))
assert len(got) == 3 and err < 1e-11, (got, want)  # --json prints 12 significant digits
assert abs(want[0][0] - 1.42232) < 5e-6 and abs(want[2][0] - 1.48786) < 5e-6, want  # the numbers the doc prints
EOF
    done
    rm -rf "$d"
}
