#!/usr/bin/env python3
"""Runs a compiled model (model.bin) as a torch.nn.Module (softmax attention at the sufficient
inverse temperature, CPU, float64, inputs batched) and prints exactly what
`rasprun MODEL [--json] INPUT...` prints: the runtime's checks and output decoding applied to
the module's residual stream. Needs python/ on the path (found relative to this file), NumPy
and PyTorch."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402

from raspcc import machine  # noqa: E402
from raspcc.atoms import RaspError  # noqa: E402
from raspcc.cli import main  # noqa: E402
from raspcc.torch_model import encode, to_torch  # noqa: E402

BATCH = 64


def run_all(model, inputs):
    net = to_torch(model)
    results = [None] * len(inputs)
    ok = []
    for k, tokens in enumerate(inputs):
        try:
            model.encode(tokens)
            ok.append(k)
        except RaspError as e:
            results[k] = e
    with torch.no_grad():
        for start in range(0, len(ok), BATCH):
            batch = ok[start : start + BATCH]
            ids, lengths, values = encode(model, [inputs[k] for k in batch])
            layers = [x.numpy() for x in net(ids, lengths, values, all_layers=True)]
            for row, k in enumerate(batch):
                n = len(inputs[k])
                try:
                    results[k] = machine.finish(model, [x[row, : n + 1] for x in layers], n)
                except RaspError as e:
                    results[k] = e
    return results


if __name__ == "__main__":
    sys.exit(main("run_torch.py", run_all, help_text=__doc__.split("\n", 1)[0] + "\n"))
