#!/usr/bin/env python3
"""The original RASP interpreter's per-sequence time on one example (bench/run.sh runs it when
RASP_ORIGINAL names a checkout of the original repository, whose RASP_support needs Debian's
python3-antlr4; its termcolor is replaced by a no-op, as the printouts are discarded):

    python3 bench/python_original.py ORIGINAL_DIR PROGRAM.rasp OUTPUT VOCAB LENGTH COUNT

loads PROGRAM with the original's `load`, then times OUTPUT.call(input) on COUNT random inputs of
LENGTH tokens over VOCAB (comma-separated; ints when they all are). Prints one line:
"python_original: N inputs of length L: M ms per sequence (CPU time)". Nothing of the original
is copied here or built: it is imported from ORIGINAL_DIR as it stands."""
import contextlib, io, os, random, shutil, sys, tempfile, time, types

def main():
    orig, prog, out_name, vocab, length, count = sys.argv[1:7]
    length, count = int(length), int(count)
    toks = vocab.split(",")
    if all(t.lstrip("-").isdigit() for t in toks):
        toks = [int(t) for t in toks]
    sys.path.insert(0, orig)
    # Only colours its printouts (discarded here); Debian's termcolor 1.1 lacks a colour it names.
    shim = types.ModuleType("termcolor")
    shim.colored = lambda text, *a, **kw: text
    sys.modules["termcolor"] = shim
    here = os.getcwd()
    os.chdir(orig)  # its library loads from "RASP_support/rasplib"
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(os.path.join(here, prog), os.path.join(tmp, "prog.rasp"))
        with contextlib.redirect_stdout(io.StringIO()):
            from RASP_support.REPL import REPL
            repl = REPL()
            repl.run_given_line('load "%s";' % os.path.join(tmp, "prog"))
        sop = repl.env.get_variable(out_name)
        rng = random.Random(1)
        inputs = [[rng.choice(toks) for _ in range(length)] for _ in range(count)]
        sop.call(inputs[0])  # warm-up
        t0 = time.process_time()
        for w in inputs:
            sop.call(w)
        dt = time.process_time() - t0
    print("python_original: %d inputs of length %d: %.3f ms per sequence (CPU time)" % (count, length, 1e3 * dt / count))

if __name__ == "__main__":
    main()
