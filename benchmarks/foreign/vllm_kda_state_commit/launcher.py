"""vLLM's Kimi K3 KDA RecoverSSM state commit (vllm/models/kimi_k3/nvidia/ops/recoverssm.py,
v0.34.0: `_commit_kda_state_kernel` with its `_kda_gate`), launched as
`KDARecoverSSMCommitContext.commit` launches it on the Triton backend (every GPU but SM10x,
where CuTe kernels replace it) so that its launch choices are knobs.

After a speculative step's sampling, Kimi K3 under RecoverSSM (`--use-replayssm` with a
draft model) folds each request's accepted tokens into the recurrent state of every KDA
layer, which its verify left untouched.  One launch covers all the rank's KDA layers: the
grid is (V / BLOCK_V state-row tiles, requests, layers x heads), and a program finds its
layer's state pool, verify records and parameters through per-layer tables of base
addresses and block strides (each layer keeps its own pools; vLLM builds the tables once in
`KDARecoverSSMCommitContext.create`).  It returns at once for a request with no state or
nothing to commit; otherwise it loads its [BLOCK_V, K] tile of the source slot's fp32 state
(BLOCK_K = next_power_of_2(K): the whole key row, masked), then walks the accepted tokens
from the last back to the first, each loading the token's key and raw gate (activation
dtype) and fp32 correction, L2-normalising the key and computing the bounded gate, and
accumulating the rank-1 update correction x key scaled by the decays of the tokens after it
into a [BLOCK_V, K] fp32 correction while multiplying the decays into a running product; the
final state is the source tile times that product plus the correction, stored to the final
slot.  In align mode (vLLM's "align" mamba cache mode, its default with prefix caching) a
second correction and product cover the tokens before the request's block boundary, and the
state they give is stored to the boundary slot when the window closes a block.  No tl.dot:
per token and tile, a few [BLOCK_V, K] element-wise passes.

vLLM's launch (`commit`, fixed, no tuner): BLOCK_V = min(next_power_of_2(V), 32), BLOCK_K =
next_power_of_2(K) (not a knob: the kernel has no loop over the keys), 4 warps, 2 stages.
Knobs: `block_v`, `num_warps`, `num_stages`, None keeping vLLM's.  The commit plan
(`_prepare_commit_plan_kernel`'s commit lengths and final and boundary slots, a one-warp
launch per request) and the convolution-state compaction launched before this kernel are
not timed: the plan is an input (see reference.py); the per-layer address and stride
tables are made in `prepare`, from the tensors the call gets.
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
VLLM_MAX_BLOCK_V = 32  # commit's min(next_power_of_2(value_dim), 32)
VLLM_WARPS = 4
VLLM_STAGES = 2


@dataclass(frozen=True)
class KdaCommitConfig:
    block_v: int | None = None  # None: vLLM's min(next_power_of_2(V), 32)
    num_warps: int | None = None  # None: vLLM's 4
    num_stages: int | None = None  # None: vLLM's 2


def layer_tables(pools: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """vLLM's `_base_addrs` and `_block_strides` of per-layer tensors, here the layers of
    one stacked tensor: each layer's address and its first dimension's stride (int64)."""
    layers = pools.shape[0]
    addrs = [pools[layer].data_ptr() for layer in range(layers)]
    base = torch.tensor(addrs, dtype=torch.int64, device=pools.device)
    strides = torch.full((layers,), pools.stride(1), dtype=torch.int64, device=pools.device)
    return base, strides


def prepare(
    cfg: KdaCommitConfig, state: torch.Tensor, correction: torch.Tensor,
    key_gate: torch.Tensor, a_log: torch.Tensor, dt_bias: torch.Tensor,
    state_indices: torch.Tensor, commit_lens: torch.Tensor, final_state_indices: torch.Tensor,
    boundary_state_indices: torch.Tensor, boundary_recovery_lens: torch.Tensor,
    lower_bound: float | None, align: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_kda_state_commit")
    if state.dim() != 5 or correction.dim() != 5 or key_gate.dim() != 5:
        raise ValueError(
            "state [layers, slots, heads, V, K], correction [layers, reqs, heads, window, V], "
            "key_gate [layers, reqs, heads, window, 2K]"
        )
    layers, _, heads, v_dim, k_dim = state.shape
    reqs = state_indices.shape[0]
    if correction.shape[:3] != (layers, reqs, heads) or key_gate.shape[-1] != 2 * k_dim:
        raise ValueError("the verify records must be [layers, reqs, heads, window, ...]")
    if a_log.shape != (layers, heads) or dt_bias.shape != (layers, heads, k_dim):
        raise ValueError("A_log must be [layers, heads], dt_bias [layers, heads, K]")
    block_v = cfg.block_v or min(triton.next_power_of_2(v_dim), VLLM_MAX_BLOCK_V)
    block_k = triton.next_power_of_2(k_dim)
    warps = cfg.num_warps or VLLM_WARPS
    stages = cfg.num_stages or VLLM_STAGES
    state_base, state_strides = layer_tables(state)
    corr_base, corr_strides = layer_tables(correction)
    kg_base, kg_strides = layer_tables(key_gate)
    grid = (triton.cdiv(v_dim, block_v), reqs, layers * heads)
    # vLLM passes the first layer's tensors for their dtypes and every layer's strides from them
    s0, c0, g0 = state[0], correction[0], key_gate[0]
    args = (
        s0, state_base, state_strides, c0, corr_base, corr_strides, g0, kg_base, kg_strides,
        a_log, dt_bias, state_indices, commit_lens, final_state_indices,
        boundary_state_indices, boundary_recovery_lens, lower_bound or 0.0, NULL_BLOCK_ID,
        s0.stride(1), s0.stride(2), s0.stride(3), c0.stride(1), c0.stride(2), c0.stride(3),
        g0.stride(1), g0.stride(2), g0.stride(3), a_log.stride(0), a_log.stride(1),
        dt_bias.stride(0), dt_bias.stride(1), dt_bias.stride(2), state_indices.stride(0),
    )  # fmt: skip

    def launch() -> torch.Tensor:
        handle = mod._commit_kda_state_kernel[grid](
            *args, K=k_dim, V=v_dim, BK=block_k, BV=block_v, NUM_HEADS=heads,
            USE_LOWER_BOUND=lower_bound is not None, ALIGN_MODE=bool(align),
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_commit_kda_state_kernel"],
            block_v=block_v, block_k=block_k, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2], align=bool(align),
        )  # fmt: skip
        return state

    return launch
