"""DiffusionGemma's one-pass row statistics (the `_row_stats_kernel` launch of vLLM's
`sample_row_stats`, the block-diffusion denoise step's sampler): inputs, reference, torch
baseline.

logits is [reqs x canvas, vocab] in the spec's dtype (the LM head's logits of every canvas
position of a tile of decode requests); temps [reqs] fp32 (each request's temperature from
the denoise schedule, shared by its canvas rows); canvas the rows per request; seed the
step's Philox seed (vLLM draws one below 2^31 per call).  Outputs: argmax [rows] int64 of
the logits, sample [rows] int64 (the argmax of logits / T plus Gumbel noise from Triton's
tl.rand(seed, row x vocab + column)), entropy [rows] fp32 of softmax(logits / T), and
probs [rows, vocab] that softmax in the logits' dtype (the self-conditioning input; vLLM
passes the embedding's dtype)."""

from __future__ import annotations

import torch

M32 = 0xFFFFFFFF
ROUND_A, ROUND_B = 0xD2511F53, 0xCD9E8D57
KEY_A, KEY_B = 0x9E3779B9, 0xBB67AE85
UNIFORM_SCALE = 4.6566127342e-10  # Triton's uint_to_uniform_float for 32-bit words


def temperatures(reqs: int) -> list[float]:
    """Request r's temperature: a denoise schedule's t_min + (t_max - t_min) x remaining
    fraction, spread over 0.2 to 1.0 in tenths by a stride of 7."""
    return [0.2 + 0.1 * ((r * 7) % 9) for r in range(reqs)]


def make_inputs(
    reqs: int,
    canvas: int,
    vocab: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int, int]:
    """Logits as an LM head gives them (normals x 3, a few tokens per row lifted by 8 so
    the softmax has a head), in the spec's dtype."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    rows = reqs * canvas
    logits = torch.randn(rows, vocab, generator=gen) * 3.0
    hot = torch.randint(0, vocab, (rows, 4), generator=gen)
    logits.scatter_add_(1, hot, torch.full((rows, 4), 8.0))
    temps = torch.tensor(temperatures(reqs), dtype=torch.float32)
    philox_seed = int(torch.randint(0, 2**31 - 1, (1,), generator=gen))
    return logits.to(dtype=dtype, device=device), temps.to(device), canvas, philox_seed


def _mulhilo(a: int, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(high, low) 32-bit words of a x b for a 32-bit constant a and 32-bit values b in
    int64, b split into 16-bit halves so that nothing overflows."""
    p = a * (b >> 16)
    q = a * (b & 0xFFFF)
    s = ((p & 0xFFFF) << 16) + q
    return (p >> 16) + (s >> 32), s & M32


def uniform(seed: int, offset: torch.Tensor) -> torch.Tensor:
    """Triton's tl.rand(seed, offset) for int64 offsets: Philox4x32-10 of counters (offset's
    low word, its high word, 0, 0) under key (seed's low word, high word), the first word
    read as int32, negatives folded, times 4.6566127342e-10 in fp32."""
    c0, c1 = offset & M32, (offset >> 32) & M32
    c2 = torch.zeros_like(c0)
    c3 = torch.zeros_like(c0)
    k0, k1 = seed & M32, (seed >> 32) & M32
    for _ in range(10):
        hi_b, lo_b = _mulhilo(ROUND_B, c2)
        hi_a, lo_a = _mulhilo(ROUND_A, c0)
        c0, c2, c1, c3 = hi_b ^ c1 ^ k0, hi_a ^ c3 ^ k1, lo_b, lo_a
        k0, k1 = (k0 + KEY_A) & M32, (k1 + KEY_B) & M32
    x = torch.where(c0 >= 2**31, c0 - 2**32, c0)
    x = torch.where(x < 0, -x - 1, x)
    return x.to(torch.float32) * torch.tensor(UNIFORM_SCALE, dtype=torch.float32)


def _noisy(x: torch.Tensor, inv: torch.Tensor, first_row: int, seed: int) -> torch.Tensor:
    """fp32 logits x inv plus the Gumbel noise of rows first_row..., as the kernel adds it."""
    rows, vocab = x.shape
    offset = (torch.arange(first_row, first_row + rows, device=x.device)[:, None] * vocab
              + torch.arange(vocab, device=x.device)[None, :])  # fmt: skip
    u = uniform(seed, offset).clamp(min=1e-20)
    return x * inv + (-torch.log(-torch.log(u)))


def reference(
    logits: torch.Tensor, temps: torch.Tensor, canvas: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """64 rows at a time on the logits' device: the argmax of the logits, the argmax of the
    fp32 scaled logits plus the recomputed noise, the softmax and its entropy in fp64."""
    rows = logits.shape[0]
    t32 = temps.float().repeat_interleave(canvas)
    inv = 1.0 / t32.clamp(min=1e-10)  # fp32, as the kernel's 1 / max(T, 1e-10)
    argmax = torch.empty(rows, dtype=torch.int64, device=logits.device)
    sample = torch.empty_like(argmax)
    entropy = torch.empty(rows, dtype=torch.float32, device=logits.device)
    probs = torch.empty_like(logits)
    for r0 in range(0, rows, 64):
        r1 = min(rows, r0 + 64)
        x = logits[r0:r1].float()
        argmax[r0:r1] = x.argmax(dim=1)
        sample[r0:r1] = _noisy(x, inv[r0:r1, None], r0, seed).argmax(dim=1)
        logp = (x.double() / t32[r0:r1, None].double().clamp(min=1e-10)).log_softmax(dim=1)
        p = logp.exp()
        entropy[r0:r1] = (-torch.where(p > 0, p * logp, 0.0).sum(dim=1)).float()
        probs[r0:r1] = p.to(logits.dtype)
    return argmax, sample, entropy, probs


def torch_row_stats(
    logits: torch.Tensor, temps: torch.Tensor, canvas: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """vLLM's own torch form (`sample_row_stats_reference`, its non-CUDA path) with the
    kernel's noise: fp32 scaled logits, log_softmax, exp, entropy, two argmaxes."""
    temp = temps.repeat_interleave(canvas).float()[:, None]
    inv = 1.0 / temp.clamp(min=1e-10)
    x = logits.float()
    scaled = x / temp.clamp(min=1e-10)
    noisy = _noisy(x, inv, 0, seed)
    log_probs = scaled.log_softmax(dim=-1)
    probs = log_probs.exp()
    entropy = -torch.where(probs > 0, probs * log_probs, 0.0).sum(dim=-1)
    return x.argmax(dim=-1), noisy.argmax(dim=-1), entropy, probs.to(logits.dtype)
