"""model.bin read into NumPy: ``load(path) -> Model`` (docs/model-format.md is the reference).

The loader checks what runtime/model_io.c checks to run a model safely: the container, the
format name and version (3), the checksum, every tensor the configuration implies present in
exactly one form (dense, or sparse ``.shape``/``.index``/``.values`` with a strictly
increasing index in range) with its shape, finite entries, no other tensor, and the
configuration fields the forward pass and the decoding read. It does not repeat every rule of
the output contract (sorted value sets, gaps against the margin): raspcc's writer and rasprun's
reader enforce those. Errors are ModelError with rasprun's wording where the C reader has one
(``not a raspcc model file``, ``raspcc model version 2 is no longer supported ...``, ``model
file is corrupted: checksum mismatch ...``).

Weights are dense float64 arrays in the row-vector convention of the file: ``X @ W``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .atoms import TOKEN_TYPES, Atom, InputError, convert_token, format_atom, vocab_equal
from .container import FNV_OFFSET, ContainerError, fnv1a, read_container

FORMAT_NAME = "raspcc-model"
FORMAT_VERSION = "3"
CHECKSUMMED = ("format", "version", "config", "labels", "program", "program_name", "compile_flags")
INT64 = (-(2**63), 2**63 - 1)


class ModelError(ValueError):
    """A file load() refuses; the message names the problem."""


@dataclass
class Model:
    """A compiled model: configuration, residual labels, dense weights and provenance.

    ``weights`` maps each logical tensor name of the format (``embed.token``, ``embed.pos``,
    ``layer.L.head.H.wq`` ..., ``layer.L.mlp.w1`` ..., ``output.readout``) to a float64 array of
    the documented shape, whichever form the file stored it in."""

    config: Dict[str, Any]
    labels: List[str]
    weights: Dict[str, np.ndarray]
    vocab: List[Atom]
    output_values: List[Atom]
    values_by_length: Optional[List[List[Atom]]]
    program: str = ""
    program_name: str = ""
    compile_flags: str = ""
    metadata: Dict[str, str] = field(default_factory=dict)
    cache: Dict[str, Any] = field(default_factory=dict, repr=False)  # derived data (raspcc.machine's plans)

    @property
    def d_model(self) -> int:
        return self.config["d_model"]

    @property
    def max_len(self) -> int:
        return self.config["max_len"]

    @property
    def n_vocab(self) -> int:
        return self.config["n_vocab"]

    @property
    def bos(self) -> int:
        """The token id of BOS (row n_vocab of embed.token)."""
        return self.config["n_vocab"]

    @property
    def layers(self) -> List[Dict[str, Any]]:
        return self.config["layers"]

    @property
    def output(self) -> Dict[str, Any]:
        return self.config["output"]

    @property
    def checks(self) -> List[Dict[str, Any]]:
        return self.config["checks"]

    @property
    def numeric_tokens(self) -> Optional[Dict[str, Any]]:
        return self.config["numeric_tokens"]

    @property
    def error_flag_dim(self) -> Optional[int]:
        """The residual dim of the error flag (raspcc --error-flag), or None for a model without one."""
        flag = self.config.get("error_flag")
        return None if flag is None else flag["dim"]

    def head(self, layer: int, head: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(Wq, Wk, Wv, Wo) of a head: [D, dk], [D, dk], [D, dv], [dv, D]."""
        p = "layer.%d.head.%d." % (layer, head)
        return tuple(self.weights[p + w] for w in ("wq", "wk", "wv", "wo"))  # type: ignore[return-value]

    def mlp(self, layer: int) -> Dict[str, np.ndarray]:
        """The MLP's tensors by short name: w1, b1, w2, b2 (and w3, b3 when gated)."""
        p = "layer.%d.mlp." % layer
        return {k[len(p):]: v for k, v in self.weights.items() if k.startswith(p)}

    def encode(self, tokens: Sequence[Atom], check_range: bool = True) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """Token ids of an input (BOS excluded) and, for real-valued tokens, their values.

        Raises InputError with rasprun's messages, in its order: a token its token type refuses,
        too long, a token outside the vocabulary or (with check_range) outside the real range. The first
        three have no embedding; a real token outside the range has one, and the error flag sees
        it (run_weights passes check_range=False)."""
        n = len(tokens)
        tt = self.config["token_type"]
        converted = [convert_token(tt, a) for a in tokens]  # the reference's order: conversion first
        if n > self.max_len:
            raise InputError("input has length %d > max length %d" % (n, self.max_len))
        ids = np.zeros(n, dtype=np.int64)
        values = np.zeros(n) if self.numeric_tokens else None
        for i, (a, tok) in enumerate(zip(tokens, converted)):
            if values is not None:
                lo, hi = float(self.numeric_tokens["lo"]), float(self.numeric_tokens["hi"])
                v = float(tok)
                if check_range and not (lo <= v <= hi):
                    raise InputError("token %s at position %d is outside the range %g..%g the model was compiled for"
                                     % (format_atom(a), i, lo, hi))
                values[i] = v
                continue
            for v, atom in enumerate(self.vocab):
                if vocab_equal(tok, atom):
                    ids[i] = v
                    break
            else:
                raise InputError("token %s at position %d is not in the vocabulary" % (format_atom(a), i))
        return ids, values

    def dims_of(self, sop: str) -> List[int]:
        """The residual dims of an s-op: its labels ``sop`` (numerical) or ``sop:VALUE`` (one-hot)."""
        return [d for d, l in enumerate(self.labels) if l == sop or l.startswith(sop + ":")]

    def describe(self, x: np.ndarray, tol: float = 1e-6) -> List[str]:
        """A residual row decoded by its labels: ``sop:VALUE`` for a one-hot dim at 1, and
        ``label=value`` for every other dim farther than tol from 0."""
        return [l if abs(v - 1) <= tol and re.fullmatch(r"[^:]+:\S.*", l) else "%s=%.6g" % (l, v)
                for l, v in zip(self.labels, x) if abs(v) > tol]


