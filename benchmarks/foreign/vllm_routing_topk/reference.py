"""vLLM's routing top-k for the triton_kernels MoE path (`triton_kernels.topk.topk_forward`,
which `routing` calls for gpt-oss's MoE layers on the triton_kernels backend): inputs,
reference, torch baseline.

logits is [tokens, experts] in the spec's dtype: the router's output.  topk is a Python int
(a power of two).  The outputs, as topk_forward returns them: the k selected experts'
softmax weights [tokens, topk] in the dtype and their ids [tokens, topk] int16, both in
ascending expert order (not by weight); the bitmatrix [tokens, ceil(experts / 32)] uint32,
bit e % 32 of word e // 32 set for each selected expert e (here int64 in the reference)."""

from __future__ import annotations

import math

import torch


def make_inputs(
    tokens: int, experts: int, topk: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, int]:  # fmt: skip
    """Each token's logits a random permutation of `experts` distinct multiples of a power
    of two over about [-4, 4) (exact in bf16, fp16 and fp32), drawn on the device, so that
    no two experts tie and the chosen set is the same in every dtype."""
    if topk & (topk - 1) or not 1 <= topk <= min(experts, 32):
        raise ValueError("need a power-of-two topk <= min(experts, 32)")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    step = 2.0 ** -max(0, math.ceil(math.log2(max(experts, 8) / 8)))
    ranks = torch.argsort(torch.rand(tokens, experts, generator=gen, device=device), dim=1)
    logits = (ranks - experts // 2).to(torch.float32) * step
    return logits.to(dtype), topk


def reference(logits: torch.Tensor, topk: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """In fp64: torch.topk, the ids sorted ascending with their logits, the softmax over the
    k, rounded to the dtype; the bitmatrix as powers of two summed per word in int64."""
    tokens, experts = logits.shape
    vals, ids = torch.topk(logits.double(), topk, dim=-1)
    ids, order = ids.sort(dim=-1)
    vals = torch.softmax(vals.gather(1, order), dim=-1).to(logits.dtype)
    words = (experts + 31) // 32
    onehot = torch.zeros(tokens, words * 32, dtype=torch.int64, device=logits.device)
    onehot.scatter_(1, ids, 1)
    shifts = torch.arange(32, device=logits.device, dtype=torch.int64)
    bits = (onehot.view(tokens, words, 32) << shifts).sum(-1)
    return vals, ids.to(torch.int16), bits


def torch_routing_topk(
    logits: torch.Tensor, topk: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The same by torch ops on the device: torch.topk, a sort of the ids, an fp32 softmax of
    the k, and a scatter of ones shifted and summed per 32-expert word, kept as uint32."""
    tokens, experts = logits.shape
    vals, ids = torch.topk(logits, topk, dim=-1)
    ids, order = ids.sort(dim=-1)
    vals = torch.softmax(vals.gather(1, order).float(), dim=-1).to(logits.dtype)
    words = (experts + 31) // 32
    onehot = torch.zeros(tokens, words * 32, dtype=torch.int64, device=logits.device)
    onehot.scatter_(1, ids, 1)
    shifts = torch.arange(32, device=logits.device, dtype=torch.int64)
    bits = (onehot.view(tokens, words, 32) << shifts).sum(-1).to(torch.uint32)
    return vals, ids.to(torch.int16), bits
