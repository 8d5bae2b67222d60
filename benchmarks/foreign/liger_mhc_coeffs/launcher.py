"""Liger-Kernel's manifold-constrained hyper-connection coefficients (liger_kernel.ops.mhc,
0.8.5): the forward of `LigerMHCCoeffsFunction` without gradients, launched by our copy of
Liger's `mhc_mm_norm_fwd` and `mhc_split_sinkhorn_fwd` so that their launch choices are
knobs.

mHC keeps HC residual streams of width C per token and mixes them with per-token
coefficients.  Two launches: `_mhc_mm_norm_fwd_kernel` multiplies each token's flattened
streams x [tokens, HC * C] by phi [HC * C, HC^2 + 2 HC] (a tall, skinny GEMM in tl.dot
tiles of BLOCK_N tokens x BLOCK_K depth x BLOCK_M coefficients, the whole depth unrolled)
and scales the result by the token's 1 / RMS, summed in the same loop;
`_mhc_split_sinkhorn_fwd_kernel`, one program per token, turns the HC^2 + 2 HC
coefficients into h_pre and h_post (sigmoids) and h_res (a row softmax, then tmax - 1
Sinkhorn-Knopp row and column normalisations of an HC x HC matrix in registers).  Liger's
choices: BLOCK_N 32, BLOCK_K 256, BLOCK_M 32, 4 warps for the GEMM, 1 warp for Sinkhorn,
and LigerMHC's defaults tmax 20, rms_eps 1e-6, pre_eps 0, sinkhorn_eps 1e-6, post_mult 2.
Knobs: `block_n`, `block_k`, `block_m`, `num_warps` (the GEMM) and `sinkhorn_warps`, None
keeping Liger's.

Liger allocates the coefficient buffers per call; here they are allocated in `prepare`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
# the defaults of Liger's mhc_mm_norm_fwd and mhc_split_sinkhorn_fwd
LIGER_LAUNCH = {"block_n": 32, "block_k": 256, "block_m": 32, "num_warps": 4, "sinkhorn_warps": 1}
# LigerMHC's module defaults
TMAX, RMS_EPS, PRE_EPS, SINKHORN_EPS, POST_MULT = 20, 1e-6, 0.0, 1e-6, 2.0


@dataclass(frozen=True)
class LigerMhcCoeffsConfig:
    block_n: int | None = None  # None: liger's 32 tokens per GEMM program
    block_k: int | None = None  # None: liger's 256
    block_m: int | None = None  # None: liger's 32 coefficients per program
    num_warps: int | None = None  # None: liger's 4 (the GEMM)
    sinkhorn_warps: int | None = None  # None: liger's 1


def _pick(cfg: LigerMhcCoeffsConfig, name: str) -> int:
    value = getattr(cfg, name)
    return int(value) if value is not None else LIGER_LAUNCH[name]


def prepare(
    cfg: LigerMhcCoeffsConfig,
    x: torch.Tensor,
    phi: torch.Tensor,
    b: torch.Tensor,
    alphas: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import mhc as liger

    if x.dim() != 3 or phi.dim() != 2 or alphas.shape != (3,):
        raise ValueError("x [tokens, hc, c], phi [hc * c, hc^2 + 2 hc], alphas [3]")
    if not (x.is_contiguous() and phi.is_contiguous() and b.is_contiguous()):
        raise ValueError("x, phi and b must be contiguous (liger makes them so per call)")
    n, hc, c = x.shape
    k, m = phi.shape
    if k != hc * c or m != hc * hc + 2 * hc or b.shape != (m,):
        raise ValueError("phi must be [hc * c, hc^2 + 2 hc] and b [hc^2 + 2 hc]")
    assert hc == (math.isqrt(4 + 4 * m) - 2) // 2
    block_n, block_k, block_m = (_pick(cfg, name) for name in ("block_n", "block_k", "block_m"))
    warps, sinkhorn_warps = _pick(cfg, "num_warps"), _pick(cfg, "sinkhorn_warps")
    x_mat = x.view(n, k)
    mix = torch.empty((n, m), device=x.device, dtype=torch.float32)
    invr = torch.empty((n,), device=x.device, dtype=torch.float32)
    h_pre = torch.empty((n, hc), device=x.device, dtype=torch.float32)
    h_post = torch.empty((n, hc), device=x.device, dtype=torch.float32)
    h_res = torch.empty((n, hc, hc), device=x.device, dtype=torch.float32)
    no_hist = torch.empty((1,), device=x.device, dtype=torch.float32)  # liger's, without grads
    a_pre, a_post, a_res = alphas[0:1], alphas[1:2], alphas[2:3]
    grid = (triton.cdiv(n, block_n), triton.cdiv(m, block_m))
    use_tc = x.dtype == phi.dtype and x.dtype in (torch.float16, torch.bfloat16)

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        gemm = liger._mhc_mm_norm_fwd_kernel[grid](
            x_mat, phi, mix, invr, N=n, K=k, M=m, stride_xn=x_mat.stride(0),
            stride_xk=x_mat.stride(1), stride_phik=phi.stride(0), stride_phim=phi.stride(1),
            stride_mn=mix.stride(0), stride_mm=mix.stride(1), eps=RMS_EPS, BLOCK_N=block_n,
            BLOCK_K=block_k, BLOCK_M=block_m, CAST_FP32=not use_tc, num_warps=warps,
        )  # fmt: skip
        liger._mhc_split_sinkhorn_fwd_kernel[(n,)](
            mix, b, h_pre, h_post, h_res, no_hist, N=n, HC=hc, M=m,
            stride_mn=mix.stride(0), stride_mm=mix.stride(1), stride_hp_n=h_pre.stride(0),
            stride_hp_h=h_pre.stride(1), stride_hq_n=h_post.stride(0),
            stride_hq_h=h_post.stride(1), stride_hr_n=h_res.stride(0),
            stride_hr_i=h_res.stride(1), stride_hr_j=h_res.stride(2), stride_hn=0,
            stride_ht=0, stride_hi=0, stride_hj=0, alpha_pre_ptr=a_pre, alpha_post_ptr=a_post,
            alpha_res_ptr=a_res, pre_eps=PRE_EPS, sinkhorn_eps=SINKHORN_EPS,
            post_mult=POST_MULT, TMAX=TMAX, STORE_HIST=False, num_warps=sinkhorn_warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, gemm, kernels=2,
            kernel_names=["_mhc_mm_norm_fwd_kernel", "_mhc_split_sinkhorn_fwd_kernel"],
            block_n=block_n, block_k=block_k, block_m=block_m, num_warps=warps,
            sinkhorn_warps=sinkhorn_warps, programs=grid[0] * grid[1],
        )  # fmt: skip
        return h_pre, h_post, h_res

    return launch
