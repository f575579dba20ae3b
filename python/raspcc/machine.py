"""The machine of docs/model-format.md in NumPy, and the runtime's checks and output decoding.

``run(model, tokens)`` is ``model_run`` of runtime/forward.c: tokenize, run every layer with
average-hard attention (each head's absolute tie tolerance), apply the checks after their
layers in their order, decode the output. It returns the output atoms or raises RaspError with
the message rasprun prints after ``error: ``.

``forward(model, ids, values, beta)`` gives the residual after every layer; with ``beta`` set,
attention is softmax(beta * scores) instead (the approximation the torch module runs; see
"Softmax attention" in docs/model-format.md). ``finish(model, residuals, n)`` applies the checks
and decodes, so any forward pass (this one, the torch module's) is judged the same way.

``run_weights(model, tokens)`` uses the weights alone, as any framework would: the forward pass,
then the plain decoding of docs/model-format.md ("The error flag") without the runtime's checks,
and the error flag of a model compiled with --error-flag (err at each position, a sum of terms
>= 0: the input fails where any is not 0, or lies inside the flag's band, where rasprun answers
with a note; docs/model-format.md, "The error flag").

Where the C runtime's floating-point order decides a result's last bits, this code comes close
without reproducing it: products run over the residual dims each matrix touches, means of the
selected keys are summed in key order, the readout and the margin functionals in dim order, each
from 0.0. rasprun computes each product element as one fused multiply-add chain over the weight
column's entries (runtime/kernels.h), which NumPy cannot express, so a real-valued output may
differ from rasprun's in its last digits (tests/python_diff.py allows 1e-12 relative there); every
decoded atom and every error is the same.
"""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

import numpy as np

from .atoms import Atom, RaspError, format_atom, kind_name
from .model import Model

ONEHOT_TOL = 1e-6  # MODEL_ONEHOT_TOL: a block must be this close to one-hot
MARGIN_ERROR = "within the margin"  # the start of every error of a failed margin check


def embed(model: Model, ids: Sequence[int], values: Optional[np.ndarray] = None) -> np.ndarray:
    """X[p] = embed.token[t_p] + embed.pos[p], row 0 is BOS; real-valued tokens add their value."""
    n = len(ids)
    rows = np.concatenate([[model.bos], np.asarray(ids, dtype=np.int64)])
    X = model.weights["embed.token"][rows] + model.weights["embed.pos"][: n + 1]
    if model.numeric_tokens is not None and values is not None:
        X[1:, model.numeric_tokens["dim"]] += values
    return X


def attention_weights(S: np.ndarray, tie_tol: float, causal: bool, beta: Optional[float],
                      scaled: bool = False) -> np.ndarray:
    """Row i: the weight of each key for query i. Hard (beta None): 1 on the keys scoring at least
    max - tie_tol, else 0 (the mean is taken by the caller); softmax: exp(beta (s - max)),
    unnormalised, or with ``scaled`` exp(beta s - max(beta s)), the order of softmax(beta S)
    in the frameworks (beta s overflows first)."""
    N = S.shape[0]
    allowed = np.tril(np.ones((N, N), dtype=bool)) if causal else np.ones((N, N), dtype=bool)
    S = np.where(allowed, S, -np.inf)
    m = S.max(axis=1, keepdims=True)
    if beta is None:
        return (allowed & ~(S < m - tie_tol)).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        if scaled:
            Z = beta * S
            return np.exp(Z - Z.max(axis=1, keepdims=True))
        return np.exp(beta * (S - m))


