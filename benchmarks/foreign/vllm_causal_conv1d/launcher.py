"""vLLM's causal depthwise conv1d prefill (vllm/model_executor/layers/mamba/ops/
causal_conv1d.py, v0.34.0: `_causal_conv1d_fwd_kernel`), launched as vLLM's
`causal_conv1d_fn` launches it for Qwen3-Next's gated-delta-net layers (varlen packed
prompts, channel-last activations, a pool of conv states, SiLU, no bias) so that its launch
choices are knobs.

Before the linear attention of every gated-delta-net (and Mamba-2) layer of a prefill, the
mixed q, k and v channels go through a short causal convolution along the sequence: each
channel's output at token t is silu(sum over the last `width` inputs of that channel times
its weights), the first width - 1 inputs of a sequence coming from its cached conv state
when the sequence continues a cached prefix (zeros otherwise); the last width - 1 inputs of
each sequence are written back to its state line in the pool.  One program per (BLOCK_M
tokens of one sequence, BLOCK_N channels) keeps the previous width - 1 inputs in registers
and slides over its tokens; the program of a sequence's first chunk also rewrites that
sequence's state line.  The list of (sequence, chunk) pairs that the grid walks is built
on the host once per batch (vLLM's mamba metadata, `nums_dict`) and made here in `prepare`.

vLLM's launch: BLOCK_M 8, BLOCK_N 256, num_stages 2, Triton's default 4 warps, and
programmatic dependent launch on compute capability 9 and above (off under the CPU
interpreter).  Knobs: `block_m`, `block_n`, `num_warps`, `num_stages`, None keeping vLLM's.
The output is allocated in `prepare` (vLLM allocates it per call with empty_like).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK_M = 8
VLLM_BLOCK_N = 256
VLLM_STAGES = 2
TRITON_DEFAULT_WARPS = 4
PAD_SLOT_ID = -1  # vLLM's padding marker in the (sequence, chunk) lists
NULL_BLOCK_ID = 0  # vLLM's null state line (never a sequence's)


@dataclass(frozen=True)
class CausalConv1dConfig:
    block_m: int | None = None  # None: vLLM's 8
    block_n: int | None = None  # None: vLLM's 256
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: vLLM's 2


def launch_pdl(x: torch.Tensor) -> bool:
    """vLLM's `current_platform.is_arch_support_pdl()`: compute capability 9 and above."""
    return x.is_cuda and torch.cuda.get_device_capability(x.device)[0] >= 9


def chunk_lists(query_start_loc: torch.Tensor, block_m: int) -> tuple[torch.Tensor, torch.Tensor]:
    """vLLM's per-program (sequence, chunk) lists: for each sequence, one entry per BLOCK_M
    tokens (`causal_conv1d_fn`'s `num_program`, or the mamba metadata's `nums_dict`)."""
    lens = query_start_loc.diff().tolist()
    seqs = [i for i, n in enumerate(lens) for _ in range(-(-n // block_m))]
    chunks = [c for n in lens for c in range(-(-n // block_m))]
    device = query_start_loc.device
    return (
        torch.tensor(seqs, dtype=torch.int32, device=device),
        torch.tensor(chunks, dtype=torch.int32, device=device),
    )


def prepare(
    cfg: CausalConv1dConfig, x: torch.Tensor, weight: torch.Tensor, conv_states: torch.Tensor,
    query_start_loc: torch.Tensor, cache_indices: torch.Tensor, has_initial_state: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("vllm_causal_conv1d")
    dim = x.shape[1]
    width = weight.shape[1]
    if x.stride(1) != 1 or weight.shape[0] != dim or conv_states.shape[1:] != (width - 1, dim):
        raise ValueError(
            "x [tokens, dim] row-major, weight [dim, width], states [lines, width - 1, dim]"
        )
    bm = cfg.block_m or VLLM_BLOCK_M
    bn = cfg.block_n or VLLM_BLOCK_N
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or VLLM_STAGES
    xt = x.t()  # (dim, tokens), channel-last as vLLM passes it
    states = conv_states.transpose(1, 2)  # (lines, dim, width - 1), vLLM's view of the pool
    out = torch.empty_like(x)
    ot = out.t()
    seq_of, chunk_of = chunk_lists(query_start_loc, bm)
    grid = (seq_of.numel(), triton.cdiv(dim, bn))
    pdl = launch_pdl(x)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod._causal_conv1d_fwd_kernel[grid](
            xt, weight, None, states, cache_indices, has_initial_state, query_start_loc,
            seq_of, chunk_of, ot, dim, states.shape[0],
            xt.stride(0), xt.stride(1), weight.stride(0), weight.stride(1),
            states.stride(0), states.stride(1), states.stride(2), cache_indices.stride(0),
            ot.stride(0), ot.stride(1), PAD_SLOT_ID, NULL_BLOCK_ID,
            HAS_BIAS=False, KERNEL_WIDTH=width, SILU_ACTIVATION=True, HAS_NULL_BLOCK=True,
            NP2_STATELEN=triton.next_power_of_2(width - 1), BLOCK_M=bm, BLOCK_N=bn,
            num_warps=warps, num_stages=stages, launch_pdl=pdl,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_causal_conv1d_fwd_kernel"],
            block_m=bm, block_n=bn, num_warps=warps, num_stages=stages, launch_pdl=pdl,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return out, conv_states

    return launch
