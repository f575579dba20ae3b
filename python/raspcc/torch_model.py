"""A compiled model as a ``torch.nn.Module``: an ordinary transformer encoder.

``to_torch(path_or_model, beta=None)`` returns a CompiledTransformer whose forward pass is

    X = token_embedding(ids) + position_embedding(0..N)  (+ value on the numeric dim)
    per layer:  X = X + sum_h softmax(beta_h Q_h K_h^T, masked) V_h W_o,h
                X = X + (ReLU(X W1 + b1) * G) W2 + b2,  G = X W3 + b3 (gated) or 1

in float64, on a batch of encoded inputs: ``ids`` [B, N+1] with BOS (id n_vocab) in column 0,
``lengths`` [B] (keys past a row's length are masked out, so rows of different lengths share a
batch), ``values`` [B, N+1] for real-valued tokens. No layer norm, no other nonlinearity: the
weights are the file's. ``beta`` is each head's inverse temperature: by default
raspcc.beta.exact_beta (746 / tie_tol: softmax weights off the tie set are exactly 0.0 in
float64), or one number for every head, or a list per layer of per-head numbers. A head whose
tie tolerance is 0 (it averages exact ties only) has no finite such beta and runs hard.

The softmax is computed as exp(beta (S - max)) V / sum exp(beta (S - max)), normalising after
the product (as FlashAttention does): the same function, and where the weights are exactly 0
and 1 it sums the selected values exactly as the hard-attention runtime does.

``encode(model, inputs)`` makes the batch tensors from lists of atoms (Model.encode per input).
"""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from torch import nn

from .atoms import Atom
from .beta import exact_beta
from .model import Model, load


def _param(a: np.ndarray) -> nn.Parameter:
    return nn.Parameter(torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64)), requires_grad=False)


