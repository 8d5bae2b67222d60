"""vLLM's ReplaySSM Mamba-2 decode kernels
(vllm/model_executor/layers/mamba/ops/selective_state_update_replayssm_output_only.py,
v0.34.0: `_replayssm_output_only_precompute_kernel` and `_replayssm_output_only_kernel`),
launched as vLLM's `selective_state_update_replayssm_output_only` launches them for
`MambaMixer2`'s decode tokens under `--use-replayssm` with the Triton backend (vLLM's
default), so that the main kernel's launch choices are knobs.

Two launches a step.  The precompute, one program per (row, group), returns on a flush row
or the null slot, else dots the group's C with every B of the window (the ring's B_cache
rows before the row's position and the token's B at it) into bc_pre, an fp32 scratch
[rows, groups, window].  The main kernel, one program per (BLOCK_SIZE_M rows of the head's
head_dim, row, head), returns on the null slot; on an output-only row it takes the window's
dt (cached, and the token's softplus(dt + dt_bias)), their cumulative decay weights, the
cached x rows, reads the slot's checkpoint state in NF_DSTATE_TILE-column steps (unrolled)
for decay x (S0 C), adds the replay sum_j w_j bc_j x_j, and appends the token's x (and, in
the first row block, its dt and B) to the ring; on a flush row it rebuilds the state in
FL_DSTATE_TILE-column steps (unrolled), a [BLOCK_SIZE_M, window] x [window, tile] tl.dot of
the window's x with its B scaled by w (tf32x3 on CUDA, the tile rounded to the input dtype
first), stores it to the slot and reads it out; both add D x.  No output gate here: the
mixer's gated RMSNorm applies z after.

vLLM's launch: the main grid (cdiv(head_dim, BLOCK_SIZE_M), rows, heads) with
`get_replayssm_config("mamba2_output_only")`, keyed on the device alone: off Blackwell
(Hopper) BLOCK_SIZE_M 16, 1 warp, NF and FL tiles of 64 and 128 columns (each capped at
next_power_of_2(dstate), at least 16), 2 stages; on SM10x 64, 1, 32, 64, 2; the window padded to a
power of two (at least 16 for the dot); the precompute's grid (rows, groups), 2 warps,
Triton's default stages.  No autotune.  The @triton.heuristics flags (state indices,
dt_bias, D, no z, BLOCK_SIZE_DSTATE = next_power_of_2(dstate)) are passed as the
heuristics set them.  Knobs: the main kernel's rows per program, warps, the two dstate tiles
and the stages, None keeping vLLM's; a state tile of more than 256 fp32 values a thread is
refused (MAX_PER_THREAD).  vLLM's per-call output (the mixer's preallocated buffer) and its
persistent bc_pre scratch are made in `prepare`; the pool's state and ring are updated in
place (only the flush rows' states change; the appended ring entries are the same on every
call).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
NULL_BLOCK_ID = 0  # vllm.v1.attention.backends.utils.NULL_BLOCK_ID
# get_replayssm_config("mamba2_output_only"): (block_m, warps, nf tile, fl tile, stages)
VLLM_HOPPER = (16, 1, 64, 128, 2)  # every GPU but SM10x
VLLM_BLACKWELL = (64, 1, 32, 64, 2)
PRECOMPUTE_WARPS = 2
# A [BLOCK_SIZE_M, tile] fp32 state tile over more than 256 values a thread spills; vLLM's
# Hopper launch holds 64 (16 x 128 over one warp).
MAX_PER_THREAD = 256


@dataclass(frozen=True)
class ReplaySSMConfig:
    block_m: int | None = None  # None: vLLM's 16 (64 on SM10x)
    num_warps: int | None = None  # None: vLLM's 1
    nf_dstate_tile: int | None = None  # None: vLLM's 64 (32 on SM10x), capped at dstate
    fl_dstate_tile: int | None = None  # None: vLLM's 128 (64 on SM10x), capped at dstate
    num_stages: int | None = None  # None: vLLM's 2


def vllm_choice(device: torch.device) -> tuple[int, int, int, int, int]:
    """`get_replayssm_config`'s table: Blackwell (SM10x) or not, nothing else."""
    blackwell = device.type == "cuda" and torch.cuda.get_device_capability(device)[0] == 10
    return VLLM_BLACKWELL if blackwell else VLLM_HOPPER


def dstate_tile(dstate: int, tile: int) -> int:
    """replayssm_config's `_dstate_tile`: at least 16, at most next_power_of_2(dstate)."""
    return max(16, min(tile, triton.next_power_of_2(dstate)))


