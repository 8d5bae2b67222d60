"""FlagGems' multinomial sampling with replacement with FlagGems' own launch: the kernel's
default 128 samples per program and Triton's default 4 warps and 3 stages (FlagGems passes
no launch options); the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.flaggems_multinomial.launcher import MultinomialConfig
from foreign.flaggems_multinomial.launcher import prepare as _prepare

# multinomial()'s launch passes only the arguments: NBLOCK's default 128, Triton's defaults
CONFIG = MultinomialConfig(nblock=None, num_warps=None, num_stages=None)


def prepare(
    cdf: torch.Tensor, samples: int, philox_seed: int, philox_offset: int
) -> Callable[[], torch.Tensor]:
    """The output, outside the timed call."""
    return _prepare(CONFIG, cdf, samples, philox_seed, philox_offset)


def multinomial(
    cdf: torch.Tensor, samples: int, philox_seed: int, philox_offset: int
) -> torch.Tensor:
    return prepare(cdf, samples, philox_seed, philox_offset)()
