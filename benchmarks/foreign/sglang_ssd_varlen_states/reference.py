"""Mamba-2's per-sequence final states after a packed SSD prefill (SGLang's
`chunk_state_varlen`, the last step of `mamba_chunk_scan_combined` with cu_seqlens, as
`MambaMixer2` calls it with the batch's initial states): inputs, fp32 reference, torch
baseline.

`seqs` prompts of equal length (the last takes the rest) packed into `seqlen` tokens, cut
into chunks of `chunk` regardless of the prompts' bounds.  x is [seqlen, nheads, headdim],
B [seqlen, ngroups, dstate] (head h reads group h // (nheads / ngroups)), both in the spec's
dtype; dt and dA_cumsum [nheads, nchunks, chunk] fp32 as `_chunk_cumsum_fwd` leaves them
(dA_cumsum chunk-local); chunk_states [nchunks, nheads, headdim, dstate] fp32, the state
entering each chunk (`_state_passing_fwd`'s output); initial_states [seqs, nheads, headdim,
dstate] fp32, the cached state of every other request (zero for the rest, as SGLang's
torch.where leaves them); cu_seqlens [seqs + 1] int32.  For sequence s over [start, end),
its last chunk c = (end - 1) // chunk starting at token cs, and dA_last = dA_cumsum[:, c,
end - cs - 1]:

    out[s] = sum over t in [max(start, cs), end) of x[t]^T (B[t] exp(dA_last - dA[t]) dt[t])
             + chunk_states[c] exp(dA_last)                     if start < cs
             + initial_states[s] exp(dA_last - dA[start - 1])   otherwise (dA 0 at cs)

the scaled B rows cast back to the input dtype before the product, as the kernel does.
Output: [seqs, nheads, headdim, dstate] fp32."""

from __future__ import annotations

import torch


def make_inputs(
    seqlen: int, seqs: int, nheads: int, headdim: int, ngroups: int, dstate: int, chunk: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """x, B and the states at unit scale, drawn on the device; Mamba-2-like dt (softplus
    of a biased projection, clamped to [1e-3, 0.1]) and A = -exp(U[0, 3]) giving the
    chunk-local dA_cumsum; every other request with a cached initial state."""
    if nheads % ngroups or not 1 <= seqs <= seqlen:
        raise ValueError("nheads must be a multiple of ngroups, 1 <= seqs <= seqlen")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    dev = torch.Generator(device=device)
    dev.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    nchunks = -(-seqlen // chunk)
    x = torch.randn(seqlen, nheads, headdim, generator=dev, device=device, dtype=dtype)
    b = torch.randn(seqlen, ngroups, dstate, generator=dev, device=device, dtype=dtype)
    raw = torch.randn(seqlen, nheads, generator=gen) - 3.0
    dt = torch.nn.functional.softplus(raw).clamp(1e-3, 0.1)
    dt = torch.nn.functional.pad(dt, (0, 0, 0, nchunks * chunk - seqlen))
    dt = dt.view(nchunks, chunk, nheads).permute(2, 0, 1).contiguous()
    a = -torch.exp(torch.rand(nheads, generator=gen) * 3.0)
    da_cumsum = torch.cumsum(dt * a[:, None, None], dim=-1)
    per = seqlen // seqs
    bounds = [i * per for i in range(seqs)] + [seqlen]
    cu = torch.tensor(bounds, dtype=torch.int32)
    chunk_states = torch.randn(nchunks, nheads, headdim, dstate, generator=dev, device=device)
    init = torch.randn(seqs, nheads, headdim, dstate, generator=dev, device=device)
    cached = (torch.arange(seqs, device=device) % 2 == 0)[:, None, None, None]
    init = torch.where(cached, init, 0.0)
    return (
        x, b, dt.to(device), da_cumsum.to(device), cu.to(device), chunk_states,
        init.contiguous(),
    )  # fmt: skip


def _varlen_states(
    x: torch.Tensor, b: torch.Tensor, dt: torch.Tensor, da: torch.Tensor,
    cu_seqlens: torch.Tensor, chunk_states: torch.Tensor, init: torch.Tensor,
    acc: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    nheads, chunk = dt.shape[0], dt.shape[2]
    rep = nheads // b.shape[1]
    bounds = cu_seqlens.tolist()
    out = torch.empty(len(bounds) - 1, *chunk_states.shape[1:], dtype=chunk_states.dtype,
                      device=chunk_states.device)  # fmt: skip
    for s in range(len(bounds) - 1):
        start, end = bounds[s], bounds[s + 1]
        c = (end - 1) // chunk
        cs = c * chunk
        lo = max(start, cs)
        steps = torch.arange(lo - cs, end - cs, device=x.device)
        last = da[:, c, end - cs - 1]  # [nheads]
        scale = torch.exp(last[:, None] - da[:, c, steps]) * dt[:, c, steps]  # [nheads, L]
        bh = b[lo:end].repeat_interleave(rep, dim=1).float()  # [L, nheads, dstate]
        bs = (bh * scale.T[:, :, None]).to(x.dtype)
        state = torch.einsum("lhp,lhn->hpn", x[lo:end].to(acc), bs.to(acc)).float()
        if start < cs:
            state = state + chunk_states[c].float() * torch.exp(last)[:, None, None]
        else:
            edge = da[:, c, start - cs - 1] if start > cs else torch.zeros_like(last)
            state = state + init[s].float() * torch.exp(last - edge)[:, None, None]
        out[s] = state.to(out.dtype)
    return out


def reference(*inputs: torch.Tensor) -> torch.Tensor:
    return _varlen_states(*inputs, torch.float32)


def torch_varlen_states(*inputs: torch.Tensor) -> torch.Tensor:
    """The same by torch, one sequence at a time: B scaled by the decay and dt in fp32 and
    cast back, one einsum over the sequence's last-chunk tokens in the input dtype, the
    decayed boundary state added in fp32."""
    return _varlen_states(*inputs, inputs[0].dtype)
