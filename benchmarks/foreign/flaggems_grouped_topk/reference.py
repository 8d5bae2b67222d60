"""FlagGems' group-limited top-k routing (`flag_gems.fused.grouped_topk`, DeepSeek-V3's
router selection): inputs, reference, torch baseline.

scores is the router's sigmoid scores [tokens, experts] in the spec's dtype (DeepSeek-V3's
`scoring_func="sigmoid"`, applied by the caller before the kernels), bias the gate's
`e_score_correction_bias` [experts] in the same dtype (FlagGems casts it to the scores'
dtype).  The experts form `groups` equal groups; a group's score is the sum of its two best
biased scores, the `topk_group` best groups are kept, and each token's `topk` best biased
scores among the kept groups' experts are chosen.  The outputs are their unbiased scores,
renormalised to sum to 1 and scaled by the routed scaling factor (fp32), and their expert
ids (int32), [tokens, topk] each, best first; ties go to the lower group or expert index."""

from __future__ import annotations

import torch

ROUTED_SCALING_FACTOR = 2.5  # DeepSeek-V3's routed_scaling_factor
RENORMALIZE = True  # DeepSeek-V3's norm_topk_prob


def make_inputs(
    tokens: int, experts: int, groups: int, topk_group: int, topk: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int, int, int]:  # fmt: skip
    """Sigmoid scores of normal logits and a correction bias of about +-0.02 (DeepSeek-V3's
    trained biases are of that order), every eighth token's logits shifted by +3 on one
    group so that group choices differ between tokens."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    logits = torch.randn(tokens, experts, generator=gen)
    per = experts // groups
    for t in range(0, tokens, 8):
        g = (t // 8) % groups
        logits[t, g * per : (g + 1) * per] += 3.0
    scores = torch.sigmoid(logits)
    bias = torch.randn(experts, generator=gen) * 0.02
    return (
        scores.to(dtype=dtype, device=device), bias.to(dtype=dtype, device=device),
        groups, topk_group, topk,
    )  # fmt: skip


def _biased(scores: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    # the biased score is rounded to the scores' dtype, as the kernel adds them in it
    return (scores + bias.to(scores.dtype)).float()


def reference(
    scores: torch.Tensor, bias: torch.Tensor, groups: int, topk_group: int, topk: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """By stable sorts: each group's two best biased scores summed (rounded to the dtype,
    as the kernel stores them), the best groups, then the best experts of those."""
    tokens, experts = scores.shape
    biased = _biased(scores, bias)
    per_group = biased.view(tokens, groups, experts // groups)
    top2 = torch.sort(per_group, dim=-1, descending=True).values[..., :2].sum(-1)
    group_scores = top2.to(scores.dtype).float()
    order = torch.sort(group_scores, dim=-1, descending=True, stable=True).indices
    keep = torch.zeros(tokens, groups, dtype=torch.bool, device=scores.device)
    keep.scatter_(1, order[:, :topk_group], True)
    keep_expert = keep.repeat_interleave(experts // groups, dim=1)
    masked = biased.masked_fill(~keep_expert, float("-inf"))
    ids = torch.sort(masked, dim=-1, descending=True, stable=True).indices[:, :topk]
    vals = scores.float().gather(1, ids)
    if RENORMALIZE:
        vals = vals / (vals.sum(-1, keepdim=True) + 1e-20)
    return vals * ROUTED_SCALING_FACTOR, ids.to(torch.int32)


def torch_grouped_topk(
    scores: torch.Tensor, bias: torch.Tensor, groups: int, topk_group: int, topk: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The torch path that vLLM and SGLang use for DeepSeek-V3's biased grouped top-k
    (view by group, top-2 summed, the best groups, a masked fill, the best experts, gather,
    renormalise and scale), with stable descending sorts in place of torch.topk so that
    ties go to the lower index as in the kernel."""
    tokens, experts = scores.shape
    biased = scores + bias.to(scores.dtype)
    group_scores = biased.view(tokens, groups, -1).topk(2, dim=-1).values.sum(-1)
    order = torch.sort(group_scores, dim=-1, descending=True, stable=True).indices
    group_mask = torch.zeros_like(group_scores).scatter_(1, order[:, :topk_group], 1)
    score_mask = group_mask.unsqueeze(-1).expand(tokens, groups, experts // groups)
    tmp = biased.masked_fill(~score_mask.reshape(tokens, experts).bool(), float("-inf"))
    ids = torch.sort(tmp, dim=-1, descending=True, stable=True).indices[:, :topk]
    vals = scores.gather(1, ids).float()
    vals = vals / (vals.sum(-1, keepdim=True) + 1e-20)
    return vals * ROUTED_SCALING_FACTOR, ids.to(torch.int32)
