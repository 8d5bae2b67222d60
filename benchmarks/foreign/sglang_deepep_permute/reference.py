"""SGLang's DeepEP-normal token permute (the `deepep_permute_triton_kernel` launch of
`cutlass_w4a8_moe_deepep_normal`, SGLang's W4A8 MoE after DeepEP's normal-mode dispatch):
inputs, reference, torch baseline.

One expert-parallel rank after the dispatch: `tokens` received tokens, each a row of
`hidden` activations (the spec's dtype, bf16 in SGLang) and `topk` expert ids relative to
the rank's `experts` local experts, -1 where the token's expert lives on another rank (as
DeepEP returns them).  Token t has `local_count(t)` local experts (a fixed pattern averaging
1.5, as random top-8 routing over 8 ranks gives a received token), at random slots of its
row, drawn without repeats.  src2dst [tokens * topk] int64 is what SGLang's
`deepep_run_moe_deep_preprocess` computes before the kernel (a stable sort of the flat
expert ids, the -1s first, then each pair's sorted place less the count of -1s: negative for
a remote expert), made here by the same torch ops.  The output is [pairs, hidden] in the
input's dtype: each (token, local expert) pair's copy of the token's row, the pairs in
expert order (ties in token order), the layout the grouped GEMM reads."""

from __future__ import annotations

import torch

COUNT_PATTERN = (1, 2, 1, 1, 3, 1, 2, 1)  # local experts of a received token, 1.5 on average


def local_count(token: int, topk: int, experts: int) -> int:
    return min(COUNT_PATTERN[token % len(COUNT_PATTERN)], topk, experts)


def pairs(tokens: int, topk: int, experts: int) -> int:
    """Rows of the output: the (token, local expert) pairs of the batch."""
    return sum(local_count(t, topk, experts) for t in range(tokens))


def make_inputs(
    tokens: int,
    hidden: int,
    topk: int,
    experts: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """Normal activations; each token's local experts and their slots drawn at random;
    src2dst by SGLang's preprocess; the output's row count."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    a = torch.randn(tokens, hidden, generator=gen).to(dtype)
    topk_ids = torch.full((tokens, topk), -1, dtype=torch.int64)
    for t in range(tokens):
        n = local_count(t, topk, experts)
        slots = torch.randperm(topk, generator=gen)[:n]
        topk_ids[t, slots] = torch.randperm(experts, generator=gen)[:n]
    # deepep_run_moe_deep_preprocess's src2dst (its searchsorted and Triton scatter as
    # torch ops): stable sort of the flat ids, the -1s first and then dropped
    _, reorder_ids = torch.sort(topk_ids.view(-1), stable=True)
    num_minus_one = int((topk_ids < 0).sum())
    src2dst = torch.empty(tokens * topk, dtype=torch.int64)
    src2dst[reorder_ids] = torch.arange(tokens * topk, dtype=torch.int64) - num_minus_one
    rows = tokens * topk - num_minus_one
    return a.to(device), topk_ids.to(device), src2dst.to(device), rows


def reference(
    a: torch.Tensor, topk_ids: torch.Tensor, src2dst: torch.Tensor, rows: int
) -> torch.Tensor:
    """From the expert ids alone (src2dst unused): the local pairs listed expert by expert,
    tokens ascending within an expert, each row the token's activations (fp32)."""
    del src2dst
    ids = topk_ids.cpu().tolist()
    order = sorted(
        (e, t) for t, row in enumerate(ids) for e in row if e >= 0
    )  # fmt: skip
    if len(order) != rows:
        raise ValueError(f"{len(order)} local pairs, the output has {rows} rows")
    src = torch.tensor([t for _, t in order], dtype=torch.long)
    return a.cpu().float()[src].to(a.device)


def torch_permute(
    a: torch.Tensor, topk_ids: torch.Tensor, src2dst: torch.Tensor, rows: int
) -> torch.Tensor:
    """The same by torch ops: the local pairs' destinations and source tokens selected,
    one index_copy into a fresh output."""
    topk = topk_ids.shape[1]
    dst = src2dst.view(-1)
    keep = dst >= 0
    src_tok = torch.arange(dst.numel(), device=a.device) // topk
    out = torch.empty(rows, a.shape[1], device=a.device, dtype=a.dtype)
    return out.index_copy_(0, dst[keep], a[src_tok[keep]])
