"""SGLang's gated delta rule verify kernel with SGLang's own launch
(fused_recurrent_gated_delta_rule_update_fwd's): one K block, 8 state columns per program,
1 warp, 3 stages, q and k L2-normalised in the kernel, every draft step's state stored to
the intermediate-state cache; the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_gdn_verify.launcher import GdnVerifyConfig
from foreign.sglang_gdn_verify.launcher import prepare as _prepare

CONFIG = GdnVerifyConfig(block_v=None, num_warps=None, num_stages=None)


def prepare(*inputs: torch.Tensor) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The output buffer, outside the timed call."""
    return _prepare(CONFIG, *inputs)


def gdn_verify(*inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(*inputs)()
