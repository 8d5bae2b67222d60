"""vLLM's paged KV-cache store (`triton_reshape_and_cache_flash` on a bf16 or fp16 cache in
the flash layout): inputs, reference, torch baseline.

key and value are [tokens, kv heads, head size] in the spec's dtype; the caches are [blocks,
block_size, kv heads, head size]; slot_mapping is the int64 slot of each token (block *
block_size + row).  The outputs are the two caches with every token's key and value written
at its slot and every other row as it was (the kernel writes in place)."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int, seqs: int, heads: int, head_size: int, block_size: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """`seqs` sequences of tokens / seqs new tokens each, every sequence continuing at a
    random row of its last block (a decode token lands anywhere in its block, a prompt
    starts on a fresh one when it is longer than a block); each sequence's blocks drawn at
    random from a pool twice the size the step needs (a paged allocator's scattered free
    list).  The caches hold random data, so a stray write shows."""
    if tokens % seqs:
        raise ValueError("tokens must be a multiple of seqs")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    per_seq = tokens // seqs
    need = seqs * (-(-per_seq // block_size) + 1)
    blocks = torch.randperm(2 * need, generator=gen)
    slots = []
    for s in range(seqs):
        mine = blocks[s * need // seqs : (s + 1) * need // seqs]
        start = (
            int(torch.randint(0, block_size, (1,), generator=gen)) if per_seq < block_size else 0
        )
        pos = torch.arange(start, start + per_seq)
        slots.append(mine[pos // block_size] * block_size + pos % block_size)
    slot_mapping = torch.cat(slots)
    key = torch.randn(tokens, heads, head_size, generator=gen)
    value = torch.randn(tokens, heads, head_size, generator=gen)
    key_cache = torch.randn(2 * need, block_size, heads, head_size, generator=gen)
    value_cache = torch.randn(2 * need, block_size, heads, head_size, generator=gen)
    return (
        key.to(dtype=dtype, device=device),
        value.to(dtype=dtype, device=device),
        key_cache.to(dtype=dtype, device=device),
        value_cache.to(dtype=dtype, device=device),
        slot_mapping.to(device),
    )


def reference(
    key: torch.Tensor, value: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Copies of the caches with each kept token's row written at (block, row) of its slot."""
    kc, vc = key_cache.clone(), value_cache.clone()
    block_size = kc.shape[1]
    for t, slot in enumerate(slot_mapping.tolist()):
        if slot >= 0:
            kc[slot // block_size, slot % block_size] = key[t]
            vc[slot // block_size, slot % block_size] = value[t]
    return kc, vc


def torch_reshape_and_cache(
    key: torch.Tensor, value: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same store by torch: one index_copy_ per cache on its [slots, kv heads, head
    size] view, in place (every slot valid, as in the trials)."""
    blocks, block_size, heads, head_size = key_cache.shape
    key_cache.view(blocks * block_size, heads, head_size).index_copy_(0, slot_mapping, key)
    value_cache.view(blocks * block_size, heads, head_size).index_copy_(0, slot_mapping, value)
    return key_cache, value_cache
