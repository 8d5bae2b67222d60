"""Mamba-2's per-chunk states (SGLang's `_chunk_state_fwd`, as its SSD prefill calls it,
fp32 states): inputs, fp32 reference, torch baseline.

x is [batch, seqlen, nheads, headdim], B is [batch, seqlen, ngroups, dstate] (head h reads
group h // (nheads / ngroups)); dt and dA_cumsum are [batch, nheads, nchunks, chunk] fp32 as
`_chunk_cumsum_fwd` leaves them (dt = softplus(dt + bias) clamped, 0 past the sequence's
end; dA_cumsum the chunk-local running sum of dt * A); seq_idx [batch, seqlen] int32 numbers
the packed sequences.  The output is [batch, nchunks, nheads, headdim, dstate] in fp32:

    states[b, c, h, p, n] = sum_t x[b, t, h, p] B[b, t, g(h), n] exp(dA_last - dA[t]) dt[t]

over the chunk's tokens t that belong to the same sequence as its last token, dA_last the
chunk's last running sum: the state each chunk would hand on from a zero start."""

from __future__ import annotations

import torch


def make_inputs(
    batch: int, seqlen: int, nheads: int, headdim: int, ngroups: int, dstate: int,
    chunk: int, seqs: int, *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """x and B at unit scale in the spec's dtype; Mamba-2-like dt (softplus of a biased
    projection, clamped to [1e-3, 0.1]) and A = -exp(A_log) giving dA_cumsum, both fp32;
    `seqs` sequences of equal length packed along seqlen (the last one takes the rest)."""
    if nheads % ngroups:
        raise ValueError("nheads must be a multiple of ngroups")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(batch, seqlen, nheads, headdim, generator=gen)
    b = torch.randn(batch, seqlen, ngroups, dstate, generator=gen)
    nchunks = -(-seqlen // chunk)
    pad = nchunks * chunk - seqlen
    raw = torch.randn(batch, seqlen, nheads, generator=gen) - 3.0
    dt = torch.nn.functional.softplus(raw).clamp(1e-3, 0.1)
    dt = torch.nn.functional.pad(dt, (0, 0, 0, pad))  # 0 past the end, as the kernel masks
    dt = dt.view(batch, nchunks, chunk, nheads).permute(0, 3, 1, 2).contiguous()
    a = -torch.exp(torch.rand(nheads, generator=gen) * 3.0)
    da_cumsum = torch.cumsum(dt * a[None, :, None, None], dim=-1)
    per = max(1, seqlen // seqs)
    seq_idx = (torch.arange(seqlen) // per).clamp_max(seqs - 1).to(torch.int32)
    seq_idx = seq_idx.expand(batch, seqlen).contiguous()
    return (
        x.to(dtype=dtype, device=device), b.to(dtype=dtype, device=device), dt.to(device),
        da_cumsum.to(device), seq_idx.to(device),
    )  # fmt: skip


def _chunk_state(
    x: torch.Tensor, b: torch.Tensor, dt: torch.Tensor, da_cumsum: torch.Tensor,
    seq_idx: torch.Tensor, acc: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    batch, seqlen, nheads, headdim = x.shape
    ngroups, dstate = b.shape[2], b.shape[3]
    nchunks, cs = dt.shape[2], dt.shape[3]
    pad = nchunks * cs - seqlen
    xp = torch.nn.functional.pad(x, (0, 0, 0, 0, 0, pad)).view(batch, nchunks, cs, nheads, headdim)
    bp = torch.nn.functional.pad(b, (0, 0, 0, 0, 0, pad)).view(batch, nchunks, cs, ngroups, dstate)
    bp = bp.repeat_interleave(nheads // ngroups, dim=3)  # [batch, nchunks, cs, nheads, dstate]
    sp = torch.nn.functional.pad(seq_idx.long(), (0, pad), value=-1).view(batch, nchunks, cs)
    limit = (seqlen - torch.arange(nchunks, device=x.device) * cs).clamp_max(cs)
    last = sp.gather(2, (limit - 1)[None, :, None].expand(batch, nchunks, 1))
    keep = (sp == last).float()  # [batch, nchunks, cs]; padding never matches a real token
    scale = torch.exp(da_cumsum[..., -1:] - da_cumsum) * dt  # [batch, nheads, nchunks, cs]
    scale = scale.permute(0, 2, 3, 1) * keep[..., None]  # [batch, nchunks, cs, nheads]
    bs = (bp.float() * scale[..., None]).to(acc)
    out = torch.einsum("bclhp,bclhn->bchpn", xp.to(acc), bs)
    return out.float()


def reference(
    x: torch.Tensor, b: torch.Tensor, dt: torch.Tensor, da_cumsum: torch.Tensor,
    seq_idx: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    return _chunk_state(x, b, dt, da_cumsum, seq_idx, torch.float32)


def torch_chunk_state(
    x: torch.Tensor, b: torch.Tensor, dt: torch.Tensor, da_cumsum: torch.Tensor,
    seq_idx: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """The same by torch: the decay and dt scaling of B in fp32, cast back, then one
    batched product over the chunk's tokens in the input dtype."""
    return _chunk_state(x, b, dt, da_cumsum, seq_idx, x.dtype)
