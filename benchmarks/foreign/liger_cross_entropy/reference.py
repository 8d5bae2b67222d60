"""Cross-entropy forward with the logits' gradient (mean over non-ignored tokens) for
Liger's kernel: inputs, fp32 reference, torch baseline.  The outputs are the per-token
loss already divided by the number of non-ignored tokens (its sum is the mean loss) and
d(mean loss)/d(logits)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

IGNORE_INDEX = -100


def make_inputs(
    rows: int,
    vocab: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
    ignore_every: int = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """logits [rows, vocab] and targets [rows] (int64); with ignore_every=k, every k-th
    target is the ignore index (padding)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    logits = 2.0 * torch.randn(rows, vocab, generator=gen)
    target = torch.randint(0, vocab, (rows,), generator=gen)
    if ignore_every:
        target[ignore_every - 1 :: ignore_every] = IGNORE_INDEX
    return logits.to(dtype=dtype, device=device), target.to(device)


def make_check_inputs(
    rows: int, vocab: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """As make_inputs, with every 4th target ignored, so the check covers that path too."""
    return make_inputs(rows, vocab, dtype=dtype, device=device, seed=seed, ignore_every=4)


def reference(logits: torch.Tensor, target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    x = logits.float()
    valid = target != IGNORE_INDEX
    n = valid.sum().clamp_min(1)
    safe = torch.where(valid, target, 0)
    lse = torch.logsumexp(x, dim=-1)
    loss = torch.where(valid, lse - x.gather(1, safe[:, None])[:, 0], 0.0) / n
    grad = torch.softmax(x, dim=-1)
    grad[torch.arange(len(target), device=x.device), safe] -= 1.0
    grad = torch.where(valid[:, None], grad, 0.0) / n
    return loss.to(logits.dtype), grad.to(logits.dtype)


def torch_cross_entropy(
    logits: torch.Tensor, target: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """F.cross_entropy (mean) forward and backward in plain torch, as a training step does."""
    x = logits.detach().requires_grad_(True)
    n = (target != IGNORE_INDEX).sum().clamp_min(1)
    loss = F.cross_entropy(x, target, ignore_index=IGNORE_INDEX, reduction="none") / n
    loss.sum().backward()
    assert x.grad is not None
    return loss.detach(), x.grad