def load(path: str, verify_checksum: bool = True) -> Model:
    """Reads model.bin at path. Raises ModelError ("PATH: why") for any file rasprun refuses to run."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ModelError("cannot open %s: %s" % (path, e.strerror)) from None
    try:
        return load_bytes(raw, verify_checksum)
    except (ContainerError, ModelError) as e:
        raise ModelError("%s: %s" % (path, e)) from None


def load_bytes(raw: bytes, verify_checksum: bool = True) -> Model:
    tensors, meta, data = read_container(raw)
    fmt, version = meta.get("format"), meta.get("version")
    if fmt != FORMAT_NAME:
        shown = '"%s"' % fmt[:40] if fmt is not None else "missing"
        raise ModelError("not a raspcc model file (safetensors metadata 'format' is %s, expected \"%s\")"
                         % (shown, FORMAT_NAME))
    if version == "1":
        raise ModelError("raspcc model version 1 is no longer supported (this build reads version 3, with sparse "
                         "tensors and exact readout): recompile the program with raspcc")
    if version == "2":
        raise ModelError("raspcc model version 2 is no longer supported (this build reads version 3, with gated MLPs "
                         "and margin checks): recompile the program with raspcc")
    if version != FORMAT_VERSION:
        raise ModelError('unsupported raspcc model version "%s" (this build reads version 3)'
                         % (version[:40] if version is not None else "(missing)"))
    for key in CHECKSUMMED:
        if key not in meta:
            raise ModelError("model: metadata '%s' is missing" % key)
    if "checksum" not in meta:
        raise ModelError("model: metadata 'checksum' is missing")
    if verify_checksum:
        h = fnv1a(FNV_OFFSET, data)
        for key in CHECKSUMMED:
            h = fnv1a(h, meta[key].encode("utf-8") + b"\0")
        if "%016x" % h != meta["checksum"]:
            raise ModelError("model file is corrupted: checksum mismatch (stored %s, computed %016x)"
                             % (meta["checksum"][:20], h))
    try:
        config = json.loads(meta["config"])
        labels = json.loads(meta["labels"])
    except ValueError as e:
        raise ModelError("model: config or labels are not valid JSON: %s" % e) from None
    return _build(config, labels, tensors, meta)


# ---- the configuration ----

def _fail(msg: str, *args: Any) -> None:
    raise ModelError("model: config: " + (msg % args if args else msg))


def _size(obj: Any, key: str, where: str = "") -> int:
    v = obj.get(key) if isinstance(obj, dict) else None
    if v is None:
        _fail("%s lacks '%s'", where, key)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        _fail("%s '%s' is not a size", where, key)
    return v


def _nonneg(obj: Dict[str, Any], key: str, where: str) -> float:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        _fail("%s '%s' must be a finite number >= 0", where, key)
    return float(v)


def _atoms(items: Any, what: str) -> List[Atom]:
    if not isinstance(items, list):
        _fail("%s must be an array", what)
    out: List[Atom] = []
    for i, x in enumerate(items):
        if isinstance(x, int) and not isinstance(x, bool) and not INT64[0] <= x <= INT64[1]:
            _fail("%s %d is out of range", what, i)
        if isinstance(x, float) and not math.isfinite(x):
            _fail("%s %d is not finite", what, i)
        if not isinstance(x, (str, bool, int, float)):
            _fail("%s %d is not an atom", what, i)
        out.append(x)
    return out


def _config(config: Any, labels: Any) -> None:
    """The checks of the configuration the forward pass and the decoding rely on."""
    if not isinstance(config, dict):
        raise ModelError("model: config is not a JSON object")
    for key in ("d_model", "max_len", "n_vocab", "n_layers"):
        _size(config, key)
    D = config["d_model"]
    if D == 0:
        _fail("d_model is 0")
    if config.get("token_type") not in TOKEN_TYPES:
        _fail("unknown token_type")
    nt = config.get("numeric_tokens", "missing")
    if nt == "missing":
        _fail("'numeric_tokens' is missing")
    if nt is not None and not (isinstance(nt, dict) and _size(nt, "dim", "numeric_tokens") < D
                               and all(isinstance(nt.get(k), (int, float)) for k in ("lo", "hi"))
                               and nt["lo"] <= nt["hi"] and config["n_vocab"] == 1):
        _fail("numeric_tokens needs dim < d_model, finite lo <= hi, one vocabulary row")
    if not (isinstance(labels, list) and len(labels) == D and all(isinstance(l, str) for l in labels)):
        raise ModelError("model: labels must be an array of d_model = %d strings" % D)
    layers = config.get("layers")
    if not isinstance(layers, list) or len(layers) != config["n_layers"]:
        _fail("'layers' must be an array of n_layers entries")
    for l, layer in enumerate(layers):
        where = "layer %d" % l
        if not isinstance(layer, dict) or not isinstance(layer.get("heads"), list):
            _fail("%s 'heads' must be an array", where)
        for h, head in enumerate(layer["heads"]):
            hw = "layer %d head %d" % (l, h)
            _size(head, "dk", hw), _size(head, "dv", hw), _nonneg(head, "tie_tol", hw)
            if "bos_extra" in head and _nonneg(head, "bos_extra", hw) > 2.0 ** 50:  # a heavy BOS (absent: 0)
                _fail("%s 'bos_extra' must be at most 2^50", hw)
            if not isinstance(head.get("causal"), bool):
                _fail("%s 'causal' must be true or false", hw)
        _size(layer, "mlp_hidden", where)
        if not isinstance(layer.get("gated"), bool):
            _fail("%s 'gated' must be true or false", where)
    out = config.get("output")
    if not isinstance(out, dict) or not isinstance(out.get("name"), str):
        _fail("'output' must be an object with a name")
    if out.get("kind") == "categorical":
        if _size(out, "dim", "output") + _size(out, "count", "output") > D:
            _fail("output block is outside the residual")
    elif out.get("kind") == "numerical":
        for key in ("margin", "error_bound", "error_rel"):
            _nonneg(out, key, "output")
        if "legacy_integral" in out:
            _fail("output 'legacy_integral' is no longer supported (a model of an older compiler): recompile the "
                  "program with raspcc")
        kb = out.get("kind_block", "missing")
        if kb == "missing":
            _fail("output lacks 'kind_block'")
        if kb is not None and not (isinstance(kb, dict) and isinstance(kb.get("kinds"), list)
                                   and 1 <= len(kb["kinds"]) <= 3
                                   and all(k in ("bool", "int", "float") for k in kb["kinds"])
                                   and _size(kb, "dim", "output kind_block") + len(kb["kinds"]) <= D):
            _fail("output kind_block must name 1 to 3 kinds (\"bool\", \"int\" or \"float\") inside the residual")
    else:
        _fail("output 'kind' must be \"categorical\" or \"numerical\"")
    checks = config.get("checks")
    if not isinstance(checks, list):
        _fail("'checks' must be an array")
    for i, c in enumerate(checks):
        where = "check %d" % i
        if not isinstance(c, dict) or not isinstance(c.get("what"), str):
            _fail("%s 'what' must be a string", where)
        if _size(c, "after_layer", where) >= config["n_layers"]:
            _fail("%s is after layer %d of a model of %d layers", where, c["after_layer"], config["n_layers"])
        kind = c.get("kind")
        if kind == "margin":
            terms, thresholds, margin = c.get("terms"), c.get("thresholds"), c.get("margin")
            if not (isinstance(terms, list) and terms and all(
                    isinstance(t, list) and len(t) == 2 and isinstance(t[0], int) and 0 <= t[0] < D
                    and isinstance(t[1], (int, float)) for t in terms)):
                _fail("%s (margin) terms must be [dim, finite coefficient] pairs with dims < d_model", where)
            if not (isinstance(thresholds, list) and thresholds
                    and all(isinstance(x, (int, float)) and math.isfinite(x) for x in thresholds)
                    and all(a < b for a, b in zip(thresholds, thresholds[1:]))):
                _fail("%s (margin) thresholds must be finite and strictly increasing", where)
            if not (isinstance(margin, (int, float)) and math.isfinite(margin) and margin > 0):
                _fail("%s (margin) 'margin' must be a finite number > 0", where)
        elif kind in ("one_hot", "single_key", "one_kind"):
            if _size(c, "dim", where) + _size(c, "count", where) > D:
                _fail("%s block is outside the residual", where)
            if kind == "single_key" and c["count"] != 2:
                _fail("%s (single_key) must span 2 dims", where)
            if kind == "one_kind" and not (isinstance(c.get("strings"), list) and len(c["strings"]) == c["count"]
                                           and all(isinstance(s, bool) for s in c["strings"])):
                _fail("%s needs one boolean string flag per dim", where)
        else:
            _fail("%s has unknown kind '%s'", where, str(kind)[:40])
    flag = config.get("error_flag")  # absent or null: none (files before --error-flag)
    if flag is not None and not (isinstance(flag, dict) and _size(flag, "dim", "error_flag") < D):
        _fail("'error_flag' must be null or {\"dim\": d} with d < d_model")


# ---- the tensors ----

def implied_tensors(config: Dict[str, Any]) -> List[Tuple[str, Tuple[int, ...]]]:
    """Every logical tensor the configuration implies, with its shape, in the format's order."""
    D = config["d_model"]
    out = [("embed.token", (config["n_vocab"] + 1, D)), ("embed.pos", (config["max_len"] + 1, D))]
    for l, layer in enumerate(config["layers"]):
        for h, head in enumerate(layer["heads"]):
            p = "layer.%d.head.%d." % (l, h)
            dk, dv = head["dk"], head["dv"]
            out += [(p + "wq", (D, dk)), (p + "wk", (D, dk)), (p + "wv", (D, dv)), (p + "wo", (dv, D))]
        H, p = layer["mlp_hidden"], "layer.%d.mlp." % l
        out += [(p + "w1", (D, H)), (p + "b1", (H,)), (p + "w2", (H, D)), (p + "b2", (D,))]
        if layer["gated"]:
            out += [(p + "w3", (D, H)), (p + "b3", (H,))]
    if config["output"]["kind"] == "numerical":
        out.append(("output.readout", (D,)))
    return out


