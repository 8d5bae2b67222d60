"""FlagGems' DSA lightning indexer logits, with FlagGems' launch: 1 query token and a
2048-key tile per program, 64 keys per tl.dot step, and the first of its two autotune
configurations (4 warps, 2 stages)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_dsa_indexer.launcher import DsaIndexerConfig
from foreign.flaggems_dsa_indexer.launcher import prepare as _prepare

CONFIG = DsaIndexerConfig(bq=None, bk=None, tk=None, num_warps=None, num_stages=None)


def prepare(
    q: torch.Tensor,
    kv: torch.Tensor,
    weights: torch.Tensor,
    cu_seqlen_ks: torch.Tensor,
    cu_seqlen_ke: torch.Tensor,
) -> Callable[[], torch.Tensor]:
    """The -inf logits buffer, outside the timed call."""
    return _prepare(CONFIG, q, kv, weights, cu_seqlen_ks, cu_seqlen_ke)


def dsa_indexer(
    q: torch.Tensor,
    kv: torch.Tensor,
    weights: torch.Tensor,
    cu_seqlen_ks: torch.Tensor,
    cu_seqlen_ke: torch.Tensor,
) -> torch.Tensor:
    return prepare(q, kv, weights, cu_seqlen_ks, cu_seqlen_ke)()
