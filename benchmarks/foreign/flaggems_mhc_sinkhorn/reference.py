"""mHC split + Sinkhorn for four residual streams, for FlagGems' `hc_split_sinkhorn`
(fused/mhc/hc_split_sinkhorn.py): inputs, fp32 reference, torch baseline.

mixes [tokens, 24] fp32 are the per-token coefficient logits of manifold-constrained
hyper-connections at HC = 4 (the output of the layer's tall [4 C, 24] projection): 4 pre,
4 post and 16 residual-mixing logits; hc_scale [3] and hc_base [24] fp32 the layer's
scales and biases.  Outputs (fp32): pre = sigmoid(m * s0 + b) + 1e-6 and post =
2 sigmoid(m * s1 + b), [tokens, 4] each, and comb [tokens, 4, 4], the 16 logits scaled and
biased, a row softmax (+1e-6), a column normalisation, then 19 more row / column Sinkhorn
normalisations (each sum + 1e-6): a doubly stochastic mixing matrix per token."""

from __future__ import annotations

import torch

HC = 4
EPS = 1e-6


def make_inputs(
    tokens: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """randn logits (fp32 whatever the spec's dtype: the projection's output as mHC keeps
    it), scales in [0.5, 1.5) and randn biases, on the device."""
    del dtype
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    mixes = torch.randn(tokens, (2 + HC) * HC, generator=gen, device=device)
    hc_scale = 0.5 + torch.rand(3, generator=gen, device=device)
    hc_base = torch.randn((2 + HC) * HC, generator=gen, device=device)
    return mixes, hc_scale, hc_base


def split_sinkhorn(
    mixes: torch.Tensor, hc_scale: torch.Tensor, hc_base: torch.Tensor, iters: int = 20
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    m = mixes.float()
    pre = torch.sigmoid(m[:, :HC] * hc_scale[0] + hc_base[:HC]) + EPS
    post = 2 * torch.sigmoid(m[:, HC : 2 * HC] * hc_scale[1] + hc_base[HC : 2 * HC])
    comb = m[:, 2 * HC :].view(-1, HC, HC) * hc_scale[2] + hc_base[2 * HC :].view(HC, HC)
    comb = torch.softmax(comb, dim=-1) + EPS
    comb = comb / (comb.sum(dim=-2, keepdim=True) + EPS)
    for _ in range(iters - 1):
        comb = comb / (comb.sum(dim=-1, keepdim=True) + EPS)
        comb = comb / (comb.sum(dim=-2, keepdim=True) + EPS)
    return pre, post, comb


def reference(
    mixes: torch.Tensor, hc_scale: torch.Tensor, hc_base: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return split_sinkhorn(mixes, hc_scale, hc_base)


def torch_split_sinkhorn(
    mixes: torch.Tensor, hc_scale: torch.Tensor, hc_base: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The same in torch ops (FlagGems' own fallback, mhc_split_sinkhorn_torch_ref): two
    sigmoids, a softmax and 39 broadcast divisions over [tokens, 4, 4]."""
    return split_sinkhorn(mixes, hc_scale, hc_base)
