"""Mamba-2's per-chunk C B^T (SGLang's `_bmm_chunk_fwd`, as its SSD prefill calls it):
inputs, fp32 reference, torch baseline.  C and B are [batch, seqlen, ngroups, dstate]; the
output is [batch, nchunks, ngroups, chunk, chunk] in fp32, out[b, c, g, i, j] = C[b, c*chunk
+ i, g, :] . B[b, c*chunk + j, g, :] where both tokens belong to the same packed sequence
and exist, else 0."""

from __future__ import annotations

import torch


def make_inputs(
    batch: int, seqlen: int, ngroups: int, dstate: int, chunk: int, seqs: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:  # fmt: skip
    """C and B at unit scale; `seqs` sequences of equal length packed along seqlen (the
    last one takes the remainder); the chunk length."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    c = torch.randn(batch, seqlen, ngroups, dstate, generator=gen)
    b = torch.randn(batch, seqlen, ngroups, dstate, generator=gen)
    per = max(1, seqlen // seqs)
    seq_idx = (torch.arange(seqlen) // per).clamp_max(seqs - 1).to(torch.int32)
    seq_idx = seq_idx.expand(batch, seqlen).contiguous()
    return (
        c.to(dtype=dtype, device=device),
        b.to(dtype=dtype, device=device),
        seq_idx.to(device),
        chunk,
    )


def _chunk_bmm(
    c: torch.Tensor, b: torch.Tensor, seq_idx: torch.Tensor, cs: int, acc: torch.dtype
) -> torch.Tensor:
    batch, seqlen, ngroups, dstate = c.shape
    nchunks = -(-seqlen // cs)
    pad = nchunks * cs - seqlen
    cp = torch.nn.functional.pad(c, (0, 0, 0, 0, 0, pad)).to(acc)
    bp = torch.nn.functional.pad(b, (0, 0, 0, 0, 0, pad)).to(acc)
    cp = cp.view(batch, nchunks, cs, ngroups, dstate).transpose(2, 3)
    bp = bp.view(batch, nchunks, cs, ngroups, dstate).transpose(2, 3)
    out = (cp @ bp.transpose(-1, -2)).float()
    sp = torch.nn.functional.pad(seq_idx.long(), (0, pad), value=-1).view(batch, nchunks, cs)
    same = (sp[..., :, None] == sp[..., None, :]) & (sp[..., :, None] >= 0)
    return out * same[:, :, None].to(out.dtype)


def reference(c: torch.Tensor, b: torch.Tensor, seq_idx: torch.Tensor, chunk: int) -> torch.Tensor:
    return _chunk_bmm(c, b, seq_idx, chunk, torch.float32)


def torch_chunk_bmm(
    c: torch.Tensor, b: torch.Tensor, seq_idx: torch.Tensor, chunk: int
) -> torch.Tensor:
    """The same product by torch's batched matmul in the input dtype, then the mask."""
    return _chunk_bmm(c, b, seq_idx, chunk, c.dtype)
