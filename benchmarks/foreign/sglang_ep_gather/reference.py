"""SGLang's DeepEP-normal MoE gather (the `_fwd_kernel_ep_gather` launch of `ep_gather`, the
combine input of the DeepGEMM MoE runner): inputs, fp32 reference, torch baseline.

The rank has received `tokens` tokens from DeepEP's normal dispatch, each with `topk`
routing slots: recv_topk_ids [tokens, topk] int64 holds the local expert of a slot routed to
this rank's `local_experts` experts and -1 for a slot routed elsewhere; recv_topk_weight
[tokens, topk] fp32 the router weights; input_index [tokens, topk] int32 the row of each local
slot in the down projection's output, input_tensor [rows, hidden] (DeepGEMM's contiguous
layout: each expert's rows together, its count padded to 128 rows, experts in order; the pad
rows are never read).  The output is [tokens, hidden]: each token's local rows weighted by
their router weights and summed, in the spec's dtype (SGLang's is bf16, the hidden states')."""

from __future__ import annotations

import torch

ALIGN = 128  # DeepGEMM's contiguous-layout M alignment
LOCAL_PATTERN = (1, 2, 1, 3, 1, 2, 1, 1)  # local slots per received token, 1.5 on average


def local_slots(tokens: int) -> int:
    """The local (token, slot) pairs: a fixed function of the tokens."""
    n = len(LOCAL_PATTERN)
    return tokens // n * sum(LOCAL_PATTERN) + sum(LOCAL_PATTERN[: tokens % n])


def _routing(tokens: int, topk: int, local_experts: int) -> torch.Tensor:
    """Each received token routes LOCAL_PATTERN[t % 8] (at most topk) of its slots to distinct
    local experts, spread over the slots and the experts; the rest are -1."""
    ids = torch.full((tokens, topk), -1, dtype=torch.int64)
    for t in range(tokens):
        n = min(LOCAL_PATTERN[t % len(LOCAL_PATTERN)], topk, local_experts)
        for j in range(n):
            slot = (t * 3 + j * 5) % topk if topk % 5 else (t + j) % topk
            ids[t, slot] = (t * 13 + j) % local_experts
    return ids


def make_inputs(
    tokens: int, hidden: int, topk: int, local_experts: int, *, dtype: torch.dtype,
    device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """Expert outputs of unit scale (pad rows too), router weights from a softmax over the
    slots, the rows of each expert's slots in token order from its 128-aligned start."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    ids = _routing(tokens, topk, local_experts)
    weight = torch.softmax(torch.randn(tokens, topk, generator=gen), dim=-1)
    local = ids >= 0
    counts = torch.bincount(ids[local], minlength=local_experts)
    padded = (counts + ALIGN - 1) // ALIGN * ALIGN
    starts = torch.cumsum(padded, 0) - padded
    index = torch.full((tokens, topk), -1, dtype=torch.int32)
    flat_ids = ids[local]  # row-major: token order
    order = torch.argsort(flat_ids, stable=True)
    rank = torch.empty_like(order)
    rank[order] = torch.arange(order.numel())
    seg_first = torch.cumsum(counts, 0) - counts
    index[local] = (starts[flat_ids] + rank - seg_first[flat_ids]).to(torch.int32)
    rows = int(padded.sum())
    x = torch.randn(rows, hidden, generator=gen).to(dtype)
    return x.to(device), ids.to(device), weight.to(device), index.to(device)


def reference(
    input_tensor: torch.Tensor, recv_topk_ids: torch.Tensor, recv_topk_weight: torch.Tensor,
    input_index: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """Token by token over its slots in fp32: the local slots' rows times their weights."""
    x = input_tensor.float()
    tokens, topk = recv_topk_ids.shape
    out = torch.zeros(tokens, x.shape[1], dtype=torch.float32, device=x.device)
    for j in range(topk):
        keep = recv_topk_ids[:, j] >= 0
        rows = input_index[:, j].long().clamp_min(0)
        w = torch.where(keep, recv_topk_weight[:, j].float(), 0.0)
        out += torch.where(keep[:, None], x[rows] * w[:, None], 0.0)
    return out


def torch_ep_gather(
    input_tensor: torch.Tensor, recv_topk_ids: torch.Tensor, recv_topk_weight: torch.Tensor,
    input_index: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """All slots' rows gathered at once in the input dtype, weighted (0 for the other
    ranks' slots) and summed over the slots."""
    rows = input_index.long().clamp_min(0)
    w = torch.where(recv_topk_ids >= 0, recv_topk_weight, 0.0).to(input_tensor.dtype)
    return (input_tensor[rows] * w[..., None]).sum(dim=1)
