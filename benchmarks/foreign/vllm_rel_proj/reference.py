"""vLLM's Inkling relative-position logits projection (the `qkvr_rel_proj` step of
`fused_qkvr_prep`, each global attention layer of Inkling): inputs, reference, torch
baseline.

qkvr is [tokens, heads x head + 2 x kvheads x head + heads x 16]: the fused q/k/v/r
projection's output in the model dtype, the relative channels last (16 a query head).
rel_proj is [16, rel_extent] in the same dtype (the layer's `RelLogitsProj.proj`).  heads,
kvheads and head are Python ints.  The output is [tokens, heads, rel_extent] in qkvr's
dtype: each head's 16 relative channels times the projection."""

from __future__ import annotations

import torch

D_REL = 16


def make_inputs(
    tokens: int,
    heads: int,
    kvheads: int,
    head: int,
    extent: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int, int, int]:
    """Normal activations and a projection scaled by 1/4 (a trained projection's size),
    drawn on the device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    width = heads * head + 2 * kvheads * head + heads * D_REL
    qkvr = torch.randn(tokens, width, generator=gen, device=device, dtype=dtype)
    proj = torch.randn(D_REL, extent, generator=gen, device=device, dtype=dtype) * 0.25
    return qkvr, proj, heads, kvheads, head


def _rel(qkvr: torch.Tensor, heads: int, kvheads: int, head: int) -> torch.Tensor:
    r = heads * head + 2 * kvheads * head
    return qkvr[:, r : r + heads * D_REL].reshape(qkvr.shape[0], heads, D_REL)


def reference(
    qkvr: torch.Tensor, rel_proj: torch.Tensor, heads: int, kvheads: int, head: int
) -> torch.Tensor:
    """fp32 product, rounded once to qkvr's dtype."""
    rel = _rel(qkvr, heads, kvheads, head).float()
    return torch.einsum("thd,de->the", rel, rel_proj.float()).to(qkvr.dtype)


def torch_rel_proj(
    qkvr: torch.Tensor, rel_proj: torch.Tensor, heads: int, kvheads: int, head: int
) -> torch.Tensor:
    """The same by torch ops as Inkling's `RelLogitsProj.forward`: the relative channels
    sliced from qkvr, an einsum with the projection in the dtype."""
    return torch.einsum("thd,de->the", _rel(qkvr, heads, kvheads, head), rel_proj)
