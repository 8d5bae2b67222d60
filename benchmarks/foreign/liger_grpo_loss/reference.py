"""The GRPO (DAPO-style clipped) policy-gradient loss per generated token, with a KL penalty
to a reference model, for Liger's kernel: inputs, fp32 reference, torch baseline.

Inputs as a GRPO trainer holds them: the policy's logits over the completions [b, l+1,
vocab] (model dtype; the last position is not used), the old policy's and the reference
model's log-probabilities of the sampled tokens [b, l] (fp32), the sampled token ids [b, l]
(int64), one advantage per completion [b] (fp32) and the completion mask [b, l] (int32, 0
after each completion's end).  Outputs, fp32, 0 where the mask is 0: the per-token loss
(clipped ratio times advantage, plus beta * KL), the KL, and the log-sum-exp of the scaled
logits."""

from __future__ import annotations

import torch

TEMPERATURE, BETA, EPS_LOW, EPS_HIGH = 0.9, 0.04, 0.2, 0.4  # triton_grpo_loss's defaults


def make_inputs(
    b: int,
    length: int,
    vocab: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
    ragged: bool = False,
) -> tuple[torch.Tensor, ...]:
    """Logits from 2 * randn, tokens sampled uniformly, old and reference log-probabilities
    within ~0.3 of the policy's (so some ratios clip), advantages from randn.  Every
    completion runs to the full length (so every program reads its row, as the floor
    counts), or with ragged=True ends at a random length from l/2 on.  Drawn on the target
    device: the logits are 1-2 GB, which the CPU would take seconds to fill and reduce."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    logits = torch.randn(b, length + 1, vocab, generator=gen, device=device, dtype=dtype)
    logits.mul_(2.0)
    ids = torch.randint(0, vocab, (b, length), generator=gen, device=device)
    logp = _logp(logits, ids)
    noise = torch.randn(2, b, length, generator=gen, device=device)
    old_logp, ref_logp = logp + 0.3 * noise[0], logp + 0.3 * noise[1]
    advantages = torch.randn(b, generator=gen, device=device)
    ends = torch.randint(length // 2, length + 1, (b, 1), generator=gen, device=device)
    if not ragged:
        ends.fill_(length)
    mask = (torch.arange(length, device=device)[None, :] < ends).to(torch.int32)
    return logits, old_logp, ref_logp, ids, advantages, mask


def make_check_inputs(
    b: int, length: int, vocab: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, ...]:
    """As make_inputs with ragged completions, so the check covers the masked tokens too."""
    return make_inputs(b, length, vocab, dtype=dtype, device=device, seed=seed, ragged=True)


def _logp(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """log-softmax(logits / temperature) at the sampled tokens, fp32."""
    x = logits[:, :-1].float() / TEMPERATURE
    lse = torch.logsumexp(x, dim=-1)
    return x.gather(-1, ids[..., None])[..., 0] - lse


def reference(
    logits: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor,
    ids: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x = logits[:, :-1].float() / TEMPERATURE
    lse = torch.logsumexp(x, dim=-1)
    logp = x.gather(-1, ids[..., None])[..., 0] - lse
    coef_1 = torch.exp(logp - old_logp)
    coef_2 = coef_1.clamp(1 - EPS_LOW, 1 + EPS_HIGH)
    adv = advantages[:, None]
    loss = -torch.minimum(coef_1 * adv, coef_2 * adv)
    kl = torch.exp(ref_logp - logp) - (ref_logp - logp) - 1
    keep = mask != 0
    zero = torch.zeros_like(loss)
    return (
        torch.where(keep, loss + BETA * kl, zero),
        torch.where(keep, kl, zero),
        torch.where(keep, lse, zero),
    )


def torch_grpo_loss(
    logits: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor,
    ids: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """TRL's per-token loss in plain torch (selective log-softmax by logsumexp over the
    logits upcast to fp32, then element-wise kernels), as a trainer without Liger runs it."""
    return reference(logits, old_logp, ref_logp, ids, advantages, mask)
