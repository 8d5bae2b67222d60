"""SGLang's Mamba-2 chunk states (python/sglang/srt/layers/attention/mamba/ops/
ssd_chunk_state.py, v0.5.9, adapted there from vLLM and Tri Dao's mamba_ssm:
`_chunk_state_fwd_kernel`), launched by our copy of SGLang's `_chunk_state_fwd` so that its
launch choices are knobs.

The SSD prefill of a Mamba-2 layer, after the dt cumsum (`_chunk_cumsum_fwd`), forms for
every chunk and head the state that chunk alone would leave: a headdim x dstate matrix,
x^T times B over the chunk's tokens, each token's B row scaled by exp(dA_last - dA_t) * dt_t
(zero for tokens of an earlier packed sequence than the chunk's last), in fp32;
`_state_passing_fwd` then chains them.  One program per (BLOCK_SIZE_M x BLOCK_SIZE_N tile of
the state, batch x chunk, head) walks the chunk's tokens in BLOCK_SIZE_K steps: loads an x
tile and a B tile, scales B in fp32, casts it back to x's dtype and accumulates tl.dot(x,
B) in fp32; heads sharing a group reread its B.  SGLang's choices, as its SSD prefill calls
it (`_chunk_state_fwd(B, x, dt, dA_cumsum, seq_idx=seq_idx, states_in_fp32=True)`): the
kernel's default 16 x 16 x 16 tiles (no autotune), Triton's default 4 warps and 3 stages.
Knobs: the three tile sizes, `num_warps`, `num_stages`, None keeping SGLang's.

SGLang allocates the states per call; here they are allocated in `prepare`, outside the
timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_TILE = 16  # the kernel's default BLOCK_SIZE_M/N/K, which SGLang's call keeps
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class SsdChunkStateConfig:
    block_m: int | None = None  # None: the kernel's default 16 (SGLang passes none)
    block_n: int | None = None  # None: 16
    block_k: int | None = None  # None: 16
    num_warps: int | None = None  # None: Triton's default 4
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: SsdChunkStateConfig, x: torch.Tensor, b: torch.Tensor, dt: torch.Tensor,
    da_cumsum: torch.Tensor, seq_idx: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_ssd_chunk_state")
    if x.dim() != 4 or b.dim() != 4 or b.shape[:2] != x.shape[:2]:
        raise ValueError(
            "x must be [batch, seqlen, nheads, headdim], B [batch, seqlen, ngroups, dstate]"
        )
    batch, seqlen, nheads, headdim = x.shape
    ngroups, dstate = b.shape[2], b.shape[3]
    if nheads % ngroups or dt.shape[:2] != (batch, nheads) or da_cumsum.shape != dt.shape:
        raise ValueError("dt and dA_cumsum must be [batch, nheads, nchunks, chunk]")
    if seq_idx.shape != (batch, seqlen):
        raise ValueError("seq_idx must be [batch, seqlen]")
    nchunks, chunk_size = dt.shape[2], dt.shape[3]
    bm, bn, bk = (
        cfg.block_m or SGLANG_TILE,
        cfg.block_n or SGLANG_TILE,
        cfg.block_k or SGLANG_TILE,
    )
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    states = torch.empty((batch, nchunks, nheads, headdim, dstate), device=x.device,
                         dtype=torch.float32)  # fmt: skip
    grid = (triton.cdiv(headdim, bm) * triton.cdiv(dstate, bn), batch * nchunks, nheads)
    args = (
        x, b, states, dt, da_cumsum, seq_idx, headdim, dstate, chunk_size, batch, seqlen,
        nheads // ngroups,
        x.stride(0), x.stride(1), x.stride(2), x.stride(3),
        b.stride(0), b.stride(1), b.stride(2), b.stride(-1),
        states.stride(0), states.stride(1), states.stride(2), states.stride(3), states.stride(4),
        dt.stride(0), dt.stride(2), dt.stride(1), dt.stride(3),
        da_cumsum.stride(0), da_cumsum.stride(2), da_cumsum.stride(1), da_cumsum.stride(3),
        seq_idx.stride(0), seq_idx.stride(1),
    )  # fmt: skip

    def launch() -> torch.Tensor:
        handle = mod._chunk_state_fwd_kernel[grid](
            *args, HAS_SEQ_IDX=True, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_chunk_state_fwd_kernel"], block_m=bm,
            block_n=bn, block_k=bk, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return states

    return launch
