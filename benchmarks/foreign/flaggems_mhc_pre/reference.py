"""The mHC pre block's fused step for four residual streams, for FlagGems' `mhc_pre`
(fused/mhc/mhc_pre.py): inputs, fp32 reference, torch baseline.

residual [tokens, 4, hidden] bf16 are the token's four widened residual streams
(manifold-constrained hyper-connections, HC = 4); gemm_out [tokens, 24] fp32 their
projection to 24 logits (FlagGems makes it with a cuBLAS torch.mm before the kernel; here it
is an input); hc_scale [3] and hc_base [24] fp32 the layer's scales and biases.  Per token:
the logits times rsqrt(mean of the streams' squares + eps), scaled and biased; pre =
sigmoid + eps (4 weights), post = 2 sigmoid (4), comb = a row softmax + eps, a column
normalisation and 19 more row / column Sinkhorn normalisations of the 4 x 4 block; and the
layer input sum_i pre_i * residual_i, stored in bf16.  Outputs: post [tokens, 4] and comb
[tokens, 4, 4] fp32, layer input [tokens, hidden] bf16."""

from __future__ import annotations

import torch

HC = 4
RMS_EPS = 1e-6
PRE_EPS = 1e-6
SINKHORN_EPS = 1e-6
POST_MULT = 2.0
SINKHORN_REPEAT = 20


def make_inputs(
    tokens: int, hidden: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """randn bf16 streams (bf16 whatever the spec's dtype: FlagGems asserts it), their
    projection by a randn [24, 4 hidden] / sqrt(4 hidden) fp32 matrix (so the logits are
    O(1)), scales in [0.5, 1.5) and randn biases; all drawn on the device."""
    del dtype
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    m = (2 + HC) * HC
    residual = torch.randn(tokens, HC, hidden, generator=gen, device=device).to(torch.bfloat16)
    fn = torch.randn(m, HC * hidden, generator=gen, device=device) / (HC * hidden) ** 0.5
    gemm_out = (residual.reshape(tokens, HC * hidden).float() @ fn.t()).contiguous()
    hc_scale = 0.5 + torch.rand(3, generator=gen, device=device)
    hc_base = torch.randn(m, generator=gen, device=device)
    return gemm_out, hc_scale, hc_base, residual


def mhc_pre_fused(
    gemm_out: torch.Tensor, hc_scale: torch.Tensor, hc_base: torch.Tensor, residual: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """FlagGems' mhc_pre_ref from the projected logits on (the GEMM left out)."""
    tokens, hc, hidden = residual.shape
    r = residual.float()
    sqrsum = r.reshape(tokens, hc * hidden).square().sum(-1)
    mixes = gemm_out.float() * (sqrsum.unsqueeze(-1) / (hc * hidden) + RMS_EPS).rsqrt()
    scale = torch.cat([hc_scale[0].expand(hc), hc_scale[1].expand(hc), hc_scale[2].expand(hc * hc)])
    mixes = mixes * scale + hc_base
    pre = mixes[:, :hc].sigmoid() + PRE_EPS
    post = mixes[:, hc : 2 * hc].sigmoid() * POST_MULT
    comb = mixes[:, 2 * hc :].view(-1, hc, hc).softmax(-1) + SINKHORN_EPS
    comb = comb / (comb.sum(-2, keepdim=True) + SINKHORN_EPS)
    for _ in range(SINKHORN_REPEAT - 1):
        comb = comb / (comb.sum(-1, keepdim=True) + SINKHORN_EPS)
        comb = comb / (comb.sum(-2, keepdim=True) + SINKHORN_EPS)
    layer_input = (r * pre.unsqueeze(-1)).sum(-2).to(torch.bfloat16)
    return post, comb, layer_input


def reference(
    gemm_out: torch.Tensor, hc_scale: torch.Tensor, hc_base: torch.Tensor, residual: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return mhc_pre_fused(gemm_out, hc_scale, hc_base, residual)


def torch_mhc_pre(
    gemm_out: torch.Tensor, hc_scale: torch.Tensor, hc_base: torch.Tensor, residual: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The same in torch ops (FlagGems' mhc_pre_ref after its GEMM): a square-sum over the
    streams, sigmoids, a softmax and 39 broadcast divisions, then a weighted stream sum."""
    return mhc_pre_fused(gemm_out, hc_scale, hc_base, residual)
