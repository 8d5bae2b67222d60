"""vLLM's M-RoPE position preparation (the `_prepare_rope_positions_kernel` launch of
`RopeState.prepare_positions`, which the GPU model runner runs at every step of an M-RoPE
model such as Qwen2.5-VL or Qwen3-VL): inputs, reference, torch baseline.

positions is the runner's persistent [dims, max_tokens + 1] int64 buffer (written in
place; the output is its first num_tokens columns).  prefill_positions is [slots x dims,
max_model_len] int32: each request slot's precomputed M-RoPE positions of its whole prompt
(text tokens on the diagonal, image and video tokens by frame, row and column), one row per
channel.  prefill_delta is [slots] int32, the offset of positions past the prompt.
idx_mapping is [reqs] int32 (the step's requests to their slots), query_start_loc [reqs + 1]
int32, prefill_lens and num_computed_tokens [slots] int32.  The first `prefills` requests are
prompt chunks (computed tokens below the prefill length), the rest decode one token each."""

from __future__ import annotations

import torch


def make_inputs(
    prefills: int,
    chunk: int,
    decodes: int,
    dims: int,
    max_model_len: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:
    """Slots drawn as a permutation of twice the requests; each prefill request's prompt
    4 to 8 chunks long with a random number of chunks already computed; each decoding
    request past its prompt with a delta in [-4096, 0); the table's positions random in
    [0, max_model_len) (the kernel only moves them), drawn on the device."""
    del dtype  # integer positions whatever the spec's dtype
    reqs = prefills + decodes
    if reqs < 1 or 8 * chunk > max_model_len:
        raise ValueError("need a request and prompts of 8 chunks within max_model_len")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    slots = 2 * reqs
    table = torch.randint(
        0, max_model_len, (slots * dims, max_model_len), generator=gen, device=device,
        dtype=torch.int32,
    )  # fmt: skip
    delta = torch.randint(-4096, 0, (slots,), generator=gen, device=device, dtype=torch.int32)
    idx = torch.randperm(slots, generator=gen, device=device)[:reqs].to(torch.int32)
    prefill_lens = torch.zeros(slots, dtype=torch.int32, device=device)
    computed = torch.zeros(slots, dtype=torch.int32, device=device)
    pre = idx[:prefills].long()
    n_chunks = torch.randint(4, 9, (prefills,), generator=gen, device=device)
    done = (torch.rand(prefills, generator=gen, device=device) * (n_chunks - 1)).long()
    prefill_lens[pre] = (n_chunks * chunk).to(torch.int32)
    computed[pre] = (done * chunk).to(torch.int32)
    dec = idx[prefills:].long()
    dec_prompt = torch.randint(chunk, max_model_len // 2, (decodes,), generator=gen, device=device)
    dec_out = torch.randint(0, max_model_len // 2, (decodes,), generator=gen, device=device)
    prefill_lens[dec] = dec_prompt.to(torch.int32)
    computed[dec] = (dec_prompt + dec_out).to(torch.int32)
    lens = torch.cat(
        [torch.full((prefills,), chunk, device=device), torch.ones(decodes, device=device)]
    ).to(torch.int32)
    qsl = torch.zeros(reqs + 1, dtype=torch.int32, device=device)
    qsl[1:] = torch.cumsum(lens, 0)
    num_tokens = prefills * chunk + decodes
    positions = torch.zeros(dims, num_tokens + 1, dtype=torch.int64, device=device)
    return positions, table, delta, idx, qsl, prefill_lens, computed


def reference(
    positions: torch.Tensor,
    prefill_positions: torch.Tensor,
    prefill_delta: torch.Tensor,
    idx_mapping: torch.Tensor,
    query_start_loc: torch.Tensor,
    prefill_lens: torch.Tensor,
    num_computed_tokens: torch.Tensor,
) -> torch.Tensor:
    """On the CPU, a request at a time: the prefill table's slice or offset + token +
    delta, per channel."""
    dims = positions.shape[0]
    table = prefill_positions.cpu()
    qsl = query_start_loc.cpu().tolist()
    idx = idx_mapping.cpu().tolist()
    plen = prefill_lens.cpu().tolist()
    comp = num_computed_tokens.cpu().tolist()
    delta = prefill_delta.cpu().tolist()
    out = torch.zeros(dims, qsl[-1], dtype=torch.int64)
    for b, slot in enumerate(idx):
        start, end = qsl[b], qsl[b + 1]
        n, c = end - start, comp[slot]
        for j in range(dims):
            if c < plen[slot]:
                out[j, start:end] = table[slot * dims + j, c : c + n].long()
            else:
                out[j, start:end] = torch.arange(c, c + n) + delta[slot]
    return out.to(positions.device)


def torch_positions(
    positions: torch.Tensor,
    prefill_positions: torch.Tensor,
    prefill_delta: torch.Tensor,
    idx_mapping: torch.Tensor,
    query_start_loc: torch.Tensor,
    prefill_lens: torch.Tensor,
    num_computed_tokens: torch.Tensor,
) -> torch.Tensor:
    """The same by torch ops on the device, without a host sync past the token count: each
    token's request by a searchsorted of its index in the query start locations, then one
    gather from the table and one computed branch, selected per token."""
    dims = positions.shape[0]
    num_tokens = positions.shape[1] - 1
    tok = torch.arange(num_tokens, device=positions.device, dtype=torch.int32)
    req = torch.searchsorted(query_start_loc[1:], tok, right=True)
    slot = idx_mapping[req].long()
    off = num_computed_tokens[slot].long() + (tok - query_start_loc[req]).long()
    is_prefill = num_computed_tokens[slot] < prefill_lens[slot]
    rows = slot[None, :] * dims + torch.arange(dims, device=positions.device)[:, None]
    col = off.clamp(max=prefill_positions.shape[1] - 1)
    gathered = prefill_positions[rows, col[None, :].expand(dims, -1)].long()
    computed = (off + prefill_delta[slot].long())[None, :].expand(dims, -1)
    positions[:, :num_tokens] = torch.where(is_prefill[None, :], gathered, computed)
    return positions[:, :num_tokens]
