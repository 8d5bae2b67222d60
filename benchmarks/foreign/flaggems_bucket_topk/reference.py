"""A DeepSeek sparse-attention indexer's top-k over variable-length rows, for FlagGems'
bucket-sort kernel: inputs, reference, torch baseline.

logits [rows, s] fp32 (the indexer's scores of every query row against the whole KV),
starts and ends [rows] int32 (row i's visible columns are [starts[i], ends[i])).  The
output is [rows, k] int32: the columns of each row's k largest visible scores, in the order
FlagGems' kernel writes them, which is part of what it computes: grouped by the key byte at
which a column was told apart from the row's (k + 1)-th largest score, the key the kernel
thresholds on (the first byte, then the second, third and fourth, then that score's equals,
lowest columns first, if the k are not yet full), each group in ascending column order.  The key is the score's fp32 bit pattern made to sort as an unsigned
integer (sign bit set for non-negative scores, all bits flipped for negative ones)."""

from __future__ import annotations

import torch

SIGMA = 4.0  # log-normal spread of the scores (see make_inputs)


def lengths(rows: int, s: int, gap: int) -> torch.Tensor:
    """Row i sees columns [0, s - gap * (rows - 1 - i)): gap 1 is one prefill chunk's causal
    rows at the end of an s-token context; a larger gap, a decode batch of requests whose
    contexts differ by gap tokens, the longest s."""
    return s - gap * (rows - 1 - torch.arange(rows, dtype=torch.int64))


def make_inputs(
    rows: int,
    s: int,
    k: int,
    gap: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """Positive log-normal fp32 scores exp(4 z), z ~ N(0, 1), whatever the spec's dtype (the
    indexer's logits are fp32), drawn on the device (the prefill trial's are 268 M values),
    -inf past each row's end as the indexer leaves them.  Two properties of FlagGems'
    kernel shape the draw: its per-row candidate buffer holds 4096 columns, so the first
    byte's threshold bin must not hold more (a spread of 4 keeps it near 2,200 of 64K);
    and the refinement rounds pad a partial chunk with 0.0, whose key byte 0x00 would join
    a threshold bin 0, so the low bit of each of the three lower key bytes is set (a
    relative change below 2^-7, the scores stay distinct and random)."""
    del dtype
    ln = lengths(rows, s, gap)
    if int(ln.min()) < k:
        raise ValueError(f"every row needs at least k={k} visible columns (gap too large)")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    logits = torch.randn(rows, s, generator=gen, device=device, dtype=torch.float32)
    logits.mul_(SIGMA).exp_()
    bits = logits.view(torch.int32)
    bits.bitwise_or_(0x00010101)
    ends = ln.to(device=device, dtype=torch.int32)
    starts = torch.zeros_like(ends)
    cols = torch.arange(s, device=device)
    logits.masked_fill_(cols[None, :] >= ends[:, None], float("-inf"))
    return logits, starts, ends, k


def _keys(x: torch.Tensor) -> torch.Tensor:
    bits = x.float().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    return torch.where(x < 0, (~bits) & 0xFFFFFFFF, bits | 0x80000000)


def _select(logits: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor, k: int) -> torch.Tensor:
    s = logits.shape[1]
    cols = torch.arange(s, device=logits.device)
    visible = (cols[None, :] >= starts[:, None].long()) & (cols[None, :] < ends[:, None].long())
    x = logits.float().masked_fill(~visible, float("-inf"))
    key = _keys(x)
    # the kernel's threshold: the bin holding the (k + 1)-th largest key at every byte
    kth = _keys(x.topk(min(k + 1, s), dim=-1).values[:, -1:])
    diff = key ^ kth
    level = torch.full_like(key, 4)  # equal to the threshold key: level 4
    for byte in (0, 1, 2, 3):  # the highest differing byte, last, wins
        level = torch.where((diff >> (8 * byte)) & 0xFF != 0, 3 - byte, level)
    above = key > kth
    need = k - above.sum(-1, keepdim=True)
    equal = key == kth
    take = above | (equal & (equal.long().cumsum(-1) <= need))
    order = torch.where(take, level * s + cols[None, :], 5 * s)
    return order.topk(k, dim=-1, largest=False).indices.to(torch.int32)


def reference(
    logits: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor, k: int
) -> torch.Tensor:
    """The selection and order above, 128 rows at a time (int64 keys of the whole prefill
    trial would be 2 GB)."""
    return torch.cat(
        [
            _select(logits[i : i + 128], starts[i : i + 128], ends[i : i + 128], k)
            for i in range(0, logits.shape[0], 128)
        ]
    )


def torch_bucket_topk(
    logits: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor, k: int
) -> torch.Tensor:
    """The same in plain torch over all rows at once: the visible scores' (k + 1)-th largest
    from torch.topk as the threshold, then the kept columns ordered by the byte that decided them."""
    return _select(logits, starts, ends, k)
