"""vLLM's HF3FS KV connector gather (the `kv_cache_gather_kernel` launch of
`gather_kv_caches`, which `HF3FSKVConnector` runs for every KV block it saves to 3FS):
inputs, reference, torch baseline.

caches is [layers, blocks, heads, block_size, content] in the spec's dtype: every layer's
KV cache in the connector's standardized [blocks, heads, block_size, content] view (an MLA
cache is one head of the latent plus rope columns; a FlashInfer HND cache [blocks, 2, kv
heads, block_size, head_dim] is that view with heads = 2 x kv heads), the layers side by
side so one int64 table of base addresses reaches them all.  block_id is a Python int, the
block saved.  The output is [layers, heads, block_size, content]: that block of every
layer, contiguous, as the connector writes it to its file."""

from __future__ import annotations

import torch


def make_inputs(
    layers: int,
    heads: int,
    block_size: int,
    content: int,
    blocks: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, int]:
    """Normal values in every cache slot (the copy does not look at them) and one block id
    drawn from the middle half of the cache."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    caches = torch.randn(
        layers, blocks, heads, block_size, content, generator=gen, device=device
    ).to(dtype)
    pick = torch.randint(
        blocks // 4, max(blocks // 4 + 1, 3 * blocks // 4), (1,), generator=gen, device=device
    )
    return caches, int(pick.item())


def reference(caches: torch.Tensor, block_id: int) -> torch.Tensor:
    """Indexing: the block of every layer, made contiguous."""
    return caches[:, block_id].contiguous()


def torch_gather(caches: torch.Tensor, block_id: int) -> torch.Tensor:
    """The same by torch ops as a per-layer fallback would: one copy of each layer's block
    into the staging buffer (a launch a layer)."""
    layers = caches.shape[0]
    out = torch.empty((layers, *caches.shape[2:]), dtype=caches.dtype, device=caches.device)
    for i in range(layers):
        out[i].copy_(caches[i, block_id])
    return out