def _dense(tensors: Dict[str, np.ndarray], name: str, shape: Tuple[int, ...], used: set) -> np.ndarray:
    """A logical tensor from its dense or sparse form (checked as the C reader checks it)."""
    parts = [name + s for s in (".shape", ".index", ".values")]
    sparse = [p in tensors for p in parts]
    if name in tensors:
        if any(sparse):
            raise ModelError("model: tensor '%s' is stored both dense and sparse" % name)
        W = tensors[name]
        if W.dtype != np.dtype("<f8") or W.shape != shape:
            raise ModelError("model: tensor '%s' must be F64 of shape %s" % (name, list(shape)))
        W = np.array(W, dtype=np.float64)
        used.add(name)
    elif all(sparse):
        shp, index, values = (tensors[p] for p in parts)
        if shp.dtype != np.dtype("<i8") or shp.shape != (len(shape),) or tuple(int(s) for s in shp) != shape:
            raise ModelError("model: tensor '%s.shape' must be I64 %s" % (name, list(shape)))
        if index.dtype not in (np.dtype("<i4"), np.dtype("<i8")) or index.ndim != 1:
            raise ModelError("model: tensor '%s.index' must be an I32 or I64 vector" % name)
        if values.dtype != np.dtype("<f8") or values.shape != index.shape:
            raise ModelError("model: tensor '%s.values' must be F64 with one entry per index" % name)
        size = int(np.prod(shape, dtype=np.int64))
        if len(index) and (index[0] < 0 or index[-1] >= size or np.any(np.diff(index) <= 0)):
            raise ModelError("model: tensor '%s.index' must be strictly increasing and below %d" % (name, size))
        W = np.zeros(shape, dtype=np.float64)
        W.flat[index.astype(np.int64)] = values
        used.update(parts)
    elif any(sparse):
        raise ModelError("model: sparse tensor '%s' lacks some of .shape, .index, .values" % name)
    else:
        raise ModelError("model: tensor '%s' is missing" % name)
    if not np.all(np.isfinite(W)):
        raise ModelError("model: tensor '%s' has a non-finite entry" % name)
    return W


