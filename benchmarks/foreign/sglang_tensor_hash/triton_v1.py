"""SGLang's multimodal tensor hash with SGLang's own launch: `gpu_tensor_hash`'s defaults,
8192-word tiles in 256-word steps, 4 warps, 4 stages, .cg loads (no heuristic, autotuner or
tuned table); the tree sum at its default 1024 values per program."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_tensor_hash.launcher import TensorHashConfig
from foreign.sglang_tensor_hash.launcher import prepare as _prepare

CONFIG = TensorHashConfig(block_words=None, num_warps=None, num_stages=None, use_cg=None)


def prepare(pixels: torch.Tensor, seed: int) -> Callable[[], torch.Tensor]:
    """The per-tile and tree buffers, outside the timed call."""
    return _prepare(CONFIG, pixels, seed)


def tensor_hash(pixels: torch.Tensor, seed: int) -> torch.Tensor:
    return prepare(pixels, seed)()