def gemm(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A @ B through BLAS dgemm, as the runtime multiplies. NumPy hands a product with one row or
    one column to gemv or dot, which add in another order; a zero row or column keeps it a gemm
    (each entry of a gemm is its own sum, so the padding changes no other entry)."""
    m, n = A.shape[0], B.shape[1]
    if m == 0 or n == 0 or A.shape[1] == 0:
        return np.zeros((m, n))
    if m == 1:
        A = np.vstack([A, np.zeros_like(A)])
    if n == 1:
        B = np.hstack([B, np.zeros_like(B)])
    return (np.ascontiguousarray(A) @ np.ascontiguousarray(B))[:m, :n]


class _Plan:
    """The residual dims one weight matrix reads (its non-zero rows) or writes (its non-zero
    columns), packed, as runtime/forward.c's SparsePlan: products then run over the same
    operands in the same shapes, so BLAS adds in the same order."""

    def __init__(self, W: np.ndarray, reads: bool):
        nz = W != 0
        self.dims = np.flatnonzero(nz.any(axis=1) if reads else nz.any(axis=0))
        self.W = W
        self.packed = np.ascontiguousarray(W[self.dims] if reads else W[:, self.dims])
        self.dense = 4 * len(self.dims) > 3 * (W.shape[0] if reads else W.shape[1])

    def project(self, X: np.ndarray) -> np.ndarray:
        """X W for a matrix that reads the residual."""
        if self.dense:
            return gemm(X, self.W)
        return gemm(X[:, self.dims], self.packed)

    def add_to(self, X: np.ndarray, Y: np.ndarray) -> None:
        """X += Y W for a matrix that writes the residual."""
        if self.dense:
            X += gemm(Y, self.W)
        elif len(self.dims):
            X[:, self.dims] += gemm(Y, self.packed)


class _Plans:
    """Every head's and MLP's plans (and the dims b2 writes), built once per model."""

    def __init__(self, model: Model):
        self.heads = [[tuple(_Plan(w, reads) for w, reads in zip(model.head(l, h), (True, True, True, False)))
                       for h in range(len(layer["heads"]))] for l, layer in enumerate(model.layers)]
        self.mlps = []
        for l, layer in enumerate(model.layers):
            f = model.mlp(l)
            p = {"w1": _Plan(f["w1"], True), "w2": _Plan(f["w2"], False), "b2": np.flatnonzero(f["b2"])}
            if layer["gated"]:
                p["w3"] = _Plan(f["w3"], True)
            self.mlps.append(p)


def _plans(model: Model) -> _Plans:
    if model.cache.get("plans") is None:
        model.cache["plans"] = _Plans(model)
    return model.cache["plans"]


def head_plans(model: Model, l: int, h: int) -> tuple:
    """The (Wq, Wk, Wv, Wo) plans of a head (project / add_to run its products)."""
    return _plans(model).heads[l][h]


def head_values(model: Model, l: int, h: int, X: np.ndarray, beta: Optional[float] = None,
                scaled: bool = False) -> np.ndarray:
    """One head's attention output before Wo: the mean of X Wv over the selected keys (in key
    order from 0.0, BOS's row first times its extra weight, then divided by their count plus that
    weight, as the runtime sums), or the softmax average (BOS's weight times 1 + bos_extra: a
    sink logit)."""
    pq, pk, pv, _ = _plans(model).heads[l][h]
    spec = model.layers[l]["heads"][h]
    extra = spec.get("bos_extra", 0.0)
    S = gemm(pq.project(X), pk.project(X).T)
    V = pv.project(X)
    W = attention_weights(S, spec["tie_tol"], spec["causal"], beta, scaled)
    if beta is not None:  # weights 0 and 1 add the selected rows in key order, as below
        W[:, 0] *= 1.0 + extra
        return gemm(W, V) / W.sum(axis=1, keepdims=True)
    if V.shape[1] == 0:
        return V
    rows = []
    for w in W:
        sel = V[w > 0]
        bos = extra if w[0] > 0 else 0.0
        if bos:
            sel = np.vstack([bos * V[:1], sel])
        rows.append(0.0 + np.cumsum(sel, axis=0)[-1] / (w.sum() + bos))
    return np.stack(rows)


def layer_forward(model: Model, l: int, X: np.ndarray, beta: Optional[float] = None,
                  scaled: bool = False) -> np.ndarray:
    """X after layer l: every head reads X, their outputs are added in head order, then the MLP
    (ReLU(X W1 + b1) * G) W2 + b2 with G = X W3 + b3 when gated, else 1."""
    plans = _plans(model)
    X = X.copy()
    heads = [head_values(model, l, h, X, beta, scaled) for h in range(len(model.layers[l]["heads"]))]
    for h, A in enumerate(heads):
        plans.heads[l][h][3].add_to(X, A)
    f, p = model.mlp(l), plans.mlps[l]
    if f["w1"].shape[1]:
        z = p["w1"].project(X) + f["b1"]
        H = np.where(z > 0.0, z, 0.0)  # the runtime's ReLU: NaN and -0.0 become 0.0
        if model.layers[l]["gated"]:
            H = H * (p["w3"].project(X) + f["b3"])
        p["w2"].add_to(X, H)
    X[:, p["b2"]] += f["b2"][p["b2"]]
    return X


def forward(model: Model, ids: Sequence[int], values: Optional[np.ndarray] = None,
            beta: Optional[float] = None, scaled: bool = False) -> List[np.ndarray]:
    """The residual after each layer ([embedding] for a model of no layers); softmax attention at
    inverse temperature beta when it is given (see attention_weights for ``scaled``)."""
    X = embed(model, ids, values)
    out = []
    for l in range(len(model.layers)):
        X = layer_forward(model, l, X, beta, scaled)
        out.append(X)
    return out or [X]


def run(model: Model, tokens: Sequence[Atom], beta: Optional[float] = None) -> List[Atom]:
    """The output atoms of one input, or RaspError with rasprun's message."""
    ids, values = model.encode(tokens)
    return finish(model, forward(model, ids, values, beta), len(tokens))


