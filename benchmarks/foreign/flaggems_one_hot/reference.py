"""FlagGems' one_hot (its `one_hot_kernel`) on an MoE router's top-k expert ids: inputs,
reference, torch baseline.

ids is [tokens, topk] int64 (torch.topk's indices: each token's chosen experts, distinct
within a token) whatever the spec's dtype; the output is [tokens, topk, experts] int64,
1 at each id's expert and 0 elsewhere, as transformers' MoE blocks build their expert
mask with F.one_hot(ids, num_classes=experts) before permuting it."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int,
    topk: int,
    experts: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, int]:
    """Each token routes to topk distinct experts drawn with a skewed popularity (a few hot
    experts, some rarely or never chosen); the class count comes with the ids, as the MoE
    block passes its expert count."""
    del dtype  # int64 ids and output whatever the dtype
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    popularity = torch.rand(experts, generator=gen) ** 3 + 0.05
    ids = torch.multinomial(popularity.expand(tokens, experts), topk, generator=gen)
    return ids.to(device), experts


def reference(ids: torch.Tensor, experts: int) -> torch.Tensor:
    """A zero tensor with a 1 scattered at each id (no comparison against every class)."""
    out = torch.zeros((*ids.shape, experts), dtype=torch.int64, device=ids.device)
    return out.scatter_(-1, ids.unsqueeze(-1), 1)


def torch_one_hot(ids: torch.Tensor, experts: int) -> torch.Tensor:
    """torch's F.one_hot with the class count given (what the MoE block calls)."""
    return torch.nn.functional.one_hot(ids, num_classes=experts)
