"""vLLM's logit-bias processor (vllm/v1/worker/gpu/sample/logit_bias.py, v0.34.0:
`_bias_kernel`), launched as vLLM's `apply_logit_bias` launches it from the v1 GPU worker's
sampler (in place on the fp32 logits), so that its launch choices are knobs.

When any request of a step has allowed token ids, a logit_bias or an unreached min_tokens
with stop ids, every logits row of the step goes through it: one program per row reads its
request's three counts; an allowed list is gathered in one BLOCK_SIZE tile (its logits
saved), the whole row is filled with -inf in LOGITS_BLOCK_SIZE steps and the saved logits
scattered back; a bias list is gathered, added and scattered in one tile; the stop ids are
scattered as -inf.  Sparse gathers and scatters into a 0.5 MB row, plus a full-row store
for the whitelisting rows.

vLLM's launch: BLOCK_SIZE the next power of two of the widest of its three tables (1024),
LOGITS_BLOCK_SIZE 8192, Triton's default 4 warps and 3 stages, CHECK_ALL_MASKED_ROWS off
(no request with structured outputs).  Knobs: both tiles (the list tile at least the
longest list in use), the warps and the stages, None keeping vLLM's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_LOGITS_BLOCK = 8192  # LOGITS_BLOCK_SIZE in apply_logit_bias
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class LogitBiasConfig:
    block_size: int | None = None  # None: vLLM's next power of two of the tables' width
    logits_block_size: int | None = None  # None: vLLM's 8192
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: LogitBiasConfig, logits: torch.Tensor, mapping: torch.Tensor, pos: torch.Tensor,
    n_allowed: torch.Tensor, allowed_ids: torch.Tensor, n_bias: torch.Tensor,
    bias_ids: torch.Tensor, bias: torch.Tensor, min_lens: torch.Tensor, n_stop: torch.Tensor,
    restore: torch.Tensor, stop_ids: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_logit_bias")
    if logits.dtype != torch.float32 or logits.stride(1) != 1:
        raise ValueError("logits must be fp32 with unit column stride (vLLM's sampler copy)")
    rows, vocab = logits.shape
    widest = max(allowed_ids.shape[-1], bias_ids.shape[-1], stop_ids.shape[-1])
    block = cfg.block_size or 1 << (widest - 1).bit_length()
    longest = int(max(n_allowed.max(), n_bias.max(), n_stop.max()))
    if block < longest:
        raise ValueError(f"list tile {block} is below the longest list in use ({longest})")
    lblock = cfg.logits_block_size or VLLM_LOGITS_BLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    grid = (rows,)

    def launch() -> torch.Tensor:
        handle = mod._bias_kernel[grid](
            logits, logits.stride(0), vocab, mapping, n_allowed, allowed_ids,
            allowed_ids.stride(0), n_bias, bias_ids, bias_ids.stride(0), bias, bias.stride(0),
            pos, min_lens, n_stop, restore, stop_ids, stop_ids.stride(0),
            BLOCK_SIZE=block, LOGITS_BLOCK_SIZE=lblock, CHECK_ALL_MASKED_ROWS=False,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_bias_kernel"], block_size=block,
            logits_block_size=lblock, num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return logits

    return launch
