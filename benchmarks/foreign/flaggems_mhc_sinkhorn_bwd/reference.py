"""mHC Sinkhorn backward for four residual streams, for FlagGems' `mhc_bwd`
(fused/mhc/mhc_bwd.py): inputs, fp64 reference, torch baseline.

out [tokens, 4, 4] fp32 is each token's Sinkhorn output R (the doubly stochastic residual
mixing matrix of manifold-constrained hyper-connections at four streams) and dout [tokens,
4, 4] fp32 the gradient arriving at it.  Output (fp32): the gradient at the Sinkhorn's
input by implicit differentiation, dM = (dR - x1[i] - x2[j]) * R, where (x1, x2) solve
[I R; R^T I] (x1, x2) = (rowsum(R dR), colsum(R dR)) by 2 x 4 = 8 conjugate-gradient
iterations from zero (each denominator + 1e-10)."""

from __future__ import annotations

import torch

HC = 4
CG_ITERS = 2 * HC  # mhc_bwd's default
EPS = 1e-10


def make_inputs(
    tokens: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """R from 20 Sinkhorn passes (column then row normalisation) of exp(randn) logits, as
    the forward leaves it, and a standard normal upstream gradient; both fp32 whatever the
    spec's dtype (mHC keeps its coefficients in fp32), on the device."""
    del dtype
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    r = torch.randn(tokens, HC, HC, generator=gen).exp()
    for _ in range(20):
        r = r / r.sum(-2, keepdim=True)
        r = r / r.sum(-1, keepdim=True)
    dout = torch.randn(tokens, HC, HC, generator=gen)
    return r.to(device), dout.to(device)


def _cg_backward(r: torch.Tensor, dr: torch.Tensor, iters: int) -> torch.Tensor:
    """The conjugate-gradient solve and the gradient, batched over tokens, in r's dtype."""
    rdr = r * dr
    b1, b2 = rdr.sum(-1), rdr.sum(-2)
    x1, x2 = torch.zeros_like(b1), torch.zeros_like(b2)
    r1, r2 = b1.clone(), b2.clone()
    p1, p2 = r1.clone(), r2.clone()
    rs = (r1 * r1).sum(-1) + (r2 * r2).sum(-1)
    for _ in range(iters):
        ap1 = (r * p2.unsqueeze(-2)).sum(-1) + p1
        ap2 = (r * p1.unsqueeze(-1)).sum(-2) + p2
        alpha = (rs / ((p1 * ap1).sum(-1) + (p2 * ap2).sum(-1) + EPS)).unsqueeze(-1)
        x1, x2 = x1 + alpha * p1, x2 + alpha * p2
        r1, r2 = r1 - alpha * ap1, r2 - alpha * ap2
        rs_new = (r1 * r1).sum(-1) + (r2 * r2).sum(-1)
        beta = (rs_new / (rs + EPS)).unsqueeze(-1)
        p1, p2 = r1 + beta * p1, r2 + beta * p2
        rs = rs_new
    return (dr - x1.unsqueeze(-1) - x2.unsqueeze(-2)) * r


def reference(out: torch.Tensor, dout: torch.Tensor) -> torch.Tensor:
    """The same 8 CG iterations in fp64, batched over tokens with torch's broadcasts
    (independent of the kernel's per-lane unrolling), rounded to fp32."""
    return _cg_backward(out.double(), dout.double(), CG_ITERS).float()


def torch_sinkhorn_bwd(out: torch.Tensor, dout: torch.Tensor) -> torch.Tensor:
    """FlagGems' own torch path (mhc_bwd_ref, what mhc_bwd runs for other stream counts):
    the same iterations as broadcast fp32 ops over [tokens, 4, 4], about 20 launches an
    iteration."""
    return _cg_backward(out.float(), dout.float(), CG_ITERS)
