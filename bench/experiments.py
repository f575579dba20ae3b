#!/usr/bin/env python3
"""Turns the outputs of bench/experiments.sh (build/experiments/) into the generated parts of
docs/experiments.md (between <!-- BEGIN GENERATED --> and <!-- END GENERATED -->) and the
loss-curve PNGs in docs/experiments/. Standard library only; gnuplot draws the curves when it
is installed. Usage: experiments.py OUT_DIR DOC."""
import glob
import math
import os
import re
import subprocess
import sys

# The paper's reported numbers (issue 14; we have no code of theirs).
PAPER = {
    "dyck1.attn": ("100%", "94.4%", "about the same"),
    "khop.attn": ("about 30–40%", "about 30–40%", "about 99%"),
    "khop.resln": ("100%", "85.7–96.1%", "about 99%"),
    "khop.mlp": ("—", "better than without", "—"),
}
SETTING = {"attn": "attention only", "resln": "residual + layer norm", "mlp": "residual + layer norm + fixed MLP"}
COLUMNS = ["sparse", "random", "full", "looped"]


def read_list(path):
    rows = []
    for line in open(path):
        if line.lstrip().startswith("#") or "|" not in line:
            continue
        fields = [x.strip() for x in line.split("|")]
        rows.append(tuple(fields[:4]))
    return rows


def parse_out(path):
    r = {}
    for line in open(path):
        if line.startswith("accuracy "):
            r["acc"] = float(line.split()[1])
        elif line.startswith("train_seconds "):
            m = re.match(r"train_seconds ([\d.]+) \(cpu ([\d.]+)\)", line)
            r["wall"], r["cpu"] = float(m.group(1)), float(m.group(2))
        elif line.startswith("model "):
            r["model"] = line.strip()
            r["m"] = int(re.search(r" m=(\d+)", line).group(1))
        elif line.startswith("parameters "):
            p = line.split()
            r["trainable"], r["params"] = int(p[1]), int(p[4])
        elif line.startswith("training "):
            r["steps"] = int(re.search(r"steps=(\d+)", line).group(1))
        elif line.startswith("test_examples "):
            m = re.match(r"test_examples (\d+) \((\d+) also", line)
            r["test"], r["seen"] = int(m.group(1)), int(m.group(2))
        elif line.startswith("unseen_examples_correct "):
            p = line.split()
            r["unseen_ok"], r["unseen"] = int(p[1]), int(p[3])
        elif line.startswith("test_answers "):
            r["answers"] = int(line.split()[1])
    return r


def made_with(path, opts):
    """Whether the run's first line (the command, bench/experiment_run.sh) has exactly these options."""
    first = open(path).readline()
    return re.match(r"# raspfut train " + re.escape(opts) + r" --seed \d+ --curve ", first) is not None


def stats(xs):
    n = len(xs)
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    return mean, sd, min(xs), max(xs)


def pct(x):
    return f"{100 * x:.1f}%"


def cell(runs):
    if runs is None:
        return "—"
    if not runs:
        return "not run"
    accs = [r["acc"] for r in runs]
    mean, sd, lo, hi = stats(accs)
    if len(accs) == 1:
        return pct(mean)
    return f"{pct(mean)} ± {100 * sd:.1f} ({pct(lo)}–{pct(hi)})"


