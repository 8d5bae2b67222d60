"""Liger-Kernel's GRPO loss forward (liger_kernel.ops.grpo_loss, 0.8.5), launched by our copy
of `GrpoLossFunction.forward` (token-level importance sampling) so that its launch choices
are knobs.

A (completions, completion length) grid, one program per generated token: skipped at once
where the completion mask is 0; else it streams the token's logits row in BLOCK_N-column
steps with an online log-sum-exp (logits / temperature, in fp32), takes the log-probability
of the sampled token, and from it, the old policy's and the reference model's
log-probabilities and the completion's advantage writes the clipped policy-gradient loss
plus beta * KL, the KL, the log-sum-exp (kept for the backward) and whether the ratio was
clipped, all fp32.  Liger's choices: BLOCK_N 2048, one warp, two stages, and its wrapper's
defaults: temperature 0.9, beta 0.04, eps_low 0.2, eps_high 0.4, the DAPO/GRPO clipped loss,
no reduction.  Knobs: `block_n` (columns per step), `num_warps` and `num_stages`, None
keeping Liger's.

Liger allocates the four [completions, length] outputs on every call (zeros: masked tokens
stay 0) and, with reduce=False, multiplies three of them by the mask with torch; here the
buffers are allocated in `prepare`, and the masking, which changes nothing the kernel left
non-zero, is left out: the timed call is the one launch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
LIGER_LAUNCH = {"block_n": 2048, "num_warps": 1, "num_stages": 2}  # liger's kwargs (token level)
# triton_grpo_loss's defaults (liger_kernel.transformers.grpo_loss)
TEMPERATURE, BETA, EPS_LOW, EPS_HIGH = 0.9, 0.04, 0.2, 0.4
LOSS_TYPE = "dapo"


@dataclass(frozen=True)
class LigerGrpoLossConfig:
    block_n: int | None = None  # None: liger's 2048
    num_warps: int | None = None  # None: liger's 1
    num_stages: int | None = None  # None: liger's 2


def prepare(
    cfg: LigerGrpoLossConfig,
    logits: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor,
    ids: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import grpo_loss as liger

    for name, t in (("logits", logits), ("old_logp", old_logp), ("ref_logp", ref_logp),
                    ("ids", ids), ("mask", mask)):  # fmt: skip
        if not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous (liger asserts it)")
    b, l_add_1, vocab = logits.shape
    length = l_add_1 - 1
    if ids.shape != (b, length) or mask.shape != (b, length) or advantages.shape != (b,):
        raise ValueError("logits [b, l+1, vocab], ids and mask [b, l], advantages [b]")
    block = cfg.block_n or LIGER_LAUNCH["block_n"]
    warps = cfg.num_warps or LIGER_LAUNCH["num_warps"]
    stages = cfg.num_stages or LIGER_LAUNCH["num_stages"]
    loss = torch.zeros(b, length, device=logits.device, dtype=torch.float32)
    lse, is_clipped, kl = (torch.zeros_like(loss) for _ in range(3))
    loss_type = liger._str_to_loss_type[LOSS_TYPE]

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        handle = liger._grpo_loss_fwd_kernel[(b, length)](
            logits, old_logp, ref_logp, ids, mask, advantages, None, length, None, loss, lse,
            kl, is_clipped, TEMPERATURE, BETA, EPS_LOW, EPS_HIGH, loss_type, 1.0, 1.05, 0.0,
            False, length, vocab, BLOCK_N=block, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_grpo_loss_fwd_kernel"],
            block_n=block, num_warps=warps, num_stages=stages, programs=b * length,
        )  # fmt: skip
        return loss, kl, lse

    return launch
