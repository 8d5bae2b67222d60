"""Liger-Kernel's cross-entropy forward (liger_kernel.ops.cross_entropy, 0.8.5), launched by
our copy of Liger's `cross_entropy_forward` so that its launch choices are knobs.

One program per token row, two passes over the vocabulary in BLOCK_SIZE-column steps: an
online softmax (running max and sum) gives the log-sum-exp, then the second pass writes
d(mean loss)/d(logits) over the logits in place (Liger's memory trick: no gradient buffer),
and the program writes its row's loss / n_non_ignore.  Liger's choices: BLOCK_SIZE =
min(32768, next_pow2(vocab)), num_warps 32 on Hopper (8 for 16-bit inputs on Blackwell),
mean reduction, no label smoothing, z-loss, weights or soft-capping.  Knobs: `block_size`
(columns per loop step) and `num_warps`, None keeping Liger's.

Liger's wrapper counts the non-ignored targets and checks their range on the host (two
synchronisations) on every call; that is set-up per batch and happens in `prepare`, with
the loss buffer.  The kernel overwrites the logits it was given with their gradient:
repeated calls on one input set therefore re-read gradients, which costs the same (no
value-dependent branch but the ignored rows, which stay ignored).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
IGNORE_INDEX = -100
MAX_FUSED_SIZE = 65536 // 2  # liger's cap on BLOCK_SIZE for CUDA


@dataclass(frozen=True)
class LigerCrossEntropyConfig:
    block_size: int | None = None  # None: liger's min(32768, next_pow2(vocab))
    num_warps: int | None = None  # None: liger's (32 on Hopper)


def _liger_warps(x: torch.Tensor) -> int:
    """Liger's num_warps for CUDA: 8 for 16-bit inputs on Blackwell, else 32."""
    if x.device.type != "cuda":
        return 32
    from liger_kernel.utils import infer_device_arch

    blackwell = str(infer_device_arch()).startswith("blackwell")
    return 8 if (x.element_size() == 2 and blackwell) else 32


def prepare(
    cfg: LigerCrossEntropyConfig, logits: torch.Tensor, target: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import cross_entropy as liger

    n_rows, vocab = logits.shape
    if logits.stride(-1) != 1 or target.stride(-1) != 1:
        raise ValueError("logits and target must be contiguous in their last dimension")
    block = cfg.block_size or min(MAX_FUSED_SIZE, triton.next_power_of_2(vocab))
    warps = cfg.num_warps or _liger_warps(logits)
    valid = target != IGNORE_INDEX
    n_non_ignore = int(valid.sum().item())
    masked = target * valid
    if int(masked.max().item()) >= vocab or int(masked.min().item()) < 0:
        raise ValueError(f"a target is out of [0, {vocab})")
    loss = torch.zeros(n_rows, dtype=logits.dtype, device=logits.device)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        with _common.interpreter_float_scalars():
            handle = liger.liger_cross_entropy_kernel[(n_rows,)](
                X_ptr=logits, X_stride=logits.stride(-2), Y_ptr=target,
                Y_stride=target.stride(-1), weight_ptr=None, loss_ptr=loss, z_loss_ptr=None,
                loss_stride=loss.stride(-1), token_accuracy_ptr=None, token_accuracy_stride=0,
                predicted_tokens_ptr=None, predicted_tokens_stride=0, n_cols=vocab,
                n_non_ignore=n_non_ignore, sum_non_ignore_weight=n_non_ignore, weight_sum=0.0,
                ignore_index=IGNORE_INDEX, lse_square_scale=0.0, label_smoothing=0.0,
                reduction="mean", softcap=None, RETURN_Z_LOSS=False,
                RETURN_TOKEN_ACCURACY=False, RETURN_PREDICTED_TOKENS=False,
                BLOCK_SIZE=block, HAS_WEIGHT=False, HAS_SOFTCAPPING=False, HAS_GRADIENTS=True,
                num_warps=warps,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["liger_cross_entropy_kernel"],
            block_size=block, num_warps=warps,
        )  # fmt: skip
        return loss, logits

    return launch