def _build(config: Any, labels: Any, tensors: Dict[str, np.ndarray], meta: Dict[str, str]) -> Model:
    _config(config, labels)
    used: set = set()
    weights = {name: _dense(tensors, name, shape, used) for name, shape in implied_tensors(config)}
    for l, layer in enumerate(config["layers"]):
        for w in ("w3", "b3"):
            name = "layer.%d.mlp.%s" % (l, w)
            if not layer["gated"] and (name in tensors or name + ".shape" in tensors):
                raise ModelError("model: tensor '%s' is present but layer %d is not gated (config 'gated': false)"
                                 % (name, l))
    extra = sorted(set(tensors) - used)
    if extra:
        raise ModelError("model: tensor '%s' is not described by the config" % extra[0])
    vocab = _atoms(config.get("vocab"), "vocabulary atom")
    if len(vocab) != config["n_vocab"]:
        _fail("n_vocab is %d but 'vocab' has %d atoms", config["n_vocab"], len(vocab))
    out = config["output"]
    values = _atoms(out.get("values"), "output value")
    if out["kind"] == "categorical" and len(values) != out["count"]:
        _fail("output has %d dims but %d values", out["count"], len(values))
    vbl = out.get("values_by_length")
    by_length = None
    if vbl is not None:
        if out["kind"] != "numerical" or not isinstance(vbl, list) or len(vbl) != config["max_len"]:
            _fail("output 'values_by_length' must be null or max_len lists on a numerical output")
        by_length = [_atoms(v, "output value of length %d, number" % (n + 1)) for n, v in enumerate(vbl)]
    return Model(config=config, labels=labels, weights=weights, vocab=vocab, output_values=values,
                 values_by_length=by_length, program=meta.get("program", ""),
                 program_name=meta.get("program_name", ""), compile_flags=meta.get("compile_flags", ""),
                 metadata=dict(meta))
