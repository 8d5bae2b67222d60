"""vLLM's Gumbel-max sampling (vllm/v1/worker/gpu/sample/gumbel.py, v0.34.0:
`_gumbel_sample_kernel` and `_gumbel_combine_kernel`), launched as vLLM's `gumbel_sample`
launches them from the v1 GPU worker's sampler (fp32 logits already divided by the
temperature, so APPLY_TEMPERATURE off; no draft logits cache, no bias, fp32 noise) so that
their launch choices are knobs.

Every decoding step of every sampled request ends here: one program per (token, BLOCK_SIZE
columns of the vocabulary) loads its logits, hashes (seed, position, column) with
MurmurHash3 into a uniform u per column, adds the Gumbel noise -log(-log(u)) (skipped for a
greedy request, temperature 0) and keeps its block's maximum and its column; a second
launch, one program per token, picks the first block holding the row's maximum.  The
argmax of logits plus Gumbel noise is a draw from the softmax, without a softmax, a sort or
a cumulative sum.

vLLM's launch: 1024-column blocks with Triton's default 4 warps and 3 stages, the combine
with the blocks padded to a power of two and Triton's default 4 warps.  Knobs: the block,
the warps and stages of the sampling launch, the combine's warps, None keeping vLLM's.
vLLM allocates the per-block maxima, their columns and the output per call; here they are
allocated once in `prepare` (every program writes its own slots).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK = 1024
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class GumbelSampleConfig:
    block_size: int | None = None  # None: vLLM's 1024
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3
    combine_warps: int | None = None  # None: Triton's default 4


def prepare(
    cfg: GumbelSampleConfig, logits: torch.Tensor, idx_mapping: torch.Tensor,
    temperature: torch.Tensor, seeds: torch.Tensor, pos: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_gumbel_sample")
    tokens, vocab = logits.shape
    if logits.stride(1) != 1 or idx_mapping.shape != (tokens,) or pos.shape != (tokens,):
        raise ValueError("logits [tokens, vocab] row-major, one slot and position per token")
    block = cfg.block_size or VLLM_BLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    combine_warps = cfg.combine_warps or TRITON_DEFAULT_WARPS
    blocks = triton.cdiv(vocab, block)
    local_argmax = torch.empty(tokens, blocks, dtype=torch.int64, device=logits.device)
    local_max = torch.empty(tokens, blocks, dtype=torch.float32, device=logits.device)
    sampled = torch.empty(tokens, dtype=torch.int64, device=logits.device)
    idx_mapping = idx_mapping.contiguous()
    pos = pos.contiguous()

    def launch() -> torch.Tensor:
        handle = mod._gumbel_sample_kernel[(tokens, blocks)](
            local_argmax, local_argmax.stride(0), local_max, local_max.stride(0),
            None, 0, 0, None, None, 0, None,
            logits, logits.stride(0), None, 0,
            idx_mapping, seeds, pos, temperature, vocab,
            BLOCK_SIZE=block, IS_DRAFTING=False, APPLY_TEMPERATURE=False, USE_FP64=False,
            PER_TOKEN_COL=False, HAS_BIAS=False, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        mod._gumbel_combine_kernel[(tokens,)](
            local_argmax, local_argmax.stride(0), local_max, local_max.stride(0), sampled,
            blocks, PADDED_NUM_BLOCKS=triton.next_power_of_2(blocks),
            num_warps=combine_warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=2,
            kernel_names=["_gumbel_sample_kernel", "_gumbel_combine_kernel"],
            block_size=block, num_warps=warps, num_stages=stages,
            combine_warps=combine_warps, programs=tokens * blocks + tokens,
        )  # fmt: skip
        return sampled

    return launch
