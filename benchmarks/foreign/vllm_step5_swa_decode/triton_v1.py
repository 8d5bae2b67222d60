"""Step5's sliding-window GQA decode with vLLM's own launch: PACK and SPLITS from
`swa_decode_plan` (the device's SM count), 64 keys per step, 4 warps and Triton's default
stages for the split launch, 4 warps for the combine (literals in `swa_decode_gated`; no
heuristic, autotuner or tuned table), PDL off; the split buffers and the output made outside
the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_step5_swa_decode.launcher import SwaDecodeConfig
from foreign.vllm_step5_swa_decode.launcher import prepare as _prepare

CONFIG = SwaDecodeConfig(
    block_n=None, splits=None, pack=None, num_warps=None, num_stages=None, merge_warps=None
)


def prepare(
    q: torch.Tensor, kv: torch.Tensor, block_table: torch.Tensor, seq_lens: torch.Tensor,
    gate: torch.Tensor, scale: float, window: int, q_len: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    """The split buffers, the output and the grids, outside the timed call."""
    return _prepare(CONFIG, q, kv, block_table, seq_lens, gate, scale, window, q_len)


def swa_decode(
    q: torch.Tensor, kv: torch.Tensor, block_table: torch.Tensor, seq_lens: torch.Tensor,
    gate: torch.Tensor, scale: float, window: int, q_len: int,
) -> torch.Tensor:  # fmt: skip
    return prepare(q, kv, block_table, seq_lens, gate, scale, window, q_len)()
