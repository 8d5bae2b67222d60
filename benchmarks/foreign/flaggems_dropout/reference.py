"""FlagGems' dropout forward (`native_dropout`, its `dropout_forward_kernel`): inputs,
reference, torch baseline.

x is a layer's input activations [tokens, hidden] in the spec's dtype (a LoRA adapter's
input: PEFT applies `lora_dropout` to x before the down-projection A); p is P = 0.1.  The
Philox seed and offset are what FlagGems reads from the device generator's state
(`philox_backend_seed_offset`): a 64-bit seed and an offset that is a multiple of 4, made
here with the inputs.  FlagGems' stream: counter c = offset + program * BLOCK + lane (its
low 32 bits, wrapping; the high word is offset >> 32) gives four uniforms through one
Philox4x32-10 call, the k-th masking element program * 4 BLOCK + k BLOCK + lane; an element
is kept when its uniform is above p, and y = x * (1 / (1 - p)) * kept, in fp32, cast.  The
output is (y, the bool keep mask).
"""

from __future__ import annotations

import torch

P = 0.1  # the dropout probability of both trials (LoRA's lora_dropout, GPT-2's and BERT's)
M32 = 0xFFFFFFFF
KEY_A, KEY_B = 0x9E3779B9, 0xBB67AE85
ROUND_A, ROUND_B = 0xD2511F53, 0xCD9E8D57
UNIFORM_SCALE = 4.6566127342e-10  # Triton's uint_to_uniform_float for 32-bit words
UNROLL = 4  # four uniforms per Philox call, four BLOCK-element slices per program


def flaggems_block(n: int) -> int:
    """FlagGems' heuristic BLOCK (nvidia heuristics_config_utils.dropout_heur_block); the
    stream's layout depends on it."""
    return 512 if n <= 512 else 1024


def flaggems_warps(n: int) -> int:
    """FlagGems' heuristic warps (dropout_heur_num_warps)."""
    return 4 if n <= 512 else 8 if n <= 1024 else 16


def make_inputs(
    tokens: int, hidden: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, int, int]:
    """Normal activations, a 62-bit Philox seed and an offset (a multiple of 4) of up to 2^36,
    so that the counter's high word is used."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, hidden, generator=gen)
    philox_seed = int(torch.randint(0, 2**62, (1,), generator=gen))
    philox_offset = 4 * int(torch.randint(0, 2**34, (1,), generator=gen))
    return x.to(dtype=dtype, device=device), philox_seed, philox_offset


def _mulhilo(a: int, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(high, low) 32-bit words of a * b for a 32-bit constant a and 32-bit values b held in
    int64, without overflowing: b split into 16-bit halves."""
    p = a * (b >> 16)  # < 2^48
    q = a * (b & 0xFFFF)  # < 2^48
    s = ((p & 0xFFFF) << 16) + q  # < 2^49
    return (p >> 16) + (s >> 32), s & M32


def philox4x32(seed: int, c0: torch.Tensor, c1: int) -> list[torch.Tensor]:
    """Philox4x32-10 of counters (c0, c1, 0, 0) under key (seed's low, high words), in
    int64 torch ops on 32-bit values (Triton's tl.philox)."""
    k0, k1 = seed & M32, (seed >> 32) & M32
    c1t = torch.full_like(c0, c1)
    c2 = torch.zeros_like(c0)
    c3 = torch.zeros_like(c0)
    for _ in range(10):
        hi_b, lo_b = _mulhilo(ROUND_B, c2)
        hi_a, lo_a = _mulhilo(ROUND_A, c0)
        c0, c2, c1t, c3 = hi_b ^ c1t ^ k0, hi_a ^ c3 ^ k1, lo_b, lo_a
        k0, k1 = (k0 + KEY_A) & M32, (k1 + KEY_B) & M32
    return [c0, c1t, c2, c3]


def uniform(r: torch.Tensor) -> torch.Tensor:
    """Triton's uint_to_uniform_float of 32-bit words: read as int32, negatives folded
    (-x - 1), times 4.6566127342e-10 in fp32."""
    x = torch.where(r >= 2**31, r - 2**32, r)
    x = torch.where(x < 0, -x - 1, x)
    return x.to(torch.float32) * torch.tensor(UNIFORM_SCALE, dtype=torch.float32)


def keep_mask(n: int, philox_seed: int, philox_offset: int, device: torch.device) -> torch.Tensor:
    """FlagGems' keep mask of n elements, laid out by its heuristic BLOCK."""
    block = flaggems_block(n)
    programs = -(-n // (block * UNROLL))
    counters = torch.arange(programs * block, dtype=torch.int64, device=device)
    c0 = ((philox_offset & M32) + counters) & M32
    words = philox4x32(philox_seed, c0, (philox_offset >> 32) & M32)
    u = torch.stack([uniform(w).view(programs, block) for w in words], dim=1)  # [prog, 4, B]
    return (u.reshape(-1)[:n]) > torch.tensor(P, dtype=torch.float32, device=device)


def reference(
    x: torch.Tensor, philox_seed: int, philox_offset: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The keep mask recomputed from the same Philox stream; y = x * (1 / (1 - p)) * kept
    in fp32 (p and the scale in fp32, as the kernel computes them), cast to x's dtype."""
    keep = keep_mask(x.numel(), philox_seed, philox_offset, x.device).view(x.shape)
    p32 = torch.tensor(P, dtype=torch.float32, device=x.device)
    scale = torch.tensor(1.0, dtype=torch.float32, device=x.device) / (1.0 - p32)
    y = (x.float() * scale) * keep.float()
    return y.to(x.dtype), keep


def torch_dropout(
    x: torch.Tensor, philox_seed: int, philox_offset: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The same mask and output by torch ops: Philox4x32-10 over the counters in int64, the
    uniforms, the compare and the scaled copy (torch's own native_dropout draws from its
    generator's stream, another mask, so it cannot pass the check)."""
    return reference(x, philox_seed, philox_offset)
