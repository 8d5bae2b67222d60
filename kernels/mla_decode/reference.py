"""The MLA decode contract: shapes, KV layout, fp32 reference, input factory, FLOP/byte counts.

Every version in the registry has ONE signature::

    fn(q, kv_cache, cache_seqlens, sm_scale) -> out

- ``q``             ``[b, s, h, D_QK]``  (D_QK = 576 = 512 latent + 64 rope), bf16/fp16/fp32,
                    contiguous. ``s`` is the number of query positions per sequence:
                    1 for plain decode, e.g. 16 for speculative decoding.
- ``kv_cache``      ``[b, t_max, D_QK]`` same dtype as q, contiguous. ONE latent head shared
                    by all query heads (MQA-style). Keys are the full 576-wide rows; values are
                    the first ``D_V = 512`` columns of the SAME rows (no separate V tensor).
                    Layout choice: contiguous per sequence (not paged), row stride 576.
- ``cache_seqlens`` ``[b]`` int32: sequence ``i`` attends to rows ``0 .. cache_seqlens[i]-1``.
                    Each length must be >= 1 and <= t_max (ragged batches allowed).
- ``sm_scale``      float, the softmax scale (usually ``D_QK ** -0.5``).
- ``out``           ``[b, s, h, D_V]`` in q's dtype.

Speculative positions: all ``s`` query positions of a sequence see the same ``cache_seqlens[i]``
rows — NO causal mask between them (the draft tokens' own K/V are assumed already appended to
the cache by the caller). Kernels must read each KV row once for all ``s*h`` query rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kernels.mla_decode.shapes import (  # noqa: F401  (re-exported: the versions import them here)
    D_LATENT,
    D_QK,
    D_ROPE,
    D_V,
    N_HEADS,
    bytes_moved,
    flops,
)


@dataclass(frozen=True)
class Config:
    """One trial configuration."""

    name: str
    b: int
    s: int
    t: int
    h: int = N_HEADS


# The default trial matrix (issue 4): plain decode and speculative decoding with s=16.
DEFAULT_CONFIGS = (
    Config("decode", b=32, s=1, t=4096),
    Config("speculative", b=32, s=16, t=4096),
)


def default_scale() -> float:
    return float(D_QK**-0.5)


def check_inputs(q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor) -> None:
    """Raise ValueError with a clear message when inputs break the contract."""
    if q.dim() != 4 or q.shape[-1] != D_QK:
        raise ValueError(f"q must be [b, s, h, {D_QK}], got {tuple(q.shape)}")
    if kv_cache.dim() != 3 or kv_cache.shape[-1] != D_QK:
        raise ValueError(f"kv_cache must be [b, t, {D_QK}], got {tuple(kv_cache.shape)}")
    if kv_cache.shape[0] != q.shape[0]:
        raise ValueError(f"batch mismatch: q has {q.shape[0]}, kv_cache has {kv_cache.shape[0]}")
    if cache_seqlens.shape != (q.shape[0],):
        raise ValueError(
            f"cache_seqlens must be [b]={q.shape[0]}, got {tuple(cache_seqlens.shape)}"
        )
    if kv_cache.dtype != q.dtype:
        raise ValueError(f"dtype mismatch: q {q.dtype}, kv_cache {kv_cache.dtype}")


def reference(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    """float32 torch reference (any device). Returns ``[b, s, h, D_V]`` in q's dtype."""
    check_inputs(q, kv_cache, cache_seqlens)
    b, s, h, _ = q.shape
    out = torch.empty(b, s, h, D_V, dtype=q.dtype, device=q.device)
    for i in range(b):
        n = int(cache_seqlens[i])
        kv = kv_cache[i, :n].float()  # [n, 576]
        qi = q[i].float().reshape(s * h, D_QK)  # [s*h, 576]
        scores = (qi @ kv.T) * sm_scale  # [s*h, n]
        p = torch.softmax(scores, dim=-1)
        out[i] = (p @ kv[:, :D_V]).reshape(s, h, D_V).to(q.dtype)
    return out


def torch_batched(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    """Plain torch in q's dtype: the "plain torch" baseline of the benchmark.

    One batched matmul writes the scores with the length mask folded in as an additive bias
    (``baddbmm``), softmax runs in q's dtype (accumulating in fp32 internally), and a second
    batched matmul applies the probabilities to the latent columns of the same cache.
    """
    check_inputs(q, kv_cache, cache_seqlens)
    b, s, h, _ = q.shape
    t = kv_cache.shape[1]
    pos = torch.arange(t, device=q.device)
    valid = pos[None, :] < cache_seqlens[:, None].to(pos.dtype)  # [b, t]
    bias = torch.zeros(b, 1, t, dtype=q.dtype, device=q.device)
    bias.masked_fill_(~valid[:, None, :], float("-inf"))
    qf = q.reshape(b, s * h, D_QK)
    scores = torch.baddbmm(bias, qf, kv_cache.transpose(1, 2), alpha=sm_scale)  # [b, s*h, t]
    p = torch.softmax(scores, dim=-1)
    out = torch.bmm(p, kv_cache[:, :, :D_V])
    return out.reshape(b, s, h, D_V)


def torch_fp32_softmax(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    """Plain torch with an fp32 score matrix (masked_fill + fp32 softmax): the baseline of the
    first result files (20261202T0920Z..T0929Z), kept to reproduce them."""
    check_inputs(q, kv_cache, cache_seqlens)
    b, s, h, _ = q.shape
    t = kv_cache.shape[1]
    qf = q.reshape(b, s * h, D_QK)
    scores = torch.bmm(qf, kv_cache.transpose(1, 2)).float() * sm_scale  # [b, s*h, t]
    pos = torch.arange(t, device=q.device)
    mask = pos[None, :] >= cache_seqlens[:, None].to(pos.dtype)  # [b, t]
    scores.masked_fill_(mask[:, None, :], float("-inf"))
    p = torch.softmax(scores, dim=-1).to(q.dtype)
    out = torch.bmm(p, kv_cache[:, :, :D_V])
    return out.reshape(b, s, h, D_V)


def make_inputs(
    b: int,
    s: int,
    t: int,
    h: int = N_HEADS,
    *,
    dtype: torch.dtype = torch.bfloat16,
    device: str | torch.device = "cpu",
    ragged: bool = False,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
    """Fresh random inputs ``(q, kv_cache, cache_seqlens, sm_scale)``.

    ``ragged=True`` draws each length uniformly in ``[1, t]`` (and forces one length to ``t``
    and, if b > 1, one to 1); otherwise every sequence has length ``t``.
    """
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q = torch.randn(b, s, h, D_QK, generator=gen, dtype=torch.float32)
    kv = torch.randn(b, t, D_QK, generator=gen, dtype=torch.float32)
    if ragged:
        lens = torch.randint(1, t + 1, (b,), generator=gen, dtype=torch.int32)
        lens[0] = t
        if b > 1:
            lens[-1] = 1
    else:
        lens = torch.full((b,), t, dtype=torch.int32)
    return (
        q.to(dtype=dtype, device=device),
        kv.to(dtype=dtype, device=device),
        lens.to(device=device),
        default_scale(),
    )


def rel_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref|| / ||ref|| in float64; NaN/inf anywhere gives inf."""
    o = out.double()
    r = ref.double()
    if not torch.isfinite(o).all():
        return float("inf")
    return float((o - r).norm() / r.norm().clamp_min(1e-30))
