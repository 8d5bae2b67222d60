"""vLLM's Gumbel-max sampling (`gumbel_sample` as the v1 GPU worker's sampler calls it, on
fp32 logits that already carry the temperature): inputs, reference, torch baseline.

logits is [tokens, vocab] fp32 whatever the spec's dtype (vLLM's sampler copies the model's
logits into fp32 before penalties and temperature); idx_mapping [tokens] int32 names each
token's request slot; temperature [slots] fp32 (0: greedy) and seeds [slots] int64 are per
slot; pos [tokens] int64 is each token's position in its sequence.  For a sampled request
the token is argmax(logits + g), g the Gumbel noise -log(-log(u)) with u drawn by vLLM's
counter-based hash: u = murmur3(seed, pos, column) mapped to (0, 1), so a draw is fixed by
its inputs and the reference recomputes it bit for bit; a greedy request takes the plain
argmax.  The output is the sampled token id per row (int64)."""

from __future__ import annotations

import torch

MASK32 = 0xFFFFFFFF


def _mul32(a: torch.Tensor, c: int) -> torch.Tensor:
    return (a * c) & MASK32  # int64 wraps; the low 32 bits are the uint32 product


def _rotl32(v: torch.Tensor, shift: int) -> torch.Tensor:
    return ((v << shift) | (v >> (32 - shift))) & MASK32


def _mix(h: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
    key = _mul32(_rotl32(_mul32(key, 0xCC9E2D51), 15), 0x1B873593)
    return (_rotl32(h ^ key, 13) * 5 + 0xE6546B64) & MASK32


def _fmix(h: torch.Tensor) -> torch.Tensor:
    h = _mul32(h ^ (h >> 16), 0x85EBCA6B)
    h = _mul32(h ^ (h >> 13), 0xC2B2AE35)
    return h ^ (h >> 16)


def murmur3(seed: torch.Tensor, pos: torch.Tensor, column: torch.Tensor) -> torch.Tensor:
    """MurmurHash3 (32-bit) of the words (seed low, seed high, position, column), in int64
    tensors holding uint32 values; the arguments broadcast."""
    h = torch.zeros_like(seed)
    h = _mix(h, seed & MASK32)
    h = _mix(h, (seed >> 32) & MASK32)
    h = _mix(h, pos & MASK32)
    h = _mix(h, column & MASK32)
    return _fmix(h ^ 16)


def gumbel_noise(seed: torch.Tensor, pos: torch.Tensor, column: torch.Tensor) -> torch.Tensor:
    """fp32 Gumbel noise: the hash split into 16-bit halves and mapped to (0, 1) exactly,
    then -log(-log(u)), the inner log(1 - v) by an 8-term series below 1/4."""
    r = murmur3(seed, pos, column)
    u = (r >> 16).float() * 1.52587890625e-05 + (
        (r & 0xFFFF).float() + 0.5
    ) * 2.3283064365386963e-10
    poly = torch.full_like(u, 1.0 / 8.0)
    for c in (7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0):
        poly = 1.0 / c + u * poly
    series = -u * poly
    direct = torch.log(torch.clamp(1.0 - u, min=5.960464477539063e-08))
    return -torch.log(-torch.where(u < 0.25, series, direct))


def make_inputs(
    tokens: int, vocab: int, slots: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Logits as a model's last layer makes them (unit normal times 4, divided by the
    temperature as vLLM's sampler does before this kernel), fp32 whatever the dtype; one
    token per request, the requests at random slots of a `slots`-slot pool; every eighth
    request greedy (temperature 0), the others at 0.7; random 63-bit seeds and positions
    up to 32k."""
    del dtype  # the sampler's logits are fp32
    if slots < tokens:
        raise ValueError("the slot pool must hold every request")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    slot = torch.randperm(slots, generator=gen)[:tokens]
    temperature = torch.full((slots,), 0.7)
    temperature[slot[::8]] = 0.0
    seeds = torch.randint(0, 2**63 - 1, (slots,), generator=gen, dtype=torch.int64)
    pos = torch.randint(0, 32768, (tokens,), generator=gen, dtype=torch.int64)
    logits = torch.randn(tokens, vocab, generator=gen) * 4.0
    t = temperature[slot]
    logits = torch.where(t[:, None] > 0, logits / t.clamp(min=1e-6)[:, None], logits)
    return (
        logits.to(device),
        slot.to(dtype=torch.int32, device=device),
        temperature.to(device),
        seeds.to(device),
        pos.to(device),
    )


def reference(
    logits: torch.Tensor, idx_mapping: torch.Tensor, temperature: torch.Tensor,
    seeds: torch.Tensor, pos: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """Row by row: the argmax of the logits plus the row's noise, or of the logits alone
    for a greedy request (the first maximum on ties, as torch.argmax)."""
    tokens, vocab = logits.shape
    column = torch.arange(vocab, device=logits.device, dtype=torch.int64)
    out = torch.empty(tokens, dtype=torch.int64, device=logits.device)
    for t in range(tokens):
        slot = int(idx_mapping[t])
        row = logits[t].float()
        if float(temperature[slot]) != 0.0:
            row = row + gumbel_noise(seeds[slot], pos[t], column)
        out[t] = torch.argmax(row)
    return out


def torch_gumbel_sample(
    logits: torch.Tensor, idx_mapping: torch.Tensor, temperature: torch.Tensor,
    seeds: torch.Tensor, pos: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """The same draw by torch ops over the whole batch: the [tokens, vocab] hash in int64,
    the noise added where the request samples, one argmax."""
    slot = idx_mapping.long()
    column = torch.arange(logits.shape[1], device=logits.device, dtype=torch.int64)
    noise = gumbel_noise(seeds[slot][:, None], pos[:, None], column[None, :])
    sampled = temperature[slot][:, None] != 0.0
    return torch.where(sampled, logits.float() + noise, logits.float()).argmax(dim=1)
