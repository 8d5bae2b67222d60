"""vLLM's fused QK RMSNorm + partial RoPE + gate copy with vLLM's own launch: a whole head
per program (HEAD_BLOCK and ROT_HALF_BLOCK the next powers of two of head_dim and
rotary_dim / 2), max(1, HEAD_BLOCK / 64) warps and 2 stages, as `fused_qk_rmsnorm_rope_gate`
passes them (no autotuner, heuristic or tuned table); the three outputs made outside the
timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_qk_norm_rope_gate.launcher import Outputs, QkNormRopeGateConfig
from foreign.vllm_qk_norm_rope_gate.launcher import prepare as _prepare

CONFIG = QkNormRopeGateConfig(head_block=None, rot_half_block=None, num_warps=None, num_stages=None)


def prepare(
    q_gate: torch.Tensor, k: torch.Tensor, q_weight: torch.Tensor, k_weight: torch.Tensor,
    cos_sin_cache: torch.Tensor, positions: torch.Tensor, q_heads: int, kv_heads: int,
    head_dim: int, rotary_dim: int, mrope_section: tuple[int, int, int] | None,
) -> Callable[[], Outputs]:  # fmt: skip
    """The three outputs, outside the timed call."""
    return _prepare(
        CONFIG, q_gate, k, q_weight, k_weight, cos_sin_cache, positions, q_heads, kv_heads,
        head_dim, rotary_dim, mrope_section,
    )  # fmt: skip


def qk_norm_rope_gate(
    q_gate: torch.Tensor, k: torch.Tensor, q_weight: torch.Tensor, k_weight: torch.Tensor,
    cos_sin_cache: torch.Tensor, positions: torch.Tensor, q_heads: int, kv_heads: int,
    head_dim: int, rotary_dim: int, mrope_section: tuple[int, int, int] | None,
) -> Outputs:  # fmt: skip
    return prepare(
        q_gate, k, q_weight, k_weight, cos_sin_cache, positions, q_heads, kv_heads, head_dim,
        rotary_dim, mrope_section,
    )()  # fmt: skip
