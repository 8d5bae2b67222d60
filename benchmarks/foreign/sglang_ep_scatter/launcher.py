"""SGLang's DeepEP-normal MoE scatter (python/sglang/srt/layers/moe/ep_moe/kernels.py, v0.5.9:
`_fwd_kernel_ep_scatter_1` and `_fwd_kernel_ep_scatter_2`, from LightLLM), launched as
SGLang's `ep_scatter` launches them from the DeepGEMM MoE runner's pre-processing (DeepEP
normal mode, fp32 scales: Hopper's), so that their launch choices are knobs.

Two launches:

1. one program per local expert loads all the experts' rounded counts (a power-of-two
   block, masked), takes their exclusive `tl.cumsum` and stores it to expert_start_loc
   (every program the same values), then fills its own segment of m_indices with its id,
   BLOCK_E unmasked int32 stores a step (a `tl.range` with 4 stages): each count must be a
   multiple of BLOCK_E, as DeepEP's 128-row alignment makes it for 128;
2. up to 8192 programs walk the tokens grid-stride (token, token + programs, ...); each
   loads the token's whole row (one masked block of next_pow2(hidden) e4m3 values) and its
   group scales once, then walks its top-k slots (a `tl.range` with 4 stages): a slot routed
   to a local expert takes a row with an atomic add on the expert's counter in
   expert_start_loc, stores that row's index to output_index and the row and scales there.

The rows a token's slots take are scattered over the output by expert, and their order
within an expert is the order the atomics land in.  SGLang's launch: BLOCK_E 128 and 8 warps
for the first; min(tokens, 8192) programs and 8 warps for the second; no num_stages passed,
and none would change anything: both loops carry their own 4 (the sm_90 PTX of either kernel
is the same at 1, 3 or 4 launch stages), so the stages are no knob.  Knobs: `block_e`
(dividing 128), `fill_warps`, `copy_programs` and `copy_warps`, None keeping SGLang's.
SGLang allocates the outputs per call with torch.empty (its output_index with
`empty_like(topk_ids)`, int64) and copies the host list of counts to the GPU; here the
counts are an input on the device and the outputs are made in `prepare`, the rows and scales
zero-filled and output_index -1-filled once, so that what the kernel leaves alone (each
expert's padding rows, the remote slots) compares equal.  Under the CPU interpreter only,
the loop counters' `.to(tl.int64)` are read as the counters (the interpreter's `range`
yields Python ints, which have no `.to` and do not overflow).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK_E = 128  # "token num of per expert is aligned to 128"
SGLANG_WARPS = 8  # both launches
SGLANG_MAX_COPY_PROGRAMS = 1024 * 8  # grid = min(recv_topk.shape[0], 1024 * 8)
GROUP = 128  # the quantization block: one scale per 128 columns

LOOP_COUNTERS = ("token_id_int32", "topk_idx_int32")
KERNEL_NAMES = ["_fwd_kernel_ep_scatter_1", "_fwd_kernel_ep_scatter_2"]


def _kernel_module() -> Any:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return _common.load_source_rewritten(
            "sglang_ep_scatter", _common.CastsOfNamesAsIs(LOOP_COUNTERS)
        )
    return _common.load_source("sglang_ep_scatter")


@dataclass(frozen=True)
class EpScatterConfig:
    block_e: int | None = None  # None: SGLang's 128 (must divide every rounded count)
    fill_warps: int | None = None  # None: SGLang's 8
    copy_programs: int | None = None  # None: SGLang's min(tokens, 8192)
    copy_warps: int | None = None  # None: SGLang's 8


Outputs = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]


def prepare(
    cfg: EpScatterConfig, recv_x: torch.Tensor, recv_x_scale: torch.Tensor,
    recv_topk: torch.Tensor, num_recv_tokens_per_expert: torch.Tensor,
) -> Callable[[], Outputs]:  # fmt: skip
    mod = _kernel_module()
    tokens, hidden = recv_x.shape
    topk = recv_topk.shape[1]
    experts = num_recv_tokens_per_expert.numel()
    if recv_x.stride(1) != 1 or recv_topk.shape[0] != tokens:
        raise ValueError("recv_x must have unit column stride and recv_topk one row per token")
    if recv_x_scale.dtype != torch.float32 or tuple(recv_x_scale.shape) != (
        tokens, hidden // GROUP,
    ):  # fmt: skip
        raise ValueError(f"recv_x_scale must be [tokens, hidden / {GROUP}] fp32 (Hopper's)")
    if num_recv_tokens_per_expert.dtype != torch.int32:
        raise ValueError("num_recv_tokens_per_expert must be int32 (SGLang's copy of the list)")
    block_e = cfg.block_e or SGLANG_BLOCK_E
    counts = num_recv_tokens_per_expert.cpu()  # SGLang holds them on the host
    if bool((counts % block_e).any()):
        raise ValueError(f"block_e {block_e} does not divide every rounded count (no mask)")
    rows = int(counts.sum())
    dev = recv_x.device
    scale_cols = recv_x_scale.shape[1]
    output_tensor = torch.zeros(rows, hidden, dtype=recv_x.dtype, device=dev)
    output_scale = torch.zeros(rows, scale_cols, dtype=torch.float32, device=dev)
    m_indices = torch.empty(rows, dtype=torch.int32, device=dev)
    output_index = torch.full_like(recv_topk, -1)
    expert_start_loc = torch.empty_like(num_recv_tokens_per_expert)
    fill_warps = cfg.fill_warps or SGLANG_WARPS
    copy_warps = cfg.copy_warps or SGLANG_WARPS
    programs = min(cfg.copy_programs or SGLANG_MAX_COPY_PROGRAMS, tokens)
    fill_grid = (experts,)
    copy_grid = (programs,)

    def launch() -> Outputs:
        mod._fwd_kernel_ep_scatter_1[fill_grid](
            num_recv_tokens_per_expert, expert_start_loc, m_indices, num_experts=experts,
            num_warps=fill_warps, BLOCK_E=block_e,
            BLOCK_EXPERT_NUM=triton.next_power_of_2(experts),
        )  # fmt: skip
        handle = mod._fwd_kernel_ep_scatter_2[copy_grid](
            tokens, expert_start_loc,
            recv_x, recv_x.stride(0), recv_x.stride(1),
            recv_x_scale, recv_x_scale.stride(0), recv_x_scale.stride(1),
            recv_topk, recv_topk.stride(0), recv_topk.stride(1),
            output_tensor, output_tensor.stride(0), output_tensor.stride(1),
            output_scale, output_scale.stride(0), output_scale.stride(1),
            output_index, output_index.stride(0), output_index.stride(1),
            topk_num=topk, num_warps=copy_warps, HIDDEN_SIZE=hidden,
            HIDDEN_SIZE_PAD=triton.next_power_of_2(hidden), SCALE_HIDDEN_SIZE=scale_cols,
            SCALE_HIDDEN_SIZE_PAD=triton.next_power_of_2(scale_cols),
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=2, kernel_names=KERNEL_NAMES, block_e=block_e,
            fill_warps=fill_warps, copy_programs=programs, copy_warps=copy_warps,
            programs=experts + programs,
        )  # fmt: skip
        return output_tensor, output_scale, m_indices, output_index, expert_start_loc

    return launch
