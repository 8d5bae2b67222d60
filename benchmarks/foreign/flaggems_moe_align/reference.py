"""FlagGems' MoE block alignment (`moe_align_block_size_triton`: its
`moe_align_block_size_stage1` to `_stage4`, the path it takes with stock Triton): inputs,
reference, torch baseline.

topk_ids is [tokens, topk] int32: every token's routed experts as global ids (a router's
top-k, as vLLM's `fused_topk` and `grouped_topk` hand it to the fused MoE); experts and
block_size are Python ints (block_size is the fused MoE GEMM's BLOCK_SIZE_M).  With numel =
tokens * topk and padded = numel + experts * (block_size - 1) (vLLM's and FlagGems'
max_num_tokens_padded, pad_sorted_ids off), the outputs are int32:

- sorted_ids [padded]: expert by expert, each expert's segment rounded up to a multiple of
  block_size, the flat indices (token * topk + slot) routed to it, then the segment's
  padding and every slot past the last segment holding numel (the fused MoE's "no row");
- expert_ids [cdiv(padded, block_size)]: the expert of each block_size block of sorted_ids,
  0 past the last segment (FlagGems zero-fills it);
- num_tokens_post_pad [1]: the padded total, the end of the last segment.

Inside a segment the kernel's order is the order its atomic adds hand out ranks: program by
program (one program per tokens_per_thread = next_power_of_2(cdiv(numel, experts)) flat
ids) in flat order, and within a program in whatever order the lanes' atomics land.  The
reference takes flat order throughout; `make_check_inputs` routes no expert twice among one
program's ids, so that the kernel's order is the flat order too (see there)."""

from __future__ import annotations

import numpy as np
import torch


def padded_sizes(numel: int, experts: int, block_size: int) -> tuple[int, int]:
    """(sorted_ids' length, expert_ids' length) as vLLM's and FlagGems'
    `moe_align_block_size` allocate them (pad_sorted_ids off)."""
    padded = numel + experts * (block_size - 1)
    return padded, -(-padded // block_size)


def tokens_per_program(numel: int, experts: int) -> int:
    """FlagGems' tokens_per_thread: the flat ids each of the experts programs counts and
    scatters, next_power_of_2(cdiv(numel, experts))."""
    return 1 << max(0, (-(-numel // experts) - 1).bit_length())


def _generator(seed: int | None) -> torch.Generator:
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    return gen


def make_inputs(
    tokens: int,
    experts: int,
    topk: int,
    block_size: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, int, int]:
    """Each token's top-k of normal router logits plus a per-expert bias (N(0, 1)): distinct
    experts per token, uneven loads, as a trained router's are.  int32 ids whatever the
    spec's dtype."""
    del dtype  # integer ids whatever the spec's dtype
    if topk > experts:
        raise ValueError("topk must be at most experts")
    gen = _generator(seed)
    bias = torch.randn(experts, generator=gen)
    logits = torch.randn(tokens, experts, generator=gen) + bias
    ids = logits.topk(topk, dim=-1).indices.to(torch.int32).contiguous()
    return ids.to(device), experts, block_size


def make_check_inputs(
    tokens: int,
    experts: int,
    topk: int,
    block_size: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, int, int]:
    """Ids whose order in sorted_ids does not depend on the order of the atomics: no expert
    twice among the flat ids one program counts (FlagGems' tokens_per_thread of them), nor
    within a token.  Across programs an expert still recurs (every rank after a program's
    first comes from the column prefix of the earlier programs' counts), and the experts are
    drawn with uneven weights, so segments get padding and some experts none at all (where
    a program's ids leave room to choose).  Where a program counts more ids than there are
    experts no such ids exist, and a ValueError says so."""
    del dtype  # integer ids whatever the spec's dtype
    if topk > experts:
        raise ValueError("topk must be at most experts")
    numel = tokens * topk
    group = tokens_per_program(numel, experts)
    if group > experts:
        raise ValueError(
            f"each program counts {group} ids, more than the {experts} experts: some expert "
            "recurs within a program, where the atomics' order decides sorted_ids' order"
        )
    gen = _generator(seed)
    weights = torch.rand(experts, generator=gen) ** 4 + 0.01  # a few hot experts
    if group % topk == 0 or topk % group == 0:
        # one draw without replacement per program's group of whole tokens, or per token
        # where a token spans whole groups
        step = max(group, topk)
        flat = torch.empty(-(-numel // step) * step, dtype=torch.int64)
        for start in range(0, flat.numel(), step):
            flat[start : start + step] = torch.multinomial(weights, step, generator=gen)
    else:  # groups and tokens straddle each other: id by id, clear of both
        flat = torch.empty(numel, dtype=torch.int64)
        for i in range(numel):
            w = weights.clone()
            w[flat[i - i % topk : i]] = 0
            w[flat[i - i % group : i]] = 0
            if not w.any():
                raise ValueError("no expert is left that is new to both the token and the program")
            flat[i] = torch.multinomial(w, 1, generator=gen)
    ids = flat[:numel].view(tokens, topk).to(torch.int32).contiguous()
    return ids.to(device), experts, block_size


def reference(
    topk_ids: torch.Tensor, experts: int, block_size: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """On the CPU in int64 (numpy), expert by expert: the flat indices routed to it in flat
    order at the start of its segment, the segment rounded up to block_size, numel
    everywhere else; the blocks of each segment labelled with its expert, 0 past the last;
    the total."""
    flat = topk_ids.cpu().flatten().numpy().astype(np.int64)
    numel = flat.size
    padded, blocks = padded_sizes(numel, experts, block_size)
    sorted_ids = np.full(padded, numel, dtype=np.int64)
    expert_ids = np.zeros(blocks, dtype=np.int64)
    start = 0
    for e in range(experts):
        rows = np.flatnonzero(flat == e)
        sorted_ids[start : start + rows.size] = rows
        size = -(-rows.size // block_size) * block_size
        expert_ids[start // block_size : (start + size) // block_size] = e
        start += size
    dev = topk_ids.device
    return (
        torch.from_numpy(sorted_ids).to(torch.int32).to(dev),
        torch.from_numpy(expert_ids).to(torch.int32).to(dev),
        torch.tensor([start], dtype=torch.int32, device=dev),
    )


def torch_moe_align(
    topk_ids: torch.Tensor, experts: int, block_size: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The same by torch ops on the device, without a host sync: a stable argsort of the
    flat ids, bincount, the rounded segment starts by cumsum, each id's rank in its expert
    from its sorted position, one scatter into the numel-filled buffer; each block's expert
    by searchsorted over the segment ends."""
    flat = topk_ids.flatten().long()
    numel = flat.numel()
    padded, blocks = padded_sizes(numel, experts, block_size)
    counts = torch.bincount(flat, minlength=experts)
    aligned = (counts + block_size - 1) // block_size * block_size
    ends = torch.cumsum(aligned, 0)
    order = torch.argsort(flat, stable=True)
    by_expert = flat[order]
    first = torch.cumsum(counts, 0) - counts
    rank = torch.arange(numel, device=flat.device) - first[by_expert]
    pos = (ends - aligned)[by_expert] + rank
    sorted_ids = torch.full((padded,), numel, dtype=torch.int32, device=flat.device)
    sorted_ids[pos] = order.to(torch.int32)
    block_start = torch.arange(blocks, device=flat.device) * block_size
    owner = torch.searchsorted(ends, block_start, right=True)
    expert_ids = torch.where(block_start < ends[-1], owner, 0).to(torch.int32)
    return sorted_ids, expert_ids, ends[-1:].to(torch.int32)
