"""FlagGems' paged MQA logits schedule with FlagGems' own configuration: a tile of the next
power of two of the batch (at least 16), Triton's default 4 warps and 3 stages (FlagGems
passes none; no autotune); the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_paged_mqa_metadata.launcher import PagedMqaMetadataConfig
from foreign.flaggems_paged_mqa_metadata.launcher import prepare as _prepare

# get_paged_mqa_logits_metadata: BLOCK_SIZE = triton.next_power_of_2(max(16, batch_size)),
# no num_warps or num_stages passed (Triton's 4 and 3).
CONFIG = PagedMqaMetadataConfig(block_size=None, num_warps=None)


def prepare(context_lens: torch.Tensor, num_sms: int) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, context_lens, num_sms)


def paged_mqa_metadata(context_lens: torch.Tensor, num_sms: int) -> torch.Tensor:
    return prepare(context_lens, num_sms)()