def curve(paths, bins=150):
    """Mean loss over seeds, averaged in `bins` bins of steps: [(step, loss)]."""
    series = []
    for p in paths:
        rows = [line.split(",") for line in open(p).read().split("\n")[1:] if line]
        series.append([float(r[1]) for r in rows])
    if not series:
        return []
    n = min(len(s) for s in series)
    if n == 0:
        return []
    mean = [sum(s[i] for s in series) / len(series) for i in range(n)]
    width = max(1, n // bins)
    return [(i + width, sum(mean[i:i + width]) / len(mean[i:i + width])) for i in range(0, n - width + 1, width)]


def plot(out_dir, img_dir, row, cols):
    """One PNG per table row: the mean training loss per backbone against the step."""
    if subprocess.run(["sh", "-c", "command -v gnuplot"], capture_output=True).returncode != 0:
        return None
    os.makedirs(img_dir, exist_ok=True)
    plots = []
    for col, paths in cols:
        pts = curve(paths)
        if not pts:
            continue
        dat = os.path.join(out_dir, f"{row}.{col}.dat")
        with open(dat, "w") as f:
            for s, l in pts:
                f.write(f"{s} {max(l, 1e-6):.6g}\n")
        plots.append(f"'{dat}' using 1:2 with lines lw 2 title '{col}'")
    if not plots:
        return None
    png = os.path.join(img_dir, f"{row}.png")
    script = (
        "set terminal pngcairo size 640,400\n"
        f"set output '{png}'\n"
        f"set title '{row}: training loss (mean over seeds)'\n"
        "set xlabel 'step'\nset ylabel 'cross-entropy'\nset logscale y\nset grid\nset key top right\n"
        "plot " + ", ".join(plots) + "\n"
    )
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    return png


def main():
    out_dir, doc = sys.argv[1], sys.argv[2]
    img_dir = os.path.join(os.path.dirname(doc), "experiments")
    entries = read_list("bench/experiments.list")
    runs = {}
    for ident, row, col, opts in entries:
        files = sorted(glob.glob(os.path.join(out_dir, "runs", f"{ident}.s*.out")),
                       key=lambda p: int(re.search(r"\.s(\d+)\.out$", p).group(1)))
        # Only complete runs made with the options listed now (a changed line leaves stale outputs).
        runs[ident] = [(p, parse_out(p)) for p in files if made_with(p, opts)]
        runs[ident] = [(p, r) for p, r in runs[ident] if "acc" in r]

    lines = []
    # --- the table beside the paper's
    lines.append("### Results beside the paper's\n")
    lines.append("Held-out accuracy, mean ± standard deviation over seeds (lowest–highest). "
                 "Paper numbers as reported; k-hop rows are ours for each k.\n")
    lines.append("| task | setting | sparse: paper | sparse: ours | random: paper | random: ours "
                 "| full: paper | full: ours | looped: ours |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    row_ids = []
    for ident, row, col, opts in entries:
        if row not in row_ids:
            row_ids.append(row)
    for row in row_ids:
        task, setting = row.split(".")
        key = ("dyck1" if task == "dyck1" else "khop") + "." + setting
        paper = PAPER.get(key, ("", "", ""))
        label = "Dyck-1" if task == "dyck1" else f"{task[-1]}-hop"
        # A column the list has no configuration for is "—"; one configured but without runs, "not run".
        got = {col: [r for i, rw, c, o in entries if rw == row and c == col for _, r in runs[i]]
               if any(rw == row and c == col for _, rw, c, _ in entries) else None
               for col in COLUMNS}
        lines.append(f"| {label} | {SETTING[setting]} | {paper[0]} | {cell(got['sparse'])} | {paper[1]} | "
                     f"{cell(got['random'])} | {paper[2]} | {cell(got['full'])} | {cell(got['looped'])} |")

    # --- programmed embeddings
    lines.append("\n### Programmed embeddings (no gradient)\n")
    lines.append("| task | backbone | m | seeds | accuracy | answers |")
    lines.append("|---|---|---|---|---|---|")
    prog = {}
    for p in sorted(glob.glob(os.path.join(out_dir, "programmed", "*.out"))):
        m = re.match(r"(.+)\.(sparse|random)\.s(\d+)\.out$", os.path.basename(p))
        r = parse_out(p)
        if m and "acc" in r:
            prog.setdefault((m.group(1), m.group(2)), []).append((int(m.group(3)), r))
    order = ["dyck1", "khop1", "khop2", "khop3"]
    for (task, kind), rs in sorted(prog.items(), key=lambda kv: (order.index(kv[0][0]) if kv[0][0] in order else 9, kv[0][1])):
        rs.sort()
        accs = [r["acc"] for _, r in rs]
        ms = sorted({r["m"] for _, r in rs})
        label = "Dyck-1" if task == "dyck1" else f"{task[-1]}-hop"
        acc = pct(min(accs)) if min(accs) == max(accs) else f"{pct(min(accs))}–{pct(max(accs))}"
        lines.append(f"| {label} | {kind} | {', '.join(map(str, ms))} | {', '.join(str(s) for s, _ in rs)} | "
                     f"{acc} | {rs[0][1].get('answers', '?')} each |")

    # --- run details
    lines.append("\n### The runs\n")
    lines.append("Per configuration: the options (with `--seed S` for each seed), the width m, trainable and "
                 "total parameters, and per run the wall-clock and processor time of the training steps "
                 "(the machine is shared, so wall-clock is several times the processor time), how many "
                 "held-out examples also occurred among the training draws (Dyck-1 has few short strings), and "
                 "the accuracy on the held-out examples that did not (all seeds together).\n")
    lines.append("| id | options | seeds | m | trainable / total | wall s per run | cpu s per run "
                 "| held-out strings also drawn for training | accuracy on the others |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for ident, row, col, opts in entries:
        rs = [r for _, r in runs[ident]]
        if not rs:
            lines.append(f"| {ident} | `{opts}` | — | | | | | |")
            continue
        seeds = ", ".join(re.search(r"\.s(\d+)\.out$", p).group(1) for p, _ in runs[ident])
        wall, cpu = stats([r["wall"] for r in rs])[0], stats([r["cpu"] for r in rs])[0]
        seen = stats([r["seen"] / r["test"] for r in rs])[0]
        unseen = sum(r.get("unseen", 0) for r in rs)
        other = (f"{pct(sum(r.get('unseen_ok', 0) for r in rs) / unseen)} of {unseen}" if unseen else "—")
        lines.append(f"| {ident} | `{opts}` | {seeds} | {rs[0]['m']} | {rs[0]['trainable']} / {rs[0]['params']} | "
                     f"{wall:.1f} | {cpu:.1f} | {pct(seen)} of {rs[0]['test']} | {other} |")

    # --- the compiler's answer
    comp = os.path.join(out_dir, "compiler.txt")
    if os.path.exists(comp):
        lines.append("\n### The RASP programs through the compiler\n")
        lines.append("```")
        lines.append(open(comp).read().rstrip())
        lines.append("```")

    # --- loss curves
    pngs = []
    for row in row_ids:
        cols = [(col, [p.replace(".out", ".csv") for i, rw, c, o in entries if rw == row and c == col for p, _ in runs[i]])
                for col in COLUMNS]
        png = plot(out_dir, img_dir, row, cols)
        if png:
            pngs.append((row, os.path.relpath(png, os.path.dirname(doc))))
    if pngs:
        lines.append("\n### Loss curves\n")
        for row, rel in pngs:
            lines.append(f"![{row}]({rel})\n")

    generated = "\n".join(lines)
    begin, end = "<!-- BEGIN GENERATED (bench/experiments.py) -->", "<!-- END GENERATED -->"
    text = open(doc).read() if os.path.exists(doc) else f"# Experiments\n\n{begin}\n{end}\n"
    if begin not in text or end not in text:
        text += f"\n{begin}\n{end}\n"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(doc, "w") as f:
        f.write(head + begin + "\n" + generated + "\n" + end + tail)


if __name__ == "__main__":
    main()
