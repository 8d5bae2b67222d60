"""SGLang's all-layer KV-cache slot move (the `copy_all_layer_kv_cache_tiled` launches of
`MHATokenToKVPool.move_kv_cache`, which EAGLE verification calls with pages of more than
one token and a draft tree of top-k > 1): inputs, reference, torch baseline.

The pool is one tensor kv [2, layers, slots, kv_heads * head_dim] in the model's dtype
(kv[0, l] is SGLang's k_buffer[l], kv[1, l] its v_buffer[l]; SGLang allocates them one by
one, the kernel reaches them through a table of their addresses either way).  Every
request of the verified batch owns draft_tokens consecutive slots (its verify tokens'
out_cache_loc row, at a shuffled place in the pool); of its draft tree the root and
accepted(r) - 1 more nodes were accepted, in tree order.  tgt_loc (int64) is the first
accepted(r) slots of each row, src_loc (int64) the accepted nodes' slots (SGLang's
out_cache_loc[accept_index]), request after request: each layer's K and V rows at src_loc
are copied to tgt_loc, in place."""

from __future__ import annotations

import torch


def accepted(reqs: int, draft_tokens: int) -> list[int]:
    """Accepted tokens per request (the root included), 1 to draft_tokens: a fixed function
    of the dims, so that the moved rows (and the floor) are known."""
    return [1 + (3 * r + 2) % draft_tokens for r in range(reqs)]


def make_inputs(
    layers: int, kv_heads: int, head_dim: int, reqs: int, draft_tokens: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """A pool of 2 x reqs x draft_tokens slots (random values); each request's verify row
    at one of its draft_tokens-aligned places, drawn without replacement; its accepted
    nodes a sorted random subset of the row after the root."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    slots = 2 * reqs * draft_tokens
    kv = torch.randn(2, layers, slots, kv_heads * head_dim, generator=gen)
    places = torch.randperm(2 * reqs, generator=gen)[:reqs]
    tgt, src = [], []
    for r, n in enumerate(accepted(reqs, draft_tokens)):
        row = int(places[r]) * draft_tokens + torch.arange(draft_tokens)
        nodes = torch.randperm(draft_tokens - 1, generator=gen)[: n - 1].sort().values + 1
        idx = torch.cat([torch.zeros(1, dtype=torch.int64), nodes])
        tgt.append(row[:n])
        src.append(row[idx])
    return (
        kv.to(device=device, dtype=dtype),
        torch.cat(tgt).to(device),
        torch.cat(src).to(device),
    )


def reference(kv: torch.Tensor, tgt_loc: torch.Tensor, src_loc: torch.Tensor) -> torch.Tensor:
    """Every source row read before any target row is written (a request's later sources
    never lie among its earlier targets, so SGLang's chunked launches agree)."""
    out = kv.clone()
    out[:, :, tgt_loc] = kv[:, :, src_loc]
    return out


def torch_kv_move(kv: torch.Tensor, tgt_loc: torch.Tensor, src_loc: torch.Tensor) -> torch.Tensor:
    """SGLang's `move_kv_cache_native` (SGLANG_NATIVE_MOVE_KV_CACHE): per layer, an index
    copy of K and of V (two launches per layer)."""
    for layer in range(kv.shape[1]):
        kv[0, layer][tgt_loc] = kv[0, layer][src_loc]
        kv[1, layer][tgt_loc] = kv[1, layer][src_loc]
    return kv
