"""The inverse temperature at which softmax attention reproduces the model's hard attention.

A head of the model averages, for query i, the keys T_i scoring at least m_i - tau (m_i the
row's maximum, tau the head's tie tolerance ``tie_tol`` in the file); every other allowed key
scores below m_i - tau. Softmax at inverse temperature beta gives key j the weight
w_j = exp(beta (s_j - m_i)) / Z with Z >= 1 (the maximum's own term), so the keys outside T_i
together weigh at most (N - 1) exp(-beta tau) for N <= max_len + 1 keys. Choosing

    beta_h >= ln(max_len / eps) / tau_h

bounds that weight by eps (default 1e-12) for every input the model takes. Inside T_i the keys
of a compiled model score exactly alike (the compiler sets tau above the rounding error of
the scores and below their smallest gap, and scores are sums of a few exact products), so their
softmax weights are exactly equal and the mean is the hard mean. docs/model-format.md
("Softmax attention") states the bound and the measured range.
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
    """beta_h for every head, per layer: [[beta of layer 0 head 0, ...], ...]."""
    return [[head_beta(h["tie_tol"], model.max_len, eps) for h in layer["heads"]] for layer in model.layers]
