"""SGLang's Mamba-2 chunk matmul (python/sglang/srt/layers/attention/mamba/ops/ssd_bmm.py,
v0.5.9, adapted there from vLLM and Tri Dao's mamba_ssm), launched by our copy of SGLang's
`_bmm_chunk_fwd` so that its launch choices are knobs.

The SSD prefill of a Mamba-2 layer first forms, for every chunk of `chunk` tokens and every
group, the chunk x chunk matrix C B^T over the state size (`CB`, fp32), zeroed where the
row and column tokens belong to different packed sequences (`seq_idx`).  One program per
(BLOCK_SIZE_M x BLOCK_SIZE_N output tile, batch, chunk x group) loops over the state size
in BLOCK_SIZE_K steps of tl.dot.  SGLang's choices, as its SSD prefill calls it
(`_bmm_chunk_fwd(C, B, chunk_size, seq_idx=seq_idx, output_dtype=torch.float32)`): the
kernel's default 16 x 16 x 16 tiles, Triton's default 4 warps and 3 stages, not causal,
tl.dot in the inputs' dtype.  Knobs: the three tile sizes, `num_warps`, `num_stages`, None
keeping SGLang's.

SGLang allocates CB per call; here it is allocated in `prepare`, outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton
import triton.language as tl

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_TILE = 16  # the kernel's default BLOCK_SIZE_M/N/K, which SGLang's call keeps
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class SsdBmmConfig:
    block_m: int | None = None  # None: the kernel's default 16 (SGLang passes none)
    block_n: int | None = None  # None: 16
    block_k: int | None = None  # None: 16
    num_warps: int | None = None  # None: Triton's default 4
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: SsdBmmConfig, c: torch.Tensor, b: torch.Tensor, seq_idx: torch.Tensor, chunk_size: int
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_ssd_bmm")
    if c.dim() != 4 or b.shape != c.shape:
        raise ValueError("C and B must both be [batch, seqlen, ngroups, dstate]")
    batch, seqlen, ngroups, dstate = c.shape
    if seq_idx.shape != (batch, seqlen):
        raise ValueError("seq_idx must be [batch, seqlen]")
    nchunks = triton.cdiv(seqlen, chunk_size)
    bm, bn, bk = (
        cfg.block_m or SGLANG_TILE,
        cfg.block_n or SGLANG_TILE,
        cfg.block_k or SGLANG_TILE,
    )
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    dot_dtype = {torch.bfloat16: tl.bfloat16, torch.float16: tl.float16}.get(c.dtype, tl.float32)
    out = torch.empty((batch, nchunks, ngroups, chunk_size, chunk_size), device=c.device,
                      dtype=torch.float32)  # fmt: skip
    grid = (triton.cdiv(chunk_size, bm) * triton.cdiv(chunk_size, bn), batch, nchunks * ngroups)
    args = (
        c, b, out, seq_idx, seqlen, chunk_size, dstate, ngroups,
        c.stride(0), c.stride(1), c.stride(2), c.stride(-1),
        b.stride(0), b.stride(1), b.stride(2), b.stride(-1),
        out.stride(0), out.stride(1), out.stride(2), out.stride(-2), out.stride(-1),
        seq_idx.stride(0), seq_idx.stride(1), False, dot_dtype,
    )  # fmt: skip

    def launch() -> torch.Tensor:
        handle = mod._bmm_chunk_fwd_kernel[grid](
            *args, HAS_SEQ_IDX=True, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_bmm_chunk_fwd_kernel"], block_m=bm,
            block_n=bn, block_k=bk, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out

    return launch
