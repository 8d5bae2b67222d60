"""vLLM's Mamba-2 chunk scan (vllm/model_executor/layers/mamba/ops/ssd_chunk_scan.py,
v0.34.0: `_chunk_scan_fwd_kernel`), launched as vLLM's `_chunk_scan_fwd` launches it from
`_mamba_chunk_scan_combined_fwd` (MambaMixer2's prefill: D per head, no z, initial states
from the SSM cache), so that its launch choices are knobs.

The grid is (cdiv(chunk_size, BLOCK_SIZE_M) x cdiv(head_dim, BLOCK_SIZE_N), chunks,
heads): each program makes a BLOCK_SIZE_M x BLOCK_SIZE_N tile of one chunk's output for
one head.  First the inter-chunk term: C's rows [BLOCK_SIZE_M, d_state] times the previous
state [d_state, BLOCK_SIZE_N] (the sequence's initial state for its first chunk) in one
tl.dot (d_state padded to a power of two, at most 128), scaled by exp(dA_cumsum) per row;
then the intra-chunk term: for BLOCK_SIZE_K-column steps up to the diagonal, cb's tile
decayed by exp(dA_m - dA_k), scaled by dt_k, causally masked and cast to x's dtype, times
x's [BLOCK_SIZE_K, BLOCK_SIZE_N] tile by tl.dot; then D x, stored in the dtype.  fast_exp
(exp2 of a scaled argument) throughout.

vLLM's launch: `@triton.autotune` over 23 configurations keyed on chunk size, head dim,
d_state and causality, filtered on sm90 (`_drop_racy_wgmma_configs` drops num_stages > 1
with a multiple of 4 warps and BLOCK_SIZE_M a multiple of 64: Triton leaves the wgmma of
`tl.dot(cb, x)` reading registers the next step overwrites, NaN rows); `launch_autotuned`
times the 12 survivors on the first call.  The autotune decorator is dropped; `triton_v1` is
the first configuration, which the filter keeps (32 x 32 x 32, 8 warps, 2 stages).  Knobs:
the three tiles, the warps and the stages, None keeping those; the launcher refuses the
configurations vLLM's sm90 filter drops (on every device: the spec's numbers are for
Hopper).  vLLM preallocates the output (the mixer's buffer, written in place); here it is
made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# vLLM's first autotune configuration (kept by the sm90 filter)
VLLM_FIRST = {"block_m": 32, "block_n": 32, "block_k": 32, "num_warps": 8, "num_stages": 2}


@dataclass(frozen=True)
class ChunkScanConfig:
    block_m: int | None = None  # None: the first config's 32 output rows (tokens) per tile
    block_n: int | None = None  # None: the first config's 32 head-dim columns per tile
    block_k: int | None = None  # None: the first config's 32-token steps of the causal loop
    num_warps: int | None = None  # None: the first config's 8
    num_stages: int | None = None  # None: the first config's 2


def racy_on_sm90(block_m: int, num_warps: int, num_stages: int) -> bool:
    """vLLM's `_drop_racy_wgmma_configs` condition: such a configuration writes NaN rows
    on sm90."""
    return num_stages != 1 and num_warps % 4 == 0 and block_m % 64 == 0


def prepare(
    cfg: ChunkScanConfig, cb: torch.Tensor, x: torch.Tensor, dt: torch.Tensor,
    da_cumsum: torch.Tensor, C: torch.Tensor, states: torch.Tensor,
    cu_chunk_seqlens: torch.Tensor, seq_idx: torch.Tensor, D: torch.Tensor,
    initial_states: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_ssd_chunk_scan")
    helper = _common.load_source("vllm_mamba_fast_exp")
    # The extracted kernel calls fast_exp (triton_helpers.py) by global name.
    mod.fast_exp = helper.fast_exp
    _, heads, head_dim = x.shape
    _, nchunks, chunk_size = dt.shape
    _, groups, d_state = C.shape
    if heads % groups or cb.shape != (nchunks, groups, chunk_size, chunk_size):
        raise ValueError("cb must be [chunks, groups, chunk_size, chunk_size], groups | heads")
    if da_cumsum.shape != dt.shape or states.shape != (nchunks, heads, head_dim, d_state):
        raise ValueError("da_cumsum like dt, states [chunks, heads, head_dim, d_state]")
    if seq_idx.shape != (nchunks,) or D.shape != (heads,):
        raise ValueError("seq_idx [chunks], D [heads]")
    block_m = cfg.block_m or VLLM_FIRST["block_m"]
    block_n = cfg.block_n or VLLM_FIRST["block_n"]
    block_k = cfg.block_k or VLLM_FIRST["block_k"]
    warps = cfg.num_warps or VLLM_FIRST["num_warps"]
    stages = cfg.num_stages or VLLM_FIRST["num_stages"]
    if racy_on_sm90(block_m, warps, stages):
        raise ValueError(
            f"BLOCK_SIZE_M {block_m} with {warps} warps and {stages} stages is a config "
            "vLLM drops on sm90 (a wgmma race writes NaN rows)"
        )
    out = torch.empty_like(x)
    grid = (
        triton.cdiv(chunk_size, block_m) * triton.cdiv(head_dim, block_n), nchunks, heads,
    )  # fmt: skip
    init = initial_states

    def launch() -> torch.Tensor:
        handle = mod._chunk_scan_fwd_kernel[grid](
            cb_ptr=cb, x_ptr=x, z_ptr=None, out_ptr=out, dt_ptr=dt,
            dA_cumsum_ptr=da_cumsum, seq_idx_ptr=seq_idx, C_ptr=C, states_ptr=states,
            D_ptr=D, initstates_ptr=init, cu_chunk_seqlens_ptr=cu_chunk_seqlens,
            chunk_size=chunk_size, hdim=head_dim, dstate=d_state,
            nheads_ngroups_ratio=heads // groups,
            stride_cb_chunk=cb.stride(0), stride_cb_head=cb.stride(1),
            stride_cb_csize_m=cb.stride(2), stride_cb_csize_k=cb.stride(3),
            stride_x_seqlen=x.stride(0), stride_x_head=x.stride(1),
            stride_x_hdim=x.stride(2),
            stride_z_seqlen=0, stride_z_head=0, stride_z_hdim=0,
            stride_out_seqlen=out.stride(0), stride_out_head=out.stride(1),
            stride_out_hdim=out.stride(2),
            stride_dt_chunk=dt.stride(1), stride_dt_head=dt.stride(0),
            stride_dt_csize=dt.stride(2),
            stride_dA_cs_chunk=da_cumsum.stride(1), stride_dA_cs_head=da_cumsum.stride(0),
            stride_dA_cs_csize=da_cumsum.stride(2),
            stride_seq_idx_chunk=seq_idx.stride(0),
            stride_C_seqlen=C.stride(0), stride_C_head=C.stride(1),
            stride_C_dstate=C.stride(2),
            stride_states_chunk=states.stride(0), stride_states_head=states.stride(1),
            stride_states_hdim=states.stride(2), stride_states_dstate=states.stride(3),
            stride_init_states_batch=init.stride(0), stride_init_states_head=init.stride(1),
            stride_init_states_hdim=init.stride(2),
            stride_init_states_dstate=init.stride(3),
            stride_D_head=D.stride(0),
            IS_CAUSAL=True, HAS_D=True, D_HAS_HDIM=False, HAS_Z=False,
            BLOCK_SIZE_M=block_m, BLOCK_SIZE_N=block_n, BLOCK_SIZE_K=block_k,
            BLOCK_SIZE_DSTATE=max(triton.next_power_of_2(d_state), 16),
            IS_TRITON_22=True, HAS_INITSTATES=True,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_chunk_scan_fwd_kernel"],
            block_m=block_m, block_n=block_n, block_k=block_k, num_warps=warps,
            num_stages=stages, programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out

    return launch