def prepare(
    cfg: ReplaySSMConfig, x: torch.Tensor, dt: torch.Tensor, A: torch.Tensor, B: torch.Tensor,
    C: torch.Tensor, D: torch.Tensor, dt_bias: torch.Tensor, state: torch.Tensor,
    x_cache: torch.Tensor, dt_cache: torch.Tensor, B_cache: torch.Tensor,
    write_pos: torch.Tensor, is_flush: torch.Tensor, slots: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, ...]]:  # fmt: skip
    mod = _common.load_source("vllm_replayssm_decode")
    batch, nheads, dim = x.shape
    ngroups, dstate = B.shape[1], B.shape[2]
    window = x_cache.shape[2]
    if state.shape[1:] != (nheads, dim, dstate) or nheads % ngroups:
        raise ValueError("state [slots, heads, head_dim, dstate], heads a multiple of groups")
    if x_cache.shape[1:] != (nheads, window, dim) or B_cache.shape[1:] != (
        ngroups, window, dstate
    ) or dt_cache.shape[1:] != (nheads, window):  # fmt: skip
        raise ValueError("the ring: x_cache [heads, window, dim], B_cache [groups, window, "
                         "dstate], dt_cache [heads, window] per slot")  # fmt: skip
    if dt_cache.dtype != torch.float32 or A.dtype != torch.float32:
        raise ValueError("dt_cache and A are fp32 (vLLM keeps them so)")
    # MambaMixer2's decode views: A, dt, dt_bias and D tied across head_dim (stride 0)
    A_d = A[:, None, None].expand(nheads, dim, dstate)
    dt_d = dt[:, :, None].expand(batch, nheads, dim)
    dt_bias_d = dt_bias[:, None].expand(nheads, dim)
    D_d = D[:, None].expand(nheads, dim)
    indices = slots.unsqueeze(1)  # the kernel's [batch, 1] view of a 1-D index tensor
    vm, vw, vnf, vfl, vs = vllm_choice(x.device)
    block_m = cfg.block_m or vm
    warps = cfg.num_warps or vw
    stages = cfg.num_stages or vs
    nf_tile = dstate_tile(dstate, cfg.nf_dstate_tile or vnf)
    fl_tile = dstate_tile(dstate, cfg.fl_dstate_tile or vfl)
    if block_m * max(nf_tile, fl_tile) > MAX_PER_THREAD * 32 * warps:
        raise ValueError(
            f"a {block_m} x {max(nf_tile, fl_tile)} state tile over {warps} warps holds more "
            f"than {MAX_PER_THREAD} fp32 values per thread"
        )
    bs_dstate = triton.next_power_of_2(dstate)
    block_k_cache = max(1, triton.next_power_of_2(window))
    block_k_dot = max(16, block_k_cache)
    precision = "tf32x3"  # vLLM's on CUDA (None on ROCm only)
    out = x.new_empty(x.shape)  # the mixer's preallocated output
    bc_pre = torch.empty(batch, ngroups, window, dtype=torch.float32, device=x.device)
    pre_grid = (batch, ngroups)
    grid = (triton.cdiv(dim, block_m), batch, nheads)

    def launch() -> tuple[torch.Tensor, ...]:
        mod._replayssm_output_only_precompute_kernel[pre_grid](
            B, C, B_cache, write_pos, is_flush, bc_pre, indices, NULL_BLOCK_ID,
            batch, ngroups, dstate, B.stride(0), B.stride(1), B.stride(2), C.stride(0),
            C.stride(1), C.stride(2), B_cache.stride(0), B_cache.stride(1),
            B_cache.stride(2), B_cache.stride(3), bc_pre.stride(0), bc_pre.stride(1),
            bc_pre.stride(2), indices.stride(0), indices.stride(1),
            MAX_CACHE_LEN=window, BLOCK_SIZE_K=block_k_cache, BLOCK_SIZE_DSTATE=bs_dstate,
            HAS_STATE_BATCH_INDICES=True, num_warps=PRECOMPUTE_WARPS,
        )  # fmt: skip
        handle = mod._replayssm_output_only_kernel[grid](
            state, None, x, dt_d, dt_bias_d, A_d, B, C, D_d, None, out, x_cache, dt_cache,
            B_cache, bc_pre, write_pos, is_flush, indices, NULL_BLOCK_ID, batch, nheads,
            dim, dstate, nheads // ngroups, state.stride(0), state.stride(1),
            state.stride(2), state.stride(3), x.stride(0), x.stride(1), x.stride(2),
            dt_d.stride(0), dt_d.stride(1), dt_bias_d.stride(0), A_d.stride(0), B.stride(0),
            B.stride(1), B.stride(2), C.stride(0), C.stride(1), C.stride(2), D_d.stride(0),
            D_d.stride(1), 0, 0, 0, out.stride(0), out.stride(1), out.stride(2),
            x_cache.stride(0), x_cache.stride(1), x_cache.stride(3), x_cache.stride(2),
            dt_cache.stride(0), dt_cache.stride(1), dt_cache.stride(2), B_cache.stride(0),
            B_cache.stride(1), B_cache.stride(2), B_cache.stride(3), bc_pre.stride(0),
            bc_pre.stride(1), bc_pre.stride(2), indices.stride(0), indices.stride(1),
            DT_SOFTPLUS=True, MAX_CACHE_LEN=window, BLOCK_SIZE_M=block_m,
            BLOCK_SIZE_K_CACHE=block_k_cache, BLOCK_SIZE_K_DOT=block_k_dot,
            NF_DSTATE_TILE=nf_tile, NF_NDS=triton.cdiv(bs_dstate, nf_tile),
            FL_DSTATE_TILE=fl_tile, FL_NDS=triton.cdiv(bs_dstate, fl_tile),
            DOT_INPUT_PRECISION=precision, USE_RS_ROUNDING=False, PHILOX_ROUNDS=0,
            BLOCK_SIZE_DSTATE=bs_dstate, HAS_DT_BIAS=True, HAS_D=True, HAS_Z=False,
            HAS_STATE_BATCH_INDICES=True, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=2,
            kernel_names=["_replayssm_output_only_precompute_kernel",
                          "_replayssm_output_only_kernel"],
            block_m=block_m, num_warps=warps, nf_dstate_tile=nf_tile,
            fl_dstate_tile=fl_tile, num_stages=stages, block_k_dot=block_k_dot,
            programs=grid[0] * grid[1] * grid[2], precompute_programs=batch * ngroups,
        )  # fmt: skip
        return out, state, x_cache, dt_cache, B_cache

    return launch
