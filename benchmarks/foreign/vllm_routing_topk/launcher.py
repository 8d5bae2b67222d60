"""vLLM's vendored triton_kernels routing top-k
(vllm/third_party/triton_kernels/topk_details/_topk_forward.py, v0.34.0: `_topk_forward`
with its key helpers and `streaming_topk`), launched as `triton_kernels.topk.topk_forward`
launches it, so that its launch choices are knobs.

One program per BLOCK_M tokens (the grid also covers the scratchpad's BLOCK_S-int blocks,
which the first programs zero).  Each program turns its [BLOCK_M, BLOCK_N] tiles of logits
into unsigned keys (the value's bits made order-preserving, shifted up 16 bits, the expert
index's complement below), walks the padded experts from the last tile down keeping a
running tl.topk merged by tl.bitonic_merge and tl.maximum, rotates the index into the top
bits and tl.sorts by expert, softmaxes the k selected values in fp32, stores them and their
int16 expert ids, then packs the ids into the transposed uint32 bitmatrix one BLOCK_N / 32
word group at a time with tl.reduce_or.

topk_forward's launch: BLOCK_M = 32, BLOCK_N = 32 and BLOCK_S = 128 fixed, Triton's default
4 warps (it passes none).  Knobs: the token block, the expert tile and the warps, None keeping
triton_kernels'.  BLOCK_N also pads the experts (N_EXPTS_PAD, a multiple of it) and so the
bitmatrix's words; the spare words of a wider tile stay zero and are cut off the returned
view.  topk_forward's allocations (values, int16 ids, the transposed bitmatrix and the
scratchpad) are made in `prepare`; the routing metadata built from them afterwards is not
timed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
TK_BLOCK_M = 32
TK_BLOCK_N = 32
BLOCK_S = 128
TRITON_DEFAULT_WARPS = 4


@dataclass(frozen=True)
class RoutingTopkConfig:
    block_m: int | None = None  # None: triton_kernels' 32 tokens per program
    block_n: int | None = None  # None: triton_kernels' 32 experts per tile
    num_warps: int | None = None  # None: Triton's default 4 (topk_forward passes none)


def prepare(
    cfg: RoutingTopkConfig, logits: torch.Tensor, topk: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("vllm_routing_topk")
    n_rows, n_cols = logits.shape
    if n_cols >= 32768 or topk & (topk - 1) or topk > n_cols:
        raise ValueError("need experts < 32768 and a power-of-two topk <= experts")
    block_m = cfg.block_m or TK_BLOCK_M
    block_n = cfg.block_n or TK_BLOCK_N
    if block_n % 32:
        raise ValueError("block_n must be a multiple of 32 (one bitmatrix word)")
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    dev = logits.device
    y_vals = torch.empty((n_rows, topk), dtype=logits.dtype, device=dev)
    y_indx = torch.empty((n_rows, topk), dtype=torch.int16, device=dev)
    n_cols_pad = triton.cdiv(n_cols, block_n) * block_n
    n_cols_words = n_cols_pad // 32
    bits = torch.empty((n_cols_words, triton.cdiv(n_rows, 32) * 32), dtype=torch.uint32, device=dev)
    bits = torch.transpose(bits, 0, 1)[:n_rows]
    s_blocks = triton.cdiv(n_cols, BLOCK_S)
    scratchpad = torch.empty((s_blocks * BLOCK_S,), dtype=torch.int32, device=dev)
    pids = max(triton.cdiv(n_rows, block_m), s_blocks)
    words = triton.cdiv(n_cols, 32)

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        handle = mod._topk_forward[(pids,)](
            logits, logits.stride(0), y_vals, y_indx, y_vals.stride(0), False,
            bits, bits.stride(0), bits.stride(1), n_rows, n_cols, scratchpad, BLOCK_S,
            s_blocks, BLOCK_M=block_m, BLOCK_N=block_n, APPLY_SOFTMAX=True,
            N_EXPTS_PAD=n_cols_pad, N_EXPTS_ACT=topk, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_topk_forward"], block_m=block_m,
            block_n=block_n, num_warps=warps, programs=pids, experts_pad=n_cols_pad,
        )  # fmt: skip
        return y_vals, y_indx, bits[:, :words]

    return launch
