"""vLLM's flash-MaxSim rerank (the `_maxsim_rerank_kernel` launch of
`flash_maxsim_rerank_direct`, vLLM's late-interaction scoring for ColBERT-style rerankers):
inputs, reference, torch baseline.

query is [query_len, dim] fp16 and docs [total tokens, dim] fp16 whatever the spec's dtype
(vLLM's wrapper casts both to fp16 before the launch); doc_offsets and doc_lengths [docs]
int32 place each document's token embeddings in the packed tensor (lengths from
spec.doc_lengths, so that the floor is known from the dims); max_len is the longest.  The
output is [docs] fp32: for each document, the sum over query tokens of the largest dot
product with any of its tokens."""

from __future__ import annotations

import torch

from foreign.vllm_maxsim_rerank.spec import doc_lengths


def make_inputs(
    docs: int, doc_len: int, query_len: int, dim: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """Unit-norm token embeddings (ColBERT normalizes its projections), packed document
    after document."""
    del dtype  # fp16, as vLLM's wrapper hands them to the kernel
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    lengths = torch.tensor(doc_lengths(docs, doc_len), dtype=torch.int32)
    offsets = torch.zeros(docs, dtype=torch.int32)
    offsets[1:] = torch.cumsum(lengths, 0)[:-1]
    total = int(lengths.sum())
    query = torch.nn.functional.normalize(torch.randn(query_len, dim, generator=gen), dim=-1)
    emb = torch.nn.functional.normalize(torch.randn(total, dim, generator=gen), dim=-1)
    return (
        query.half().to(device), emb.half().to(device), offsets.to(device),
        lengths.to(device), int(lengths.max()),
    )  # fmt: skip


def reference(
    query: torch.Tensor, docs: torch.Tensor, doc_offsets: torch.Tensor,
    doc_lengths: torch.Tensor, max_len: int,
) -> torch.Tensor:
    """Document by document in fp64: the similarity matrix, its row maxima, their sum."""
    del max_len
    q = query.double().cpu()
    d = docs.double().cpu()
    out = torch.empty(doc_offsets.shape[0], dtype=torch.float32)
    for i, (start, n) in enumerate(zip(doc_offsets.tolist(), doc_lengths.tolist(), strict=True)):
        out[i] = float((q @ d[start : start + n].T).max(dim=1).values.sum())
    return out.to(query.device)


def torch_maxsim(
    query: torch.Tensor, docs: torch.Tensor, doc_offsets: torch.Tensor,
    doc_lengths: torch.Tensor, max_len: int,
) -> torch.Tensor:
    """The same by torch ops over the batch: the documents gathered into a zero-padded
    [docs, max_len, dim] block, one batched matmul, padded tokens at -inf, max and sum."""
    n = doc_offsets.shape[0]
    pos = torch.arange(max_len, device=docs.device)
    valid = pos[None, :] < doc_lengths[:, None]
    idx = (doc_offsets.long()[:, None] + pos[None, :]).clamp_max(docs.shape[0] - 1)
    block = docs[idx] * valid[..., None]
    sim = torch.matmul(block, query.T).float()  # [docs, max_len, query_len]
    sim = sim.masked_fill(~valid[..., None], float("-inf"))
    return sim.amax(dim=1).sum(dim=-1).reshape(n)
