"""Liger-Kernel's mHC stream update (liger_kernel.ops.mhc, 0.8.5): the forward of
`LigerMHCPostResFunction`, launched by our copy of Liger's `mhc_post_res_fwd` so that its
launch choices (which Liger exposes as arguments) are knobs.

After the wrapped layer, mHC writes its HC residual streams back: out[o] = h_post[o] * f +
sum_i h_res[o, i] * x[i] per token, f being the layer's output [tokens, C].
`_mhc_post_res_fwd_kernel`'s grid is (tokens / BLOCK_N, C / BLOCK_C): a program loads
BLOCK_N tokens x BLOCK_C columns of f and of each of the HC streams, mixes them in an fp32
[HC, BLOCK_N, BLOCK_C] accumulator and writes fp32 [tokens, HC, C]; Liger's autograd
function then casts that to the streams' dtype with torch.  The timed call is the kernel
and that cast.  Liger's choices, from the width: C >= 4096: BLOCK_N 32, BLOCK_C 128, 8
warps, 3 stages; C >= 2048: 32, 128, 4, 2; C >= 1024: 32, 64, 4, 2; else 32, 64, 2, 2.
Knobs: `block_n`, `block_c`, `num_warps`, `num_stages`, None keeping Liger's.

Liger allocates the fp32 output per call; here it is allocated in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}


@dataclass(frozen=True)
class LigerMhcPostResConfig:
    block_n: int | None = None  # None: liger's 32 tokens per program
    block_c: int | None = None  # None: liger's, from the width (128 from 2048 columns)
    num_warps: int | None = None  # None: liger's, from the width (8 from 4096 columns)
    num_stages: int | None = None  # None: liger's, from the width (3 from 4096 columns)


def prepare(
    cfg: LigerMhcPostResConfig,
    x: torch.Tensor,
    f_out: torch.Tensor,
    h_post: torch.Tensor,
    h_res: torch.Tensor,
) -> Callable[[], torch.Tensor]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import mhc as liger

    if x.dim() != 3 or f_out.dim() != 2 or h_post.dim() != 2 or h_res.dim() != 3:
        raise ValueError(
            "x [tokens, hc, c], f_out [tokens, c], h_post [tokens, hc], h_res [tokens, hc, hc]"
        )
    n, hc, c = x.shape
    if f_out.shape != (n, c) or h_post.shape != (n, hc) or h_res.shape != (n, hc, hc):
        raise ValueError("f_out, h_post and h_res must match x's tokens, streams and width")
    tensors = (x, f_out, h_post, h_res)
    if not all(t.is_contiguous() for t in tensors):
        raise ValueError("all inputs must be contiguous (liger makes them so per call)")
    if h_post.dtype != torch.float32 or h_res.dtype != torch.float32:
        raise ValueError("h_post and h_res are fp32 (liger casts them per call)")
    block_n, block_c, warps, stages = liger._post_res_meta(
        c, cfg.block_n, cfg.block_c, cfg.num_warps, cfg.num_stages
    )
    out = torch.empty((n, hc, c), device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(n, block_n), triton.cdiv(c, block_c))

    def launch() -> torch.Tensor:
        handle = liger._mhc_post_res_fwd_kernel[grid](
            x, f_out, h_post, h_res, out, N=n, HC=hc, C=c, stride_xn=x.stride(0),
            stride_xh=x.stride(1), stride_xc=x.stride(2), stride_fn=f_out.stride(0),
            stride_fc=f_out.stride(1), stride_hpn=h_post.stride(0), stride_hph=h_post.stride(1),
            stride_hrn=h_res.stride(0), stride_hri=h_res.stride(1), stride_hrj=h_res.stride(2),
            stride_on=out.stride(0), stride_oh=out.stride(1), stride_oc=out.stride(2),
            BLOCK_N=block_n, BLOCK_C=block_c, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        result = out.to(x.dtype)  # liger's cast after the kernel
        _common.record(
            LAST_INFO, handle, kernels=2, kernel_names=["_mhc_post_res_fwd_kernel", "cast"],
            block_n=block_n, block_c=block_c, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return result

    return launch
