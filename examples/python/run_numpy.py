#!/usr/bin/env python3
"""Runs a compiled model (model.bin) in NumPy and prints exactly what `rasprun MODEL [--json] INPUT...`
prints: the machine of docs/model-format.md with average-hard attention, the runtime's checks and
its output decoding. Needs python/ on the path (found relative to this file) and NumPy."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from raspcc import machine  # noqa: E402
from raspcc.atoms import RaspError  # noqa: E402
from raspcc.cli import main  # noqa: E402


def run_all(model, inputs):
    results = []
    for tokens in inputs:
        try:
            results.append(machine.run(model, tokens))
        except RaspError as e:
            results.append(e)
    return results


if __name__ == "__main__":
    sys.exit(main("run_numpy.py", run_all, help_text=__doc__.split("\n", 1)[0] + "\n"))
