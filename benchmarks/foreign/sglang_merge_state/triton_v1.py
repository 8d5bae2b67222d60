"""SGLang's attention-state merge with SGLang's own launch: one program per (token, head),
the head padded to a power of two, Triton's default 4 warps."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_merge_state.launcher import MergeStateConfig
from foreign.sglang_merge_state.launcher import prepare as _prepare

CONFIG = MergeStateConfig(num_warps=None)


def prepare(
    prefix_out: torch.Tensor, prefix_lse: torch.Tensor, suffix_out: torch.Tensor,
    suffix_lse: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The merged output and LSE buffers, outside the timed call."""
    return _prepare(CONFIG, prefix_out, prefix_lse, suffix_out, suffix_lse)


def merge_state(
    prefix_out: torch.Tensor, prefix_lse: torch.Tensor, suffix_out: torch.Tensor,
    suffix_lse: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(prefix_out, prefix_lse, suffix_out, suffix_lse)()
