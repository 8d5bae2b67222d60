"""The flat KV index list of a batch (SGLang's `create_flashinfer_kv_indices_triton`, as its
Triton and FlashInfer attention backends call it before every decode step): inputs,
reference, torch baseline.

SGLang's req_to_token pool is an int32 [pool rows, max_context] table: row r holds the KV
cache slots of the request in pool row r, one per token.  For a batch of requests (their
pool rows, int64, and their KV lengths, int64) and the int32 offsets where each request's
list starts (kv_indptr, the exclusive cumsum of the lengths), the output is the int32
concatenation of every request's first `length` slots (int32 as the FlashInfer backend
allocates it).  Integers throughout, whatever the spec's dtype."""

from __future__ import annotations

import torch


def make_inputs(
    batch: int, kv_len: int, max_context: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """A pool of 2 * batch rows of max_context slots (random slot numbers, as a paged
    allocator scatters them), the batch's requests on random distinct rows, all `kv_len`
    long, and their offsets.  `dtype` is unused: the tables are integers."""
    if kv_len > max_context:
        raise ValueError("kv_len must fit in max_context")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    rows = 2 * batch
    pool = torch.randint(0, 2**30, (rows, max_context), generator=gen, dtype=torch.int32)
    req = torch.randperm(rows, generator=gen)[:batch].to(torch.int64)
    lens = torch.full((batch,), kv_len, dtype=torch.int64)
    indptr = torch.zeros(batch + 1, dtype=torch.int32)
    indptr[1:] = torch.cumsum(lens, 0)
    return pool.to(device), req.to(device), lens.to(device), indptr.to(device)


def reference(
    req_to_token: torch.Tensor, req_pool_indices: torch.Tensor, seq_lens: torch.Tensor,
    kv_indptr: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    parts = [
        req_to_token[r, :n]
        for r, n in zip(req_pool_indices.tolist(), seq_lens.tolist(), strict=True)
    ]
    return torch.cat(parts)


def torch_kv_indices(
    req_to_token: torch.Tensor, req_pool_indices: torch.Tensor, seq_lens: torch.Tensor,
    kv_indptr: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """The same list by one torch gather (equal lengths: rows selected, then sliced; the
    length is read back to the host, a sync SGLang's own allocation of the list also has)."""
    kv_len = int(kv_indptr[1] - kv_indptr[0])
    return req_to_token[req_pool_indices, :kv_len].reshape(-1)
