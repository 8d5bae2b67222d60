"""SGLang's MLA latent-cache store (the `set_mla_kv_buffer_kernel` launch of
`set_mla_kv_buffer_triton`, which `MLATokenToKVPool.set_mla_kv_buffer` runs for every MLA
layer at every step under the FA3, FlashInfer-MLA, TRT-LLM-MLA, Cutlass-MLA and NSA
backends): inputs, reference, torch baseline.

kv_buffer is one layer's pool [slots, 1, nope + rope] in the spec's dtype; loc [tokens]
int64 the step's out_cache_loc (distinct slots); k_nope [tokens, 1, nope] the normed latent,
contiguous; k_rope [tokens, 1, rope] the rotated key position part, a view of the last
columns of the [tokens, nope + rope] kv_a projection output (row stride nope + rope), as
DeepSeek's attention hands it over.  The output is the pool, each token's [nope | rope] row
written at its slot and every other slot unchanged."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int, nope: int, rope: int, slots: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """Random values in the pool (so a stray write shows) and in the new rows, and `tokens`
    distinct slots drawn at random from the pool, all on the device."""
    if tokens > slots:
        raise ValueError("need tokens <= slots")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    kv_buffer = torch.randn(slots, 1, nope + rope, generator=gen, device=device).to(dtype)
    loc = torch.randperm(slots, generator=gen, device=device)[:tokens].to(torch.int64)
    latent = torch.randn(tokens, nope + rope, generator=gen, device=device).to(dtype)
    k_nope = latent[:, :nope].contiguous().unsqueeze(1)
    k_rope = latent[:, nope:].unsqueeze(1)
    return kv_buffer, loc, k_nope, k_rope


def reference(
    kv_buffer: torch.Tensor, loc: torch.Tensor, k_nope: torch.Tensor, k_rope: torch.Tensor
) -> torch.Tensor:
    """Indexing on a copy of the pool: the two parts joined and written at the slots."""
    out = kv_buffer.clone()
    out[loc] = torch.cat([k_nope, k_rope], dim=-1).to(out.dtype)
    return out


def torch_store(
    kv_buffer: torch.Tensor, loc: torch.Tensor, k_nope: torch.Tensor, k_rope: torch.Tensor
) -> torch.Tensor:
    """The same by torch ops, as a store without the Triton kernel would do it: a torch.cat
    of the two parts, then an index_put into the pool in place."""
    kv_buffer[loc] = torch.cat([k_nope, k_rope], dim=-1)
    return kv_buffer
