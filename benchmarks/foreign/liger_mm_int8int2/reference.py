"""A BitNet b1.58 linear layer for Liger's int8 x ternary matmul: inputs, exact reference,
torch baseline.

Activations are int8 (a per-token absmax quantization, drawn here as random int8), the
weights ternary (-1, 0, 1) packed four to a byte along K in Liger's layout (`pack_weights`:
byte row r holds weight rows r, r + K/4, r + K/2 and r + 3K/4 in its four 2-bit fields,
each stored as w + 1).  The output is the int32 product a @ w [m, n], exact: the scales
that turn it back into the model dtype are applied by the caller, outside the kernel.
The model dtype (bf16 or fp16) is not used by the data; it names the matmul ceiling kbopt
measures (see the spec)."""

from __future__ import annotations

import torch


def _packed(w: torch.Tensor) -> torch.Tensor:
    from liger_kernel.ops.experimental.mm_int8int2 import pack_weights

    return pack_weights(w.clone())  # liger's packing (it adds 1 to its argument in place)


def make_inputs(
    m: int, k: int, n: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """int8 activations [m, k] over the whole range, ternary weights [k, n] (about a third
    zeros, as absmean quantization leaves them) packed to uint8 [k / 4, n]."""
    del dtype  # the data is int8 and 2-bit whatever the model dtype
    if k % 4:
        raise ValueError(f"k={k} must be a multiple of 4 (four weights per byte)")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    a = torch.randint(-128, 128, (m, k), generator=gen, dtype=torch.int8)
    w = torch.randint(-1, 2, (k, n), generator=gen, dtype=torch.int32)
    return a.to(device), _packed(w).to(device)


def unpack(packed: torch.Tensor) -> torch.Tensor:
    """The ternary weights [k, n] (int32) from Liger's packed layout: quarter i of the rows
    is 2-bit field i of every byte, minus 1 (written here from the layout, so that the
    reference does not rest on Liger's own unpacking)."""
    fields = [((packed.to(torch.int32) >> (2 * i)) & 3) - 1 for i in range(4)]
    return torch.cat(fields, dim=0)


def reference(a: torch.Tensor, packed: torch.Tensor) -> torch.Tensor:
    """Exact: every partial sum is an integer below 2^53, so float64 adds it exactly."""
    w = unpack(packed)
    return (a.double() @ w.double()).to(torch.int32)


def torch_int8int2(a: torch.Tensor, packed: torch.Tensor) -> torch.Tensor:
    """What a layer without the fused kernel does: unpack the weights every call (Liger's
    `unpack_weights`, a few element-wise kernels) and run an fp32 matmul, exact here: int8
    values fit fp32 (and TF32) operands, and every sum stays below 2^24."""
    from liger_kernel.ops.experimental.mm_int8int2 import unpack_weights

    w = unpack_weights(packed).to(torch.float32)
    return (a.to(torch.float32) @ w).round().to(torch.int32)
