#!/usr/bin/env python3
"""Runs a compiled model's weights alone in NumPy, as any framework would (no check, no metadata
but the plain decoding), and prints for each input its decoded output and the error flag of a model
compiled with raspcc --error-flag: err at each position, and "fails" where any is not 0 (there
rasprun raises; docs/model-format.md, "The error flag"). An input that cannot be embedded (too
long, a token outside the vocabulary) prints its error.

usage: run_weights.py MODEL.bin INPUT...
    $ raspcc tests/errflag/single_key.rasp --vocab ab --max-len 5 --error-flag -o m.bin
    $ examples/python/run_weights.py m.bin bba ab
    [b, b, a]  err [2, 2, 0]  fails
    [a, b]  err [0, 0]
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import raspcc  # noqa: E402
from raspcc.atoms import RaspError, format_sequence, parse_input  # noqa: E402


def main(argv):
    if len(argv) < 2 or argv[0] in ("-h", "--help"):
        sys.stdout.write(__doc__)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    model = raspcc.load(argv[0])
    failed = False
    for text in argv[1:]:
        try:
            outputs, flag = raspcc.run_weights(model, parse_input(text))
        except RaspError as e:
            print("error: %s" % e)
            failed = True
            continue
        line = format_sequence(outputs, False)
        if flag is not None:
            line += "  err [%s]" % ", ".join("%g" % x for x in flag)
            if any(x != 0 for x in flag):
                line += "  fails"
                failed = True
        print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
