"""SGLang's Mamba-2 per-sequence final states (python/sglang/srt/layers/attention/mamba/ops/
ssd_chunk_state.py, v0.5.9, adapted there from vLLM and Tri Dao's mamba_ssm:
`_chunk_state_varlen_kernel`), launched by our copy of SGLang's `chunk_state_varlen` so that
its launch choices are knobs.

The last kernel of a Mamba-2 layer's SSD prefill on SGLang's CUDA path: `MambaMixer2` calls
`mamba_chunk_scan_combined` with the prompts' `cu_seqlens` and `return_varlen_states=True`,
and this kernel makes each packed sequence's final SSM state, which SGLang then writes into
the request's slot of the state pool.  A sequence's final state is the state entering its
last chunk (from `_state_passing_fwd`, or the request's cached initial state when the
sequence starts inside that chunk), decayed to the sequence's last token, plus x^T B over the
sequence's tokens in that chunk, each B row scaled by exp(dA_last - dA_t) * dt_t.  One
program per (BLOCK_SIZE_M x BLOCK_SIZE_N tile of the headdim x dstate state, sequence, head)
loads the sequence's bounds, walks its last chunk's tokens in BLOCK_SIZE_K steps (an x tile,
a B tile scaled in fp32 and cast back to x's dtype, a tl.dot into fp32), then loads the
boundary state tile, scales it and adds it, and stores the tile.

SGLang's choices: the kernel's default 16 x 16 x 16 tiles (the grid asks META for them; SGLang
passes none and there is no autotune), Triton's default 4 warps and 3 stages; initial states
passed (HAS_INITSTATES) whenever a request in the batch has a cached prefix.  Knobs: the three
tile sizes, `num_warps`, `num_stages`, None keeping SGLang's.  The output (SGLang's
`torch.empty` per call) is allocated in `prepare`, outside the timed call.
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
class SsdVarlenStatesConfig:
    block_m: int | None = None  # None: the kernel's default 16 (SGLang passes none)
    block_n: int | None = None  # None: 16
    block_k: int | None = None  # None: 16
    num_warps: int | None = None  # None: Triton's default 4
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: SsdVarlenStatesConfig, x: torch.Tensor, b: torch.Tensor, dt: torch.Tensor,
    da_cumsum: torch.Tensor, cu_seqlens: torch.Tensor, chunk_states: torch.Tensor,
    initial_states: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_ssd_varlen_states")
    total, nheads, headdim = x.shape
    ngroups, dstate = b.shape[1], b.shape[2]
    nchunks, chunk_size = dt.shape[1], dt.shape[2]
    seqs = cu_seqlens.numel() - 1
    if b.shape[0] != total or nheads % ngroups or dt.shape[0] != nheads:
        raise ValueError(
            "x [tokens, nheads, headdim], B [tokens, ngroups, dstate], dt [nheads, ...]"
        )
    if da_cumsum.shape != dt.shape or chunk_states.shape != (nchunks, nheads, headdim, dstate):
        raise ValueError("dA_cumsum like dt, chunk states [nchunks, nheads, headdim, dstate]")
    if initial_states.shape != (seqs, nheads, headdim, dstate):
        raise ValueError("initial states [seqs, nheads, headdim, dstate]")
    bm, bn, bk = (
        cfg.block_m or SGLANG_TILE,
        cfg.block_n or SGLANG_TILE,
        cfg.block_k or SGLANG_TILE,
    )
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    states = torch.empty(seqs, nheads, headdim, dstate, dtype=chunk_states.dtype,
                         device=chunk_states.device)  # fmt: skip
    grid = (triton.cdiv(headdim, bm) * triton.cdiv(dstate, bn), seqs, nheads)
    args = (
        x, b, dt, da_cumsum, chunk_states, cu_seqlens, states, initial_states,
        headdim, dstate, chunk_size, total, nheads // ngroups,
        x.stride(0), x.stride(1), x.stride(2),
        b.stride(0), b.stride(1), b.stride(2),
        dt.stride(1), dt.stride(0), dt.stride(2),
        da_cumsum.stride(1), da_cumsum.stride(0), da_cumsum.stride(2),
        *chunk_states.stride(), *states.stride(), *initial_states.stride(),
    )  # fmt: skip

    def launch() -> torch.Tensor:
        handle = mod._chunk_state_varlen_kernel[grid](
            *args, HAS_INITSTATES=True, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_chunk_state_varlen_kernel"],
            block_m=bm, block_n=bn, block_k=bk, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return states

    return launch
