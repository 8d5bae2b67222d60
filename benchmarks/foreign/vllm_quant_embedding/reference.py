"""vLLM's compressed-tensors quantized embedding lookup (the `_dequant_gather_kernel` launch
of `CompressedTensorsEmbeddingWNA16Int.embedding`, vLLM's dequant-on-lookup path for a
pack-quantized `VocabParallelEmbedding`): inputs, reference, torch baseline.

ids is [tokens] int32 (the step's input ids, vLLM's v1 input buffer); weight_packed
[vocab, hidden * bits / 32] int32 holds each row's values `bits` to a word, the lowest bits
first, each stored with its offset 2^(bits - 1) added (compressed-tensors' symmetric pack);
weight_scale [vocab, hidden / group] (one scale per row and group, or [vocab, 1] when
group is 0: channel-wise) in the spec's dtype, the checkpoint's params_dtype.  hidden and
bits are Python ints.  The output is [tokens, hidden] in the scale's dtype: every id's row
unpacked, less the offset, times its group's scale."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int,
    vocab: int,
    hidden: int,
    group: int,
    bits: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int, int]:
    """Uniformly random packed words (every value from -2^(bits-1) to 2^(bits-1) - 1
    alike), scales between 0.002 and 0.02 (a 4-bit embedding's absmax / 7 is near 0.01),
    ids drawn uniformly from the whole vocabulary (a batch's tokens hit rows all over the
    table)."""
    if 32 % bits or hidden % (32 // bits) or (group and hidden % group):
        raise ValueError("bits must divide 32, hidden a whole number of words and groups")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    words = hidden * bits // 32
    packed = torch.randint(
        -(2**31), 2**31, (vocab, words), generator=gen, dtype=torch.int32, device=device
    )
    groups = hidden // group if group else 1
    scale = (torch.rand(vocab, groups, generator=gen, device=device) * 0.018 + 0.002).to(dtype)
    ids = torch.randint(0, vocab, (tokens,), generator=gen, device=device).to(torch.int32)
    return ids, packed, scale, hidden, bits


def _unpacked(rows: torch.Tensor, hidden: int, bits: int) -> torch.Tensor:
    """[n, hidden] int64 signed values of packed int32 rows [n, words]."""
    per = 32 // bits
    shifts = torch.arange(per, device=rows.device, dtype=torch.int64) * bits
    words = rows.long() & 0xFFFFFFFF
    vals = (words[:, :, None] >> shifts) & ((1 << bits) - 1)  # [n, words, per]
    return vals.reshape(rows.shape[0], -1)[:, :hidden] - (1 << (bits - 1))


def reference(
    ids: torch.Tensor,
    weight_packed: torch.Tensor,
    weight_scale: torch.Tensor,
    hidden: int,
    bits: int,
) -> torch.Tensor:
    """Row by row in int64 and fp32: the gathered words unpacked by shifts in int64, the
    offset taken off, each value times its group's scale in fp32 (exact: a small integer
    times a 16-bit scale)."""
    q = _unpacked(weight_packed[ids.long()], hidden, bits).float()
    scale = weight_scale[ids.long()].float()
    per_col = scale.repeat_interleave(hidden // scale.shape[1], dim=1)
    return q * per_col


def torch_dequant_gather(
    ids: torch.Tensor,
    weight_packed: torch.Tensor,
    weight_scale: torch.Tensor,
    hidden: int,
    bits: int,
) -> torch.Tensor:
    """The same by torch ops in the model's dtype, as an unfused fallback would: gather the
    packed rows and scales, unpack with int32 shifts, subtract the offset, scale."""
    rows = weight_packed.index_select(0, ids.long())
    per = 32 // bits
    shifts = torch.arange(per, device=rows.device, dtype=torch.int32) * bits
    vals = (rows[:, :, None] >> shifts) & ((1 << bits) - 1)
    q = vals.reshape(rows.shape[0], -1)[:, :hidden] - (1 << (bits - 1))
    scale = weight_scale.index_select(0, ids.long())
    per_col = scale.repeat_interleave(hidden // scale.shape[1], dim=1)
    return q.to(weight_scale.dtype) * per_col
