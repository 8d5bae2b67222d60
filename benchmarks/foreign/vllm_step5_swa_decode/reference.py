"""Step5's sliding-window GQA decode with a headwise sigmoid gate (vLLM's
`swa_decode_gated`, the uniform-decode and MTP-verify path of Step5's sliding-window layers
on NVIDIA): inputs, reference, torch baseline.

query is [tokens, heads, 192]: `q_len` consecutive tokens of each request (1 in plain
decode, 2 with one MTP draft token verified), token r * q_len + t of request r at position
seq_len_r - q_len + t.  kv_cache is vLLM's FlashAttention-2 layout [pages, kv_heads, 16,
384] (K and V of a token side by side, split into [pages, 16, kv_heads, 192] views as
Step5's `_split_kv_cache` does).  block_table [reqs, ctx / 16] int32: only the pages holding
each request's last window + q_len tokens are real (each request's own, shuffled over the
pool); the earlier entries point at page 0 and are never read.  seq_lens [reqs] int32, gate
[tokens, heads] in the dtype (the gate projection's output).  The output, [tokens, heads,
192] in the dtype: each (token, head) attends over the `window` keys ending at its position,
the attention rounded to the dtype times sigmoid(gate) rounded to the dtype.
"""

from __future__ import annotations

import torch

HEAD = 192  # Step5's head dim (the kernel's 128 + 64 halves)
BLOCK = 16  # tokens per KV page (vLLM's default --block-size)


def seq_lengths(reqs: int, q_len: int, ctx: int) -> list[int]:
    """The longest request has ctx tokens, the others spread down to half of it."""
    return [max(q_len, ctx - (r * 7919) % max(1, ctx // 2)) for r in range(reqs)]


def pages_per_request(window: int, q_len: int) -> int:
    """Pages covering the window + q_len - 1 keys a request's tokens read, at any offset."""
    return -(-(window + q_len - 1) // BLOCK) + 1


def make_inputs(
    reqs: int,
    q_len: int,
    ctx: int,
    window: int,
    heads: int,
    kv_heads: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, float, int, int]:
    """Normal queries, keys, values and gate logits drawn on the device."""
    if heads % kv_heads:
        raise ValueError("heads must be a multiple of kv_heads")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    tokens = reqs * q_len
    pp = pages_per_request(window, q_len)
    pages = reqs * pp + 1  # page 0: what the unread entries point at
    q = torch.randn(tokens, heads, HEAD, generator=gen, device=device, dtype=dtype)
    kv = torch.randn(pages, kv_heads, BLOCK, 2 * HEAD, generator=gen, device=device, dtype=dtype)
    gate = torch.randn(tokens, heads, generator=gen, device=device, dtype=dtype)
    lens = seq_lengths(reqs, q_len, ctx)
    width = -(-ctx // BLOCK)
    table = torch.zeros(reqs, width, dtype=torch.int64, device=device)
    perm = torch.randperm(reqs * pp, generator=gen, device=device) + 1
    for r, length in enumerate(lens):
        first = max(length - q_len - window + 1, 0) // BLOCK
        last = (length - 1) // BLOCK
        table[r, first : last + 1] = perm[r * pp : r * pp + last - first + 1]
    seq_lens = torch.tensor(lens, dtype=torch.int32, device=device)
    return q, kv, table.to(torch.int32), seq_lens, gate, HEAD**-0.5, window, q_len


def _attend(
    q: torch.Tensor, kv: torch.Tensor, block_table: torch.Tensor, seq_lens: torch.Tensor,
    scale: float, window: int, q_len: int, compute: torch.dtype, chunk: int,
) -> torch.Tensor:  # fmt: skip
    """[tokens, heads, 192] attention in `compute`, `chunk` requests at a time: each request's
    window + q_len - 1 keys ending at its last token gathered through its table."""
    tokens, heads, _ = q.shape
    kv_heads = kv.shape[1]
    group = heads // kv_heads
    reqs = seq_lens.shape[0]
    n = window + q_len - 1
    out = torch.empty(tokens, heads, HEAD, dtype=compute, device=q.device)
    j = torch.arange(n, device=q.device)
    t = torch.arange(q_len, device=q.device)
    for r0 in range(0, reqs, chunk):
        r1 = min(reqs, r0 + chunk)
        lens = seq_lens[r0:r1].long()
        p = (lens - q_len - window + 1)[:, None] + j[None, :]  # [R, n] key positions
        pc = p.clamp(min=0)
        page = torch.gather(block_table[r0:r1].long(), 1, pc // BLOCK)
        rows = kv[page, :, pc % BLOCK]  # [R, n, kv_heads, 384]
        k = rows[..., :HEAD].to(compute)
        v = rows[..., HEAD:].to(compute)
        qq = q[r0 * q_len : r1 * q_len].to(compute).view(r1 - r0, q_len, kv_heads, group, HEAD)
        s = torch.einsum("rtkgd,rnkd->rtkgn", qq, k) * scale
        pos = (lens - q_len)[:, None] + t[None, :]  # [R, q_len]
        pp = p[:, None, :]
        visible = (pp >= 0) & (pp <= pos[:, :, None]) & (pp > pos[:, :, None] - window)
        s = s.masked_fill(~visible[:, :, None, None, :], float("-inf"))
        w = torch.softmax(s.float(), dim=-1).to(compute)
        o = torch.einsum("rtkgn,rnkd->rtkgd", w, v)
        out[r0 * q_len : r1 * q_len] = o.reshape((r1 - r0) * q_len, heads, HEAD)
    return out


def _gated(attention: torch.Tensor, gate: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The attention rounded to the dtype, times sigmoid(gate) rounded to the gate's dtype."""
    sig = torch.sigmoid(gate.float()).to(gate.dtype).float()
    return attention.to(dtype).float() * sig[:, :, None]


def reference(
    q: torch.Tensor, kv: torch.Tensor, block_table: torch.Tensor, seq_lens: torch.Tensor,
    gate: torch.Tensor, scale: float, window: int, q_len: int,
) -> torch.Tensor:  # fmt: skip
    """fp64 on the inputs' device, 8 requests at a time; the gate as the kernel rounds it."""
    att = _attend(q, kv, block_table, seq_lens, scale, window, q_len, torch.float64, 8)
    return _gated(att, gate, q.dtype)


def torch_swa_decode(
    q: torch.Tensor, kv: torch.Tensor, block_table: torch.Tensor, seq_lens: torch.Tensor,
    gate: torch.Tensor, scale: float, window: int, q_len: int,
) -> torch.Tensor:  # fmt: skip
    """The same by torch ops in the dtype (fp32 softmax), 64 requests at a time, then the
    unfused headwise sigmoid gate; the output in the dtype."""
    att = _attend(q, kv, block_table, seq_lens, scale, window, q_len, q.dtype, 64)
    return _gated(att, gate, q.dtype).to(q.dtype)
