"""The inverse temperature at which softmax attention reproduces the model's hard attention.

A head of the model averages, for query i, the keys T_i scoring at least m_i - tau (m_i the
row's maximum, tau the head's tie tolerance ``tie_tol`` in the file); every other allowed key
scores below m_i - tau. Softmax at inverse temperature beta gives key j the weight
w_j = exp(beta (s_j - m_i)) / Z with Z >= 1 (the maximum's own term). Two things can differ
from the hard mean:

- the keys outside T_i: together they weigh at most (N - 1) exp(-beta tau) for N <= max_len + 1
  keys. ``sufficient_beta`` = ln(max_len / eps) / tau bounds that by eps; ``exact_beta`` =
  746 / tau makes each of those weights exactly 0.0 in float64 (exp(-x) underflows to 0 for
  x > 745.14), which an exact output (error bound 0, an int read from a real) needs;
- the keys inside T_i: they score alike only up to rounding. Their largest spread delta
  (``score_spread`` measures it on inputs; 0 to 1e-12 in compiled models, growing with
  max_len) gives weights exp(-beta delta) >= 1 - beta delta, so beta delta must stay below the
  tolerances the outputs are decoded with (1e-6 for one-hot blocks): beta <~ 1e-6 / delta.

``exact_beta`` (the default of to_torch) lies in that window for every model measured
(bench/softmax_beta.py; docs/model-format.md, "Softmax attention"). A head with tau = 0 has no
finite beta of either kind (only exact ties are averaged).
"""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

import numpy as np

from .model import Model

DEFAULT_EPS = 1e-12


def head_beta(tie_tol: float, max_len: int, eps: float = DEFAULT_EPS) -> float:
    """The sufficient inverse temperature of one head (inf when tie_tol is 0: only hard attention)."""
    if tie_tol <= 0:
        return math.inf
    return math.log(max(max_len, 1) / eps) / tie_tol


def sufficient_beta(model: Model, eps: float = DEFAULT_EPS) -> List[List[float]]:
    """The within-eps beta_h of every head, per layer: [[layer 0 head 0, ...], ...]."""
    return [[head_beta(h["tie_tol"], model.max_len, eps) for h in layer["heads"]] for layer in model.layers]


UNDERFLOW = 746.0  # exp(-x) is 0.0 in float64 for x > 745.14


def exact_beta(model: Model) -> List[List[float]]:
    """The beta_h = 746 / tie_tol of every head, per layer, at which softmax weights off the tie
    set are exactly 0 in float64 (inf for a head whose tie_tol is 0)."""
    return [[UNDERFLOW / h["tie_tol"] if h["tie_tol"] > 0 else math.inf for h in layer["heads"]]
            for layer in model.layers]


def score_spread(model: Model, ids: Sequence[int], values: Optional[np.ndarray] = None) -> List[List[Tuple[float, float]]]:
    """Per layer and head, on one input: (the largest spread m_i - s_j over the keys j the hard
    head averages, the smallest gap m_i - s_j over the allowed keys it does not). Softmax
    reproduces the head for ln(N / 1e-6) / gap <~ beta <~ 1e-6 / spread."""
    from . import machine  # the hard forward pass

    X = machine.embed(model, ids, values)
    out = []
    for l, layer in enumerate(model.layers):
        row = []
        for h, spec in enumerate(layer["heads"]):
            pq, pk, _, _ = machine.head_plans(model, l, h)
            S = machine.gemm(pq.project(X), pk.project(X).T)
            N = S.shape[0]
            allowed = np.tril(np.ones((N, N), dtype=bool)) if spec["causal"] else np.ones((N, N), dtype=bool)
            S = np.where(allowed, S, -np.inf)
            below = S.max(axis=1, keepdims=True) - S
            tied = allowed & ~(below > spec["tie_tol"])
            spread = float(np.where(tied, below, 0.0).max())
            others = allowed & ~tied
            row.append((spread, float(below[others].min()) if others.any() else math.inf))
        out.append(row)
        X = machine.layer_forward(model, l, X)
    return out
