#!/bin/sh
# The simulator benchmark (`make bench` after bench/run.sh, or `make bench-simulator`;
# docs/simulator.md shows and explains a run): sh bench/simulator.sh [BINDIR]
# Table S1: each program of rasp_examples/simulator compiled (raspcc --stats --json): layers and
#   heads per layer beside the simulator paper's, MLP hidden units, file size, the stated error
#   bound, and `raspsim check` on BENCH_SIM_INPUTS (1000) seeded random inputs against the
#   mathematics computed directly (largest |model - mathematics|, the largest allowed).
# Table S2: U (attention.rasp) in several configurations: sizes, compile wall time, stated bound,
#   `raspsim check attention` on BENCH_SIM_INPUTS random X, A, V (1..nmax rows).
# Table S3: `raspsim task` with BENCH_SIM_INPUTS inputs per task: Match2 at two sizes on U d = 3
#   and k-PARITY at two sizes on U d = 5 and d = 7; accuracy, max |U - T|, ms per input.
# Every process runs with OPENBLAS_NUM_THREADS=1, a timeout of BENCH_TIMEOUT seconds (900) and an
# address-space limit of BENCH_MEM_GB GiB (12); a failure prints what happened in its row.
bin=${1:-bin}
[ -x "$bin/raspcc" ] && [ -x "$bin/raspsim" ] || { echo "bench: $bin/raspcc or $bin/raspsim not built" >&2; exit 2; }
OPENBLAS_NUM_THREADS=1
export OPENBLAS_NUM_THREADS
exec python3 - "$bin" <<'EOF'
import json, os, platform, resource, subprocess, sys, tempfile, time

BIN = sys.argv[1]
TIMEOUT = float(os.environ.get("BENCH_TIMEOUT", "900"))
MEM_GB = float(os.environ.get("BENCH_MEM_GB", "12"))
INPUTS = int(os.environ.get("BENCH_SIM_INPUTS", "1000"))
DIR = "rasp_examples/simulator"

def limit():
    lim = int(MEM_GB * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))

def run(args):
    t0 = time.monotonic()
    try:
        p = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT,
                           preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return "timeout", "", "", time.monotonic() - t0
    return ("ok" if p.returncode == 0 else p.returncode), p.stdout, p.stderr, time.monotonic() - t0

def first_error(text):
    lines = [l.strip() for l in text.splitlines() if "error" in l] or [l.strip() for l in text.splitlines() if l.strip()]
    return (lines[0] if lines else "?").replace("|", "\\|")[:160]

def compile(prog, flags, out):
    st, so, se, dt = run([os.path.join(BIN, "raspcc"), os.path.join(DIR, prog + ".rasp"), "-o", out, "--stats",
                          "--json"] + flags)
    if st != "ok":
        return None, "raspcc: " + ("timeout" if st == "timeout" else first_error(se)), dt
    return json.loads(so.strip().splitlines()[-1]), None, dt

def raspsim(args):
    st, so, se, dt = run([os.path.join(BIN, "raspsim")] + args + ["--json"])
    rows = [json.loads(l) for l in so.splitlines() if l.startswith("{")]
    return st, rows, se, dt

def bound(s):
    if s["error_bound"] == 0 and s["error_rel"] == 0:
        return "exact"
    b = "%.2g" % s["error_bound"]
    return b + (" + %.2g\\|v\\|" % s["error_rel"] if s["error_rel"] else "")

stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
try:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
except OSError:
    commit = "?"
print("raspcc simulator benchmark — %s — %s, %d cores — commit %s" % (stamp, platform.machine(), os.cpu_count(), commit))
print("OPENBLAS_NUM_THREADS=1; %d inputs per check and per task; timeout %d s, %g GiB address space per process\n"
      % (INPUTS, TIMEOUT, MEM_GB))
t_all = time.monotonic()
tmp = tempfile.mkdtemp()
failures = 0

