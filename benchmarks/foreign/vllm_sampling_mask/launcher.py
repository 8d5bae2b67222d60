"""vLLM's sampling-mask compaction (vllm/v1/worker/gpu/sample/output.py, v0.34.0:
`_compact_sampling_mask_kernel`), launched as vLLM's `SamplingMaskTensors.from_logits`
launches it, so that its launch choices are knobs.

One program per output row (request x ROWS_PER_REQUEST slot; ordinary sampling has one).
A slot past the request's sampled tokens stores a zero count and nothing else.  Otherwise
the program walks its processed fp32 logits row BLOCK_SIZE columns at a time: the finite
logits are the sampling support (top-k / top-p left -inf elsewhere); a tl.cumsum of the
keep flags plus the carried count gives each kept column its place, the first
`max_num_kept` column ids are stored there (int32), the keep flags are packed eight to a
byte (a [BLOCK / 8, 8] shift and sum) and stored as the row's bitmask, and the full count
is stored at the end.

vLLM's launch: BLOCK_SIZE 8192 (fixed in from_logits), Triton's default 4 warps and 3
stages (vLLM passes none).  Knobs: the block, the warps and the stages, None keeping
vLLM's; the launcher refuses more than 64 columns per thread (vLLM's own 8192 over 4 warps
is 64 and holds 251 registers on sm_90; 32768 over 4 warps took 156 s to compile with a
6.3 KB stack).  The three outputs (allocated by from_logits on every call with torch.empty) are
made once in `prepare`, the ids and the bitmask zero-filled: the kernel writes only the
first min(count, max_num_kept) ids of a row and nothing but the count of a row that samples
nothing, so the check compares the rest as zeros.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK = 8192
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3
MAX_COMPACT_SUPPORT = 2048  # vLLM's bound on the id rows' width
MAX_PER_THREAD = 64  # columns per thread the launcher accepts (vLLM's launch: 64)


@dataclass(frozen=True)
class MaskConfig:
    block_size: int | None = None  # None: vLLM's 8192 columns per step
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3 (vLLM passes none)


def prepare(
    cfg: MaskConfig, logits: torch.Tensor, cu_num_logits: torch.Tensor,
    num_sampled: torch.Tensor, max_num_kept: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("vllm_sampling_mask")
    block = cfg.block_size or VLLM_BLOCK
    if block % 8 or block & (block - 1):
        raise ValueError(f"block_size {block} must be a power of two of at least 8 (bytes)")
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    if block > MAX_PER_THREAD * 32 * warps:
        raise ValueError(
            f"block_size {block} over {warps} warps is more than {MAX_PER_THREAD} columns "
            "per thread (vLLM's 8192 over 4 warps is 64): the cumsum spills to the stack "
            "and takes minutes to compile for sm_90"
        )
    reqs = num_sampled.shape[0]
    vocab = logits.shape[1]
    kept = min(max_num_kept, vocab, MAX_COMPACT_SUPPORT)
    rows = reqs  # ROWS_PER_REQUEST = 1: ordinary sampling
    dev = logits.device
    token_ids = torch.zeros((rows, kept), dtype=torch.int32, device=dev)
    packed = torch.zeros((rows, (vocab + 7) // 8), dtype=torch.uint8, device=dev)
    counts = torch.empty(rows, dtype=torch.int32, device=dev)
    grid = (rows,)

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        handle = mod._compact_sampling_mask_kernel[grid](
            logits, logits.stride(0), logits.stride(1), cu_num_logits, num_sampled,
            token_ids, token_ids.stride(0), packed, packed.stride(0), counts, vocab, kept,
            ROWS_PER_REQUEST=1, BLOCK_SIZE=block, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_compact_sampling_mask_kernel"],
            block_size=block, num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return token_ids, packed, counts

    return launch