# ---- checks and decoding (runtime/forward.c) ----

def c_g(v: float, spec: str = "%g") -> str:
    """printf's %g / %.17g, with glibc's sign on a NaN."""
    if math.isnan(v):
        return "-nan" if math.copysign(1, v) < 0 else "nan"
    return spec % v


def one_hot(x: np.ndarray, dim: int, count: int) -> Optional[int]:
    """The index of the 1 when the block [dim, dim+count) is one-hot within ONEHOT_TOL, else None."""
    hot, ones = None, 0
    for j in range(count):
        v = x[dim + j]
        if abs(v - 1.0) <= ONEHOT_TOL:
            ones, hot = ones + 1, j
        elif abs(v) > ONEHOT_TOL:
            return None
    return hot if ones == 1 else None


def sequential_dot(rows: np.ndarray, dims: Sequence[int], coefs: Sequence[float]) -> np.ndarray:
    """sum_t coefs[t] * rows[:, dims[t]] added in term order from 0.0, as the runtime adds it."""
    if len(dims) == 0:
        return np.zeros(rows.shape[0])
    terms = rows[:, list(dims)] * np.asarray(coefs, dtype=np.float64)
    return 0.0 + np.cumsum(terms, axis=1)[:, -1]


def _nearest(sorted_values: Sequence[float], v: float) -> int:
    """The index of the member nearest v (the lower one on a tie), by the runtime's search."""
    lo, hi = 0, len(sorted_values)
    while lo < hi:
        mid = (lo + hi) // 2
        if sorted_values[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    at = min(lo, len(sorted_values) - 1)
    if lo > 0 and (lo == len(sorted_values) or v - sorted_values[lo - 1] <= sorted_values[lo] - v):
        at = lo - 1
    return at


def check_layer(model: Model, layer: int, X: np.ndarray, n: int) -> None:
    """The checks after `layer`, in their order, on the non-BOS rows of X; raises the first failure."""
    for c in model.checks:
        if c["after_layer"] != layer:
            continue
        kind, what = c["kind"], c["what"]
        if kind == "margin":
            dims = [t[0] for t in c["terms"]]
            vs = sequential_dot(X[1 : n + 1], dims, [t[1] for t in c["terms"]])
            th = [float(t) for t in c["thresholds"]]
            for i, v in enumerate(vs):
                if not math.isfinite(v):
                    raise RaspError("s-op %s is %s at position %d, not a finite number" % (what, c_g(v), i))
                lo = int(np.searchsorted(th, v, side="left"))  # the first threshold not below v
                near = lo if lo < len(th) else lo - 1
                if 0 < lo < len(th) and v - th[lo - 1] < th[lo] - v:
                    near = lo - 1
                if not abs(v - th[near]) > c["margin"]:
                    raise RaspError("%s: s-op %s is %s at position %d, within %s of the threshold %s it is compared "
                                    "with; the model cannot decide the comparison exactly"
                                    % (MARGIN_ERROR, what, format_atom(float(v)), i, c_g(c["margin"]),
                                       format_atom(th[near])))
        elif kind == "one_kind":
            seen = None
            for i in range(n):
                hot = one_hot(X[i + 1], c["dim"], c["count"])
                if hot is None:
                    continue
                if seen is not None and c["strings"][hot] != seen:
                    raise RaspError("s-op %s mixes value types (strings and numbers) across positions" % what)
                seen = c["strings"][hot]
        else:
            for i in range(n):
                x = X[i + 1]
                if kind == "single_key":
                    if not x[c["dim"] + 1] - x[c["dim"]] * x[c["dim"]] < 0.125:
                        raise RaspError("s-op %s averages several non-numeric values at position %d" % (what, i))
                elif one_hot(x, c["dim"], c["count"]) is None:
                    raise RaspError("s-op %s has no value at position %d: the program raises there" % (what, i))


def c_round(v: float) -> float:
    """C's round(): halves away from zero."""
    r = float(math.trunc(v))
    if abs(v - r) >= 0.5:
        r += math.copysign(1.0, v)
    return r


def decode_output(model: Model, X: np.ndarray, n: int) -> List[Atom]:
    """The output atom of each non-BOS row of the final residual (model_read_output)."""
    out = model.output
    if out["kind"] == "categorical":
        atoms = []
        for i in range(n):
            hot = one_hot(X[i + 1], out["dim"], out["count"])
            if hot is None:
                raise RaspError("output s-op %s is not one-hot at position %d (several values were averaged)"
                                % (out["name"], i))
            atoms.append(model.output_values[hot])
        return atoms
    readout = model.weights["output.readout"]
    dims = np.flatnonzero(readout)
    rows = X[1 : n + 1]
    vs = sequential_dot(rows, dims, readout[dims])
    # a 0 weight times a non-finite entry is NaN in the runtime's full sum
    others = np.ones(len(readout), dtype=bool)
    others[dims] = False
    vs[~np.all(np.isfinite(rows[:, others]), axis=1)] = math.nan
    return [_decode_number(model, X[i + 1], float(vs[i]), i, n) for i in range(n)]


def _decode_number(model: Model, x: np.ndarray, v: float, pos: int, n: int) -> Atom:
    out = model.output
    kb = out["kind_block"]
    if not math.isfinite(v):
        raise RaspError("output at position %d: model value %s is not a finite number" % (pos, c_g(v)))
    if not model.output_values:  # unbounded: the number itself, of the kind the kind block names
        if kb is None:
            return v
        hot = one_hot(x, kb["dim"], len(kb["kinds"]))
        if hot is None:
            raise RaspError("output at position %d: the kind block of the output is not one-hot" % pos)
        kind, r = kb["kinds"][hot], c_round(v)
        if kind != "float" and (not abs(v - r) <= out["error_bound"] + out["error_rel"] * abs(r)
                                or abs(r) > 9007199254740992.0 or (kind == "bool" and r not in (0.0, 1.0))):
            raise RaspError("output at position %d: model value %s is not within %s of a %s"
                            % (pos, c_g(v, "%.17g"), c_g(out["error_bound"]), kind))
        return v if kind == "float" else int(r) if kind == "int" else r != 0
    by_length = model.values_by_length
    members = model.output_values
    if by_length:  # decoded against the value set of the input's length
        members = by_length[n - 1] if 1 <= n <= len(by_length) else []
    length = " for an input of length %d" % n if by_length else ""
    nums = [float(a) for a in members]
    at = _nearest(nums, v) if nums else None
    if at is None or not abs(v - nums[at]) <= out["margin"]:
        raise RaspError("output at position %d: model value %s is not within the decoding margin of any value the "
                        "program can produce%s" % (pos, c_g(v, "%.17g"), length))
    first = at
    while first > 0 and nums[first - 1] == nums[at]:
        first -= 1
    same = [a for a, u in zip(members[first:], nums[first:]) if u == nums[at]]
    if kb is None:
        return same[0]
    hot = one_hot(x, kb["dim"], len(kb["kinds"]))
    if hot is None:
        raise RaspError("output at position %d: the kind block of the output is not one-hot" % pos)
    for a in same:
        if kind_name(a) == kb["kinds"][hot]:
            return a
    raise RaspError("output at position %d: model value %s decodes to %s, but no value of kind %s has it%s"
                    % (pos, c_g(v, "%.17g"), format_atom(same[0]), kb["kinds"][hot], length))


def finish(model: Model, residuals: Sequence[np.ndarray], n: int) -> List[Atom]:
    """Checks after each layer (residuals[l] is X after layer l), then the decoded output of the last."""
    for l in range(len(model.layers)):
        check_layer(model, l, residuals[l], n)
    return decode_output(model, residuals[-1], n)


# ---- the weights alone: plain decoding and the error flag ----

def decode_plain(model: Model, X: np.ndarray, n: int) -> List[Atom]:
    """The output atoms of the final residual X without any check: the hot (largest) entry of a
    categorical block; for a numerical output v = x . readout, then the member nearest v among the
    values of the input's length (ties: the smaller), of the kind the kind block's largest entry
    names when it has one (else its first member with that number); v itself for a real-valued
    output (an int or bool rounded when the kind block says so). Meaningful where the error flag
    is 0."""
    out = model.output
    if out["kind"] == "categorical":
        return [model.output_values[int(np.argmax(X[i + 1, out["dim"]: out["dim"] + out["count"]]))] for i in range(n)]
    readout = model.weights["output.readout"]
    dims = np.flatnonzero(readout)
    vs = sequential_dot(X[1 : n + 1], dims, readout[dims])
    kb = out["kind_block"]
    values = model.output_values if model.values_by_length is None else model.values_by_length[n - 1]
    atoms: List[Atom] = []
    for i in range(n):
        v = float(vs[i])
        kind = None if kb is None else kb["kinds"][int(np.argmax(X[i + 1, kb["dim"]: kb["dim"] + len(kb["kinds"])]))]
        if not values:
            r = c_round(v)
            atoms.append(v if kind in (None, "float") else int(r) if kind == "int" else bool(r != 0))
            continue
        nums = [_number(a) for a in values]
        at = _nearest(nums, v)
        same = [a for a in values if _number(a) == nums[at]]
        atoms.append(next((a for a in same if kind_name(a) == kind), same[0]))
    return atoms


def _number(a: Atom) -> float:
    return float(a)


def run_weights(model: Model, tokens: Sequence[Atom], beta: Optional[float] = None,
                scaled: bool = False) -> Tuple[List[Atom], Optional[np.ndarray]]:
    """The weights alone on one input: (outputs, flag). outputs by decode_plain; flag the error
    flag (err at each position, None for a model compiled without --error-flag). By the flag's
    contract (docs/model-format.md, "The error flag"): where rasprun raises, some entry is > 0;
    where every entry is 0, rasprun answers outputs; an entry may also be set where rasprun
    answers with a note, a checked value inside the flag's band (NumPy's own rounding of the
    model decides the last bits there). Raises InputError only for what has no embedding (too
    long, a token outside the vocabulary)."""
    ids, values = model.encode(tokens, check_range=False)
    X = forward(model, ids, values, beta, scaled)[-1]
    n = len(tokens)
    dim = model.error_flag_dim
    return decode_plain(model, X, n), None if dim is None else X[1 : n + 1, dim].copy()
