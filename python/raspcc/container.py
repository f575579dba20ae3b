"""The safetensors container of model.bin (docs/model-format.md, runtime/safetensors.c).

``read_container(raw)`` returns the tensors (name -> NumPy array, F64/I64/I32 little-endian,
read-only views of ``raw``), the ``__metadata__`` strings, and the bytes of the data area. It
refuses, with ContainerError, what the C reader refuses: a file shorter than its header, a
header that is not a JSON object (or over 100 MB), an unknown dtype, a tensor outside the data
area or whose byte count disagrees with its shape, tensors that do not tile the data area
exactly (no gap, overlap or trailing bytes), and non-string metadata.

``fnv1a(h, data)`` is the checksum function (FNV-1a 64) the metadata ``checksum`` uses.
"""

from __future__ import annotations

import json
import struct
from typing import Dict, Tuple

import numpy as np

DTYPES = {"F64": ("<f8", 8), "I64": ("<i8", 8), "I32": ("<i4", 4)}
MAX_HEADER = 100_000_000
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3


class ContainerError(ValueError):
    """A byte string that is not a valid safetensors container."""


def _unique_keys(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ContainerError("safetensors: duplicate key '%s' in the header" % k)
        d[k] = v
    return d


def read_container(raw: bytes) -> Tuple[Dict[str, np.ndarray], Dict[str, str], memoryview]:
    if len(raw) < 8:
        raise ContainerError("safetensors: file too short (%d bytes)" % len(raw))
    (n,) = struct.unpack("<Q", raw[:8])
    if n > MAX_HEADER or n > len(raw) - 8:
        raise ContainerError("safetensors: header length %d exceeds the file" % n)
    try:
        header = json.loads(raw[8 : 8 + n].decode("utf-8"), object_pairs_hook=_unique_keys)
    except (UnicodeDecodeError, ValueError) as e:
        if isinstance(e, ContainerError):
            raise
        raise ContainerError("safetensors: header is not valid JSON: %s" % e) from None
    if not isinstance(header, dict):
        raise ContainerError("safetensors: header is not a JSON object")
    meta = header.pop("__metadata__", {})
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise ContainerError("safetensors: __metadata__ must map keys to strings")
    data = memoryview(raw)[8 + n :]
    spans = []
    tensors: Dict[str, np.ndarray] = {}
    for name, t in header.items():
        if not isinstance(t, dict) or t.get("dtype") not in DTYPES:
            raise ContainerError("safetensors: tensor '%s' has no known dtype (F64, I64, I32)" % name)
        shape, offsets = t.get("shape"), t.get("data_offsets")
        if not (isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape)):
            raise ContainerError("safetensors: tensor '%s' has a bad shape" % name)
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(o, int) for o in offsets)):
            raise ContainerError("safetensors: tensor '%s' has bad data_offsets" % name)
        begin, end = offsets
        np_dtype, size = DTYPES[t["dtype"]]
        if not 0 <= begin <= end <= len(data):
            raise ContainerError("safetensors: tensor '%s' lies outside the data area" % name)
        if end - begin != size * int(np.prod(shape, dtype=object)):
            raise ContainerError("safetensors: tensor '%s' has %d bytes, its shape needs %d"
                                 % (name, end - begin, size * int(np.prod(shape, dtype=object))))
        tensors[name] = np.frombuffer(data[begin:end], np_dtype).reshape(shape)
        spans.append((begin, end))
    at = 0
    for begin, end in sorted(spans):
        if begin != at:
            raise ContainerError("safetensors: the tensors do not tile the data area (gap or overlap at byte %d)" % at)
        at = end
    if at != len(data):
        raise ContainerError("safetensors: %d trailing bytes after the last tensor" % (len(data) - at))
    return tensors, meta, data


def fnv1a(h: int, data: bytes) -> int:
    """FNV-1a 64 of data, continuing from h. A byte at a time (the hash is sequential): about
    0.1 s per MB, so ``load`` lets a caller skip it for large files."""
    for b in bytes(data):
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h
