"""SGLang's KDA WY recompute with SGLang's launch: one program per (64-token chunk, head),
64-wide tl.dot tiles over the value and key dimensions (recompute_w_u_fwd's), the first
configuration of the kernel's autotune list (2 warps, 2 stages); varlen chunk indices and
the outputs made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_kda_wy.launcher import KdaWyConfig
from foreign.sglang_kda_wy.launcher import prepare as _prepare

CONFIG = KdaWyConfig(block_k=None, block_v=None, num_warps=None, num_stages=None)


def prepare(
    k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor, g: torch.Tensor, A: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The (sequence, chunk) index pairs and the outputs w, u and kg, outside the timed
    call."""
    return _prepare(CONFIG, k, v, beta, g, A, cu_seqlens, chunk)


def kda_recompute_w_u(
    k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor, g: torch.Tensor, A: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(k, v, beta, g, A, cu_seqlens, chunk)()
