"""The coefficients of manifold-constrained hyper-connections (mHC, DeepSeek 2025) as
Liger computes them in its forward: inputs, fp32 reference, torch baseline.  For each token
with HC residual streams x [HC, C]: mix = (flatten(x) @ phi) / rms(flatten(x)); h_pre =
sigmoid(alpha_pre * mix[:HC] + b[:HC]) + pre_eps; h_post = post_mult * sigmoid(alpha_post *
mix[HC:2HC] + b[HC:2HC]); h_res = tmax Sinkhorn-Knopp steps on the HC x HC matrix
alpha_res * mix[2HC:] + b[2HC:] (a row softmax first).  Outputs fp32."""

from __future__ import annotations

import torch

TMAX, RMS_EPS, PRE_EPS, SINKHORN_EPS, POST_MULT = 20, 1e-6, 0.0, 1e-6, 2.0


def make_inputs(
    tokens: int, hc: int, c: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """x (unit normal), phi (LigerMHC's init, 0.02 * randn, in the inputs' dtype), the bias
    b (fp32, small, so the coefficients are not all alike) and (alpha_pre, alpha_post,
    alpha_res) in fp32."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    m = hc * hc + 2 * hc
    x = torch.randn(tokens, hc, c, generator=gen)
    phi = 0.02 * torch.randn(hc * c, m, generator=gen)
    b = 0.5 * torch.randn(m, generator=gen)
    alphas = torch.tensor([1.0, 0.8, 1.2])
    return (
        x.to(dtype=dtype, device=device),
        phi.to(dtype=dtype, device=device),
        b.to(device),
        alphas.to(device),
    )


def _coeffs(
    x: torch.Tensor, phi: torch.Tensor, b: torch.Tensor, alphas: torch.Tensor, acc: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    n, hc, c = x.shape
    flat = x.reshape(n, hc * c).to(acc)
    invr = torch.rsqrt(flat.float().pow(2).mean(dim=1) + RMS_EPS)
    mix = (flat @ phi.to(acc)).float() * invr[:, None]
    b = b.float()
    h_pre = torch.sigmoid(mix[:, :hc] * alphas[0] + b[:hc]) + PRE_EPS
    h_post = torch.sigmoid(mix[:, hc : 2 * hc] * alphas[1] + b[hc : 2 * hc]) * POST_MULT
    logits = (mix[:, 2 * hc :] * alphas[2] + b[2 * hc :]).view(n, hc, hc)
    mat = torch.softmax(logits, dim=-1) + SINKHORN_EPS
    mat = mat / (mat.sum(dim=1, keepdim=True) + SINKHORN_EPS)
    for _ in range(TMAX - 1):
        mat = mat / (mat.sum(dim=2, keepdim=True) + SINKHORN_EPS)
        mat = mat / (mat.sum(dim=1, keepdim=True) + SINKHORN_EPS)
    return h_pre, h_post, mat


def reference(
    x: torch.Tensor, phi: torch.Tensor, b: torch.Tensor, alphas: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return _coeffs(x, phi, b, alphas, torch.float32)


def torch_mhc_coeffs(
    x: torch.Tensor, phi: torch.Tensor, b: torch.Tensor, alphas: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The same in plain torch: the projection by a matmul in the input dtype, then ~45
    small element-wise and reduction kernels (the Sinkhorn loop unfused)."""
    return _coeffs(x, phi, b, alphas, x.dtype)