class Head(nn.Module):
    """One attention head: projections Wq, Wk [D, dk], Wv [D, dv], Wo [dv, D]."""

    def __init__(self, wq, wk, wv, wo, causal: bool, tie_tol: float, beta: float, bos_extra: float = 0.0):
        super().__init__()
        self.wq, self.wk, self.wv, self.wo = (_param(w) for w in (wq, wk, wv, wo))
        self.causal, self.tie_tol, self.beta, self.bos_extra = causal, tie_tol, beta, bos_extra

    def forward(self, x: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
        S = (x @ self.wq) @ (x @ self.wk).transpose(-1, -2)
        allowed = key_mask[:, None, :]
        if self.causal:
            N = x.shape[1]
            allowed = allowed & torch.ones(N, N, dtype=torch.bool, device=x.device).tril()
        S = S.masked_fill(~allowed, -math.inf)
        m = S.amax(dim=-1, keepdim=True)
        if math.isinf(self.beta):  # no finite inverse temperature suffices: the hard limit
            w = (S >= m - self.tie_tol).to(x.dtype)
        else:
            w = torch.exp(self.beta * (S - m))
        if self.bos_extra:  # BOS (key 0) weighs 1 + bos_extra: in softmax terms, a sink logit
            w = torch.cat([w[..., :1] * (1.0 + self.bos_extra), w[..., 1:]], dim=-1)
        return ((w @ (x @ self.wv)) / w.sum(dim=-1, keepdim=True)) @ self.wo


class Mlp(nn.Module):
    """ReLU MLP, or gated (each hidden unit times an affine function of the residual)."""

    def __init__(self, f: dict, gated: bool):
        super().__init__()
        self.w1, self.b1, self.w2, self.b2 = (_param(f[k]) for k in ("w1", "b1", "w2", "b2"))
        self.gated = gated
        if gated:
            self.w3, self.b3 = _param(f["w3"]), _param(f["b3"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(x @ self.w1 + self.b1)
        if self.gated:
            h = h * (x @ self.w3 + self.b3)
        return h @ self.w2 + self.b2


class Block(nn.Module):
    def __init__(self, heads: List[Head], mlp: Mlp):
        super().__init__()
        self.heads, self.mlp = nn.ModuleList(heads), mlp

    def forward(self, x: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
        attn = [h(x, key_mask) for h in self.heads]  # every head reads the same x
        for a in attn:
            x = x + a
        return x + self.mlp(x)


class CompiledTransformer(nn.Module):
    """The model of a model.bin (attributes: ``model``, the raspcc.Model it was built from)."""

    def __init__(self, model: Model, beta: Union[None, float, Sequence[Sequence[float]]] = None):
        super().__init__()
        self.model = model
        betas = exact_beta(model) if beta is None else beta
        W = model.weights
        self.token_embed = nn.Embedding.from_pretrained(torch.from_numpy(W["embed.token"].copy()), freeze=True)
        self.pos_embed = nn.Embedding.from_pretrained(torch.from_numpy(W["embed.pos"].copy()), freeze=True)
        nt = model.numeric_tokens
        self.value_dim = None if nt is None else nt["dim"]
        blocks = []
        for l, layer in enumerate(model.layers):
            heads = []
            for h, spec in enumerate(layer["heads"]):
                b = float(beta) if isinstance(beta, (int, float)) else float(betas[l][h])  # type: ignore[index]
                heads.append(Head(*model.head(l, h), spec["causal"], spec["tie_tol"], b, spec.get("bos_extra", 0.0)))
            blocks.append(Block(heads, Mlp(model.mlp(l), layer["gated"])))
        self.blocks = nn.ModuleList(blocks)

    def forward(self, ids: torch.Tensor, lengths: Optional[torch.Tensor] = None, values: Optional[torch.Tensor] = None,
                all_layers: bool = False) -> Union[torch.Tensor, List[torch.Tensor]]:
        """ids [B, N+1] (BOS first) -> the final residual [B, N+1, D], or with all_layers the
        residual after each layer (the embedding alone for a model of no layers)."""
        B, N1 = ids.shape
        positions = torch.arange(N1, device=ids.device)
        x = self.token_embed(ids) + self.pos_embed(positions)[None]
        if self.value_dim is not None and values is not None:
            x[:, 1:, self.value_dim] += values[:, 1:]
        if lengths is None:
            key_mask = torch.ones(B, N1, dtype=torch.bool, device=ids.device)
        else:
            key_mask = positions[None, :] <= lengths[:, None]
        out = []
        for block in self.blocks:
            x = block(x, key_mask)
            out.append(x)
        if all_layers:
            return out or [x]
        return x

    def error_flag(self, x: torch.Tensor) -> Optional[torch.Tensor]:
        """The error flag of final residuals x [B, N+1, D] (a model compiled with raspcc
        --error-flag): err [B, N] at the non-BOS positions, each a sum of terms >= 0. Under
        softmax attention read an input as failing where any of its positions (up to its length)
        has err >= 0.5 (docs/model-format.md, "The error flag": with hard attention in float64,
        err != 0; an input rasprun answers may read as failing inside the flag's band). None
        for a model without one."""
        dim = self.model.error_flag_dim
        return None if dim is None else x[:, 1:, dim]


def encode(model: Model, inputs: Sequence[Sequence[Atom]]) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(ids [B, N+1], lengths [B], values [B, N+1]) of inputs the model takes (N the longest);
    padding uses token id 0. Raises InputError for an input Model.encode refuses."""
    N = max((len(t) for t in inputs), default=0)
    ids = torch.zeros(len(inputs), N + 1, dtype=torch.long)
    values = torch.zeros(len(inputs), N + 1, dtype=torch.float64)
    ids[:, 0] = model.bos
    for b, tokens in enumerate(inputs):
        i, v = model.encode(tokens)
        ids[b, 1 : len(tokens) + 1] = torch.from_numpy(i)
        if v is not None:
            values[b, 1 : len(tokens) + 1] = torch.from_numpy(v)
    return ids, torch.tensor([len(t) for t in inputs], dtype=torch.long), values


def to_torch(path_or_model: Union[str, Model], beta: Union[None, float, Sequence[Sequence[float]]] = None
             ) -> CompiledTransformer:
    """The model (a path to model.bin, or a loaded Model) as a CompiledTransformer in eval mode."""
    model = load(path_or_model) if isinstance(path_or_model, str) else path_or_model
    return CompiledTransformer(model, beta).eval()