# --- Table S1: the programs ---
PROGRAMS = [
    # name, what, raspcc flags, the paper's heads per layer, inputs for raspsim check
    ("transpose", "transpose, 3 x 3", ["--range", "-2..2", "--max-len", "9"], "[1, 1]", INPUTS),
    ("matmul", "3x3 product (ReLU squares)", ["--range", "-2..2", "--max-len", "18"], "[1, 6, 9]", INPUTS),
    ("matmul", "3x3 product (--mlp gated)", ["--range", "-2..2", "--max-len", "18", "--mlp", "gated"], "[1, 6, 9]", INPUTS),
    ("softmax", "softmax of 3 rows of 3", ["--range", "-2..2", "--max-len", "9"], "[1, 3]", INPUTS),
    ("relu", "ReLU", ["--range", "-2..2", "--max-len", "9"], "—", INPUTS),
    ("maxmin", "MaxMin, pairs", ["--range", "-2..2", "--max-len", "10"], "[5, 2]", INPUTS),
    ("inverse", "3x3 inverse (ints -3..3)", ["--vocab", "-3..3", "--max-len", "9"], "[1, 4, 1, 1, 1]", INPUTS // 10),
    ("match2", "Match2, M = 5", ["--vocab", "0..9", "--max-len", "8"], "[1]", INPUTS),
    ("parity", "k-PARITY, S = {0, 2, 3}", ["--vocab", "0..1", "--max-len", "8"], "—", INPUTS),
]
print("Table S1: the simulator programs (heads per layer; the paper's from its RASP programs)\n")
print("| program | flags | layers | heads per layer | paper | MLP hidden | file KB | stated bound | inputs | max \\|model − math\\| | allowed | over |")
print("|---|---|--:|---|---|--:|--:|--:|--:|--:|--:|--:|")
for name, what, flags, paper, n in PROGRAMS:
    out = os.path.join(tmp, name + ".bin")
    s, err, dt = compile(name, flags, out)
    if s is None:
        print("| %s | `%s` | %s |" % (what, " ".join(flags), err)); failures += 1; continue
    st, rows, se, _ = raspsim(["check", out, name, "--inputs", str(n), "--seed", "1"])
    r = rows[0] if rows else None
    failures += st != "ok"
    check = ("%d | %.2g | %.2g | %d" % (r["inputs"], r["max_error"], r["max_allowed"], r["over_bound"])) if r else \
        ("— | raspsim: %s | | " % first_error(se))
    print("| %s | `%s` | %d | %s | %s | %s | %.0f | %s | %s |" % (
        what, " ".join(flags), s["layers"], s["heads"], paper, format(sum(s["mlp_hidden"]), ","),
        s["file_bytes"] / 1e3, bound(s), check))

# --- Table S2: U ---
U = [
    # label, -D flags, raspcc flags (the d = 7 row is checked on a fifth of the inputs: 0.3 s each)
    ("d = 3, nmax = 8, --mlp gated", ["-D", "d=3"], ["--max-len", "42", "--mlp", "gated"]),
    ("d = 3, nmax = 8, --mlp gated, halvings 4", ["-D", "d=3", "-D", "halvings=4"], ["--max-len", "42", "--mlp", "gated"]),
    ("d = 3, nmax = 8, ReLU (the default)", ["-D", "d=3"], ["--max-len", "42"]),
    ("d = 3, nmax = 8, ReLU, halvings 4", ["-D", "d=3", "-D", "halvings=4"], ["--max-len", "42"]),
    ("d = 2, nmax = 8, --mlp gated", ["-D", "d=2"], ["--max-len", "24", "--mlp", "gated"]),
    ("d = 2, nmax = 8, ReLU", ["-D", "d=2"], ["--max-len", "24"]),
    ("d = 3, nmax = 12, --mlp gated", ["-D", "d=3", "-D", "nmax=12"], ["--max-len", "54", "--mlp", "gated"]),
    ("d = 3, nmax = 12, ReLU", ["-D", "d=3", "-D", "nmax=12"], ["--max-len", "54"]),
    ("d = 5, nmax = 4, --mlp gated", ["-D", "d=5", "-D", "nmax=4"], ["--max-len", "70", "--mlp", "gated"]),
    ("d = 5, nmax = 4, ReLU", ["-D", "d=5", "-D", "nmax=4"], ["--max-len", "70"]),
    ("d = 7, nmax = 6, --mlp gated", ["-D", "d=7", "-D", "nmax=6"], ["--max-len", "140", "--mlp", "gated"]),
    ("d = 7, nmax = 6, ReLU", ["-D", "d=7", "-D", "nmax=6"], ["--max-len", "140"]),
]
models = {}
print("\nTable S2: U = attention.rasp (--range -2..2), compiled and checked on random X, A, V\n")
print("| configuration | layers | heads | residual | MLP hidden | file MB | raspcc wall s | stated bound | inputs | max \\|U − T\\| | allowed | over | ms/input |")
print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
for label, defs, flags in U:
    out = os.path.join(tmp, "u%d.bin" % len(models))
    s, err, dt = compile("attention", defs + ["--range", "-2..2"] + flags, out)
    if s is None:
        print("| %s | %s (%.1f s) |" % (label, err, dt)); continue
    models[label] = out
    n = INPUTS // 5 if "d = 7" in label else INPUTS
    st, rows, se, _ = raspsim(["check", out, "attention", "--inputs", str(n), "--seed", "1"])
    r = rows[0] if rows else None
    failures += st != "ok"
    check = ("%d | %.2g | %.2g | %d | %.3g" % (r["inputs"], r["max_error"], r["max_allowed"], r["over_bound"],
                                               r["ms_per_input"])) if r else "— | raspsim: %s | | | " % first_error(se)
    print("| %s | %d | %d | %d | %s | %.1f | %.1f | %s | %s |" % (
        label, s["layers"], sum(s["heads"]), s["residual_width"], format(sum(s["mlp_hidden"]), ","),
        s["file_bytes"] / 1e6, dt, bound(s), check))

# --- Table S3: the tasks ---
TASKS = [
    ("d = 3, nmax = 8, --mlp gated", ["match2:M=5,n=6", "match2:M=7,n=8"]),
    ("d = 5, nmax = 4, --mlp gated", ["parity:n=4,k=2"]),
    ("d = 7, nmax = 6, --mlp gated", ["parity:n=6,k=3"]),
    ("d = 3, nmax = 8, ReLU (the default)", ["match2:M=5,n=6", "match2:M=7,n=8"]),
    ("d = 5, nmax = 4, ReLU", ["parity:n=4,k=2"]),
    ("d = 7, nmax = 6, ReLU", ["parity:n=6,k=3"]),
]
print("\nTable S3: raspsim task — U simulating the single-layer attention that solves each task\n")
print("| U | task | size | inputs | answers | U accuracy | T accuracy | max \\|U − T\\| | allowed | over | readout slack | ms/input |")
print("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
for label, tasks in TASKS:
    if label not in models:
        print("| %s | (U did not compile) |" % label); failures += 1; continue
    st, rows, se, _ = raspsim(["task", models[label]] + tasks + ["--inputs", str(INPUTS), "--seed", "1"])
    failures += st != "ok"
    if not rows:
        print("| %s | raspsim: %s |" % (label, first_error(se)))
    for r in rows:
        print("| %s | %s | %s | %d | %d | %.2f%% | %.2f%% | %.2g | %.2g | %d | %.3g | %.3g |" % (
            label, r["task"], r["size"], r["inputs"], r["answers"], 100.0 * r["correct"] / r["answers"],
            100.0 * r["target_correct"] / r["answers"], r["max_error"], r["max_allowed"], r["over_bound"],
            r["readout_slack"], r["ms_per_input"]))

print("\nbench simulator: %.0f s in all, %d checks failed" % (time.monotonic() - t_all, failures))
sys.exit(1 if failures else 0)
EOF
