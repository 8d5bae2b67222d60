"""SGLang's DeepEP-normal MoE gather (python/sglang/srt/layers/moe/ep_moe/kernels.py, v0.5.9:
`_fwd_kernel_ep_gather`), launched as SGLang's `ep_gather` launches it from the DeepGEMM MoE
runner's post-processing (DeepEP normal mode), so that its launch choices are knobs.

A 2-D grid: one program column per BLOCK_D hidden columns (no mask: BLOCK_D must divide the
hidden size) and up to 1024 token programs; each token program walks the tokens in a
grid-stride loop (token, token + programs, ...), and for each token its top-k slots in order:
a slot routed to a local expert (id >= 0) loads its row index and weight and gathers
BLOCK_D elements of that row of the expert-contiguous down output into an fp32 accumulator;
then one store per token.  The work is data-dependent (only local slots gather) and the
gathered rows are scattered over the whole down output.

SGLang's launch: BLOCK_D 1024 when the hidden size is a multiple of 1024, else 128 (the
quantization block), min(tokens, 1024) token programs, 2 warps, Triton's default 3 stages.
Knobs: block_d (dividing the hidden size), token_programs, num_warps and num_stages, None
keeping SGLang's.  SGLang allocates the output per call; here it is made in `prepare`.
Under the CPU interpreter only, the loop counters' `.to(tl.int64)` are read as the counters
(the interpreter's `range` yields Python ints, which have no `.to` and do not overflow).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_WARPS = 2
SGLANG_MAX_TOKEN_PROGRAMS = 1024
TRITON_DEFAULT_STAGES = 3


LOOP_COUNTERS = ("cur_token_int32", "topk_index_int32")


def _kernel_module() -> Any:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return _common.load_source_rewritten(
            "sglang_ep_gather", _common.CastsOfNamesAsIs(LOOP_COUNTERS)
        )
    return _common.load_source("sglang_ep_gather")


@dataclass(frozen=True)
class EpGatherConfig:
    block_d: int | None = None  # None: 1024 if hidden % 1024 == 0 else 128
    token_programs: int | None = None  # None: min(tokens, 1024)
    num_warps: int | None = None  # None: SGLang's 2
    num_stages: int | None = None  # None: Triton's default 3 (SGLang passes none)


def prepare(
    cfg: EpGatherConfig, input_tensor: torch.Tensor, recv_topk_ids: torch.Tensor,
    recv_topk_weight: torch.Tensor, input_index: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _kernel_module()
    tokens, topk = recv_topk_ids.shape
    hidden = input_tensor.shape[1]
    block_d = cfg.block_d or (128 if hidden % 1024 != 0 else 1024)
    if hidden % block_d != 0:
        raise ValueError(f"block_d {block_d} does not divide the hidden size {hidden}")
    programs = cfg.token_programs or min(tokens, SGLANG_MAX_TOKEN_PROGRAMS)
    programs = min(programs, tokens)
    warps = cfg.num_warps or SGLANG_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    out = torch.empty((tokens, hidden), dtype=input_tensor.dtype, device=input_tensor.device)
    grid = (hidden // block_d, programs)

    def launch() -> torch.Tensor:
        handle = mod._fwd_kernel_ep_gather[grid](
            tokens,
            input_tensor, input_tensor.stride(0), input_tensor.stride(1),
            recv_topk_ids, recv_topk_ids.stride(0), recv_topk_ids.stride(1),
            recv_topk_weight, recv_topk_weight.stride(0), recv_topk_weight.stride(1),
            input_index, input_index.stride(0), input_index.stride(1),
            out, out.stride(0), out.stride(1),
            topk_num=topk, BLOCK_D=block_d, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fwd_kernel_ep_gather"],
            block_d=block_d, token_programs=programs, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
