"""SGLang's NSA indexer activation quantization with SGLang's own launch (`act_quant`'s, no
heuristic, autotuner or tuned table): 32 rows of one 128-column group per program, the
group's power-of-two (UE8M0) scale, no stages (round_scale) and Triton's default 4 warps,
for the query and then the key; the e4m3 outputs and the scales made outside the timed
call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_nsa_act_quant.launcher import NsaActQuantConfig, Outputs
from foreign.sglang_nsa_act_quant.launcher import prepare as _prepare

CONFIG = NsaActQuantConfig(q_block_m=None, q_warps=None, k_block_m=None, k_warps=None)


def prepare(query: torch.Tensor, key: torch.Tensor) -> Callable[[], Outputs]:
    """The e4m3 query and key and their scales, outside the timed call."""
    return _prepare(CONFIG, query, key)


def indexer_act_quant(query: torch.Tensor, key: torch.Tensor) -> Outputs:
    return prepare(query, key)()
