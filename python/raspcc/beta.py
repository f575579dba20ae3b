"""The inverse temperature at which softmax attention reproduces the model's hard attention.

A head of the model averages, for query i, the keys T_i scoring at least m_i - tau (m_i the
row's maximum, tau the head's tie tolerance ``tie_tol`` in the file); every other allowed key
scores below m_i - tau. Softmax at inverse temperature beta gives key j the weight
w_j = exp(beta (s_j - m_i)) / Z with Z >= 1 (the maximum's own term). Two bounds follow:

- within eps: the keys outside T_i together weigh at most (N - 1) exp(-beta tau) for
  N <= max_len + 1 keys, so ``beta_h >= ln(max_len / eps) / tau_h`` (``sufficient_beta``) makes
  the attention output differ from the hard mean by at most eps times the values' spread;
- exactly (the default of to_torch): for beta tau >= 746, exp(-beta (m_i - s_j)) underflows
  to 0.0 in float64 (below 2^-1075) for every key outside T_i, so ``beta_h = 746 / tau_h``
  (``exact_beta``) gives those keys weight exactly 0. Inside T_i the keys of a compiled model
  score exactly alike (the compiler sets tau above the rounding error of the scores and below
  their smallest gap; the scores are sums of a few exact products), so their weights are
  exactly 1 and the softmax average is the hard mean. An exact output (error bound 0, or an
  int read from a real) needs this: within eps is not enough.

A head with tau = 0 has no finite beta of either kind (only exact ties are averaged).
docs/model-format.md ("Softmax attention") states the bounds and the measured range.
"""

from __future__ import annotations

import math
from typing import List

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
