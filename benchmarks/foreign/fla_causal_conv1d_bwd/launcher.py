"""FLA's short-convolution backward (fla/modules/causal_conv1d/ops.py, fla-core 0.6.0:
`causal_conv1d_bwd_kernel`), launched as FLA's `causal_conv1d_bwd` launches it for the
backward of `ShortConvolution` (its default Triton backend) so that its launch choices are
knobs.

The case launched is the one FLA's linear-attention layers train with: a depthwise causal
convolution of width W over [batch, T, D] (one filter row per channel, no bias, no initial
or final state, fixed-length sequences) followed by SiLU.  The grid is (cdiv(D, BD),
cdiv(T, BT), batch).  Each program takes BT time steps x BD channels: it loads its [BT, BD]
tile of x and its channels' [BD, BW] filter rows (BW = next_pow2(W), the taps right-
aligned, the padding lanes masked), then for each tap i (a tl.static_range over W, unrolled)
loads the output gradient dy and the pre-activation y at the rows i steps later (the rows
past T masked), turns dy into the gradient through SiLU, dy s (1 + y (1 - s)) with s =
sigmoid(y), adds it times the tap's filter value (picked out of the [BD, BW] rows by a
masked row sum) into the fp32 dx tile, and stores the column sum over its BT rows of that
gradient times x: the chunk's fp32 partial of the filter gradient for tap W - 1 - i.
After the taps, dx is stored in the dtype (round to nearest even).  Each tap re-reads dy
and y rows overlapping the previous tap's (W - 1 rows of halo per chunk, mostly cache hits).
No tensor cores.

FLA's launch: BT = chunk_size, 64 (CausalConv1dFunction's default), BW = next_pow2(W); BD and
num_warps from an autotuner (`fla_cache_autotune`, FLA's Triton autotune with an optional
on-disk config cache that is off unless FLA_CACHE_MODE is set) over BD in (16, 32, 64, 128)
x num_warps in (4, 8, 16, 32) keyed by (D, W); its first configuration, BD 16 and 4 warps,
is the default here, as the other wrapped autotuned kernels take theirs (the autotuner's
pick is not known without the GPU).  Knobs: block_t, block_d, num_warps, None keeping FLA's.
The taps are an unrolled static loop with no pipelined loads: the stage count is left at
Triton's default (no knob).  The kernel's @triton.heuristics is dropped by the fetch, so its
flags (HAS_WEIGHT on, HAS_BIAS, USE_INITIAL_STATE, USE_FINAL_STATE, IS_VARLEN off) are
passed here.  FLA's backward recomputes the pre-activation y with its forward kernel just
before this one; here y is an input (made with the others, outside the timed call).  The
[batch x NT, D, W] fp32 partials are allocated in `prepare`; the timed call is the kernel and
FLA's `dw.sum(0).to(weight)` over the partials (three launches: the kernel, the sum, the
cast).  The launch records as `num_splits` the batch x cdiv(T, BT) partials each filter
value's reduction over the batch and time is split into (merged by torch's sum, not in the
kernel).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SOURCE = "fla_causal_conv1d_bwd"
KERNEL = "causal_conv1d_bwd_kernel"
FLA_CHUNK = 64  # CausalConv1dFunction / causal_conv1d_bwd: chunk_size=64, BT = chunk_size
# fla_cache_autotune's configs: BD in (16, 32, 64, 128) x num_warps in (4, 8, 16, 32) on
# NVIDIA; the first, BD 16 and 4 warps, is the default
FLA_BD = 16
FLA_WARPS = 4


@dataclass(frozen=True)
class ConvBwdConfig:
    block_t: int | None = None  # None: FLA's chunk_size, 64 time steps
    block_d: int | None = None  # None: the first autotune config's 16 channels
    num_warps: int | None = None  # None: its 4 warps


def prepare(
    cfg: ConvBwdConfig, x: torch.Tensor, weight: torch.Tensor, y: torch.Tensor,
    dy: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source(SOURCE)
    if x.dim() != 3 or y.shape != x.shape or dy.shape != x.shape:
        raise ValueError("x, y (the pre-activation) and dy must be [batch, T, D]")
    batch, seqlen, d = x.shape
    if weight.dim() != 2 or weight.shape[0] != d:
        raise ValueError("weight must be [D, W], one filter row per channel")
    if not all(t.is_contiguous() for t in (x, weight, y, dy)):
        raise ValueError("the kernel indexes y and the filter as contiguous")
    w = weight.shape[1]
    bt = cfg.block_t or FLA_CHUNK
    bd = cfg.block_d or FLA_BD
    warps = cfg.num_warps or FLA_WARPS
    bw = triton.next_power_of_2(w)
    nt = triton.cdiv(seqlen, bt)
    grid = (triton.cdiv(d, bd), nt, batch)
    dx = torch.empty_like(x)
    dw = weight.new_empty(batch * nt, d, w, dtype=torch.float32)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod.causal_conv1d_bwd_kernel[grid](
            x=x, y=y, weight=weight, initial_state=None, dht=None, dy=dy, dx=dx, dw=dw,
            db=None, cu_seqlens=None, chunk_indices=None, B=batch, T=seqlen,
            stride_x_n=x.stride(0), stride_x_t=x.stride(1), stride_x_d=x.stride(2),
            stride_dx_n=dx.stride(0), stride_dx_t=dx.stride(1), stride_dx_d=dx.stride(2),
            stride_dy_n=dy.stride(0), stride_dy_t=dy.stride(1), stride_dy_d=dy.stride(2),
            D=d, W=w, BT=bt, BW=bw, BD=bd, ACTIVATION="silu", HAS_WEIGHT=True,
            HAS_BIAS=False, USE_INITIAL_STATE=False, USE_FINAL_STATE=False, IS_VARLEN=False,
            num_warps=warps,
        )  # fmt: skip
        dweight = dw.sum(0).to(weight)
        _common.record(
            LAST_INFO, handle, kernels=3, kernel_names=[KERNEL, "sum", "copy"], block_t=bt,
            block_d=bd, block_w=bw, num_warps=warps, programs=grid[0] * grid[1] * grid[2],
            taps=w, partial_rows=batch * nt, metrics={"num_splits": batch * nt},
        )  # fmt: skip
        return dx, dweight

    return launch
