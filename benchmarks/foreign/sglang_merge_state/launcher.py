"""SGLang's attention-state merge (python/sglang/srt/layers/attention/triton_ops/merge_state.py,
v0.5.9), launched by our copy of SGLang's `merge_state_triton` so that its launch choice is a
knob.

Attention over a prefix (a shared or cached part of the KV) and over a suffix (the rest),
computed separately, each gives a partial output and its log-sum-exp per (token, head);
`merge_state_kernel` combines them: one program per (token, head) loads both LSEs, weights
both head_size-long rows by exp(lse - max) / sum and writes the merged row and LSE (an LSE
of +inf marks an empty part).  SGLang's choices: PADDED_HEAD_SIZE = next_pow2(head_size),
the LSE written, num_warps left to Triton (4).  Knob: `num_warps`, None keeping SGLang's.

SGLang allocates the merged output and LSE per call when none are passed; here they are
allocated in `prepare`, outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
TRITON_DEFAULT_WARPS = 4  # SGLang passes no num_warps: Triton's default


@dataclass(frozen=True)
class MergeStateConfig:
    num_warps: int | None = None  # None: SGLang's (Triton's default, 4)


def prepare(
    cfg: MergeStateConfig,
    prefix_out: torch.Tensor,
    prefix_lse: torch.Tensor,
    suffix_out: torch.Tensor,
    suffix_lse: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("sglang_merge_state")
    if prefix_out.dim() != 3 or prefix_out.shape != suffix_out.shape:
        raise ValueError("both partial outputs must be [tokens, heads, head_size]")
    if prefix_lse.shape != prefix_out.shape[:2] or suffix_lse.shape != prefix_lse.shape:
        raise ValueError("both LSEs must be [tokens, heads]")
    tensors = (prefix_out, prefix_lse, suffix_out, suffix_lse)
    if not all(t.is_contiguous() for t in tensors):
        raise ValueError("the kernel indexes its inputs as contiguous")
    tokens, heads, head_size = prefix_out.shape
    padded = triton.next_power_of_2(head_size)
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    out = torch.empty_like(prefix_out)
    out_lse = torch.empty_like(prefix_lse)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod.merge_state_kernel[(tokens, heads)](
            out, out_lse, prefix_out, prefix_lse, suffix_out, suffix_lse,
            head_size, padded, True, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["merge_state_kernel"],
            padded_head_size=padded, num_warps=warps, programs=tokens * heads,
        )  # fmt: skip
        return out, out_lse

    return launch
