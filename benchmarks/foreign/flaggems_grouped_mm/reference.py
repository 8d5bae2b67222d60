"""aten::_grouped_mm (a 2-D A times a 3-D B with group offsets), for FlagGems' grouped GEMM:
inputs, reference, torch baseline.

a [m, k] holds the routed tokens' rows sorted by expert (m = t * topk, as an MoE layer
permutes them before its experts), b [g, k, n] each expert's weight laid out k x n
(row-major, as FlagGems' Hopper path reads it through a TMA descriptor), and offs [g] int32
the cumulative end of each expert's rows in a (offs[-1] = m; an expert no token chose has
an empty segment).  The output c [m, n] = a[rows of e] @ b[e] for every expert e, in a's
dtype."""

from __future__ import annotations

import torch


def make_inputs(
    t: int,
    topk: int,
    g: int,
    k: int,
    n: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Each of t tokens routed to its topk distinct experts by uniform random router scores
    (a trained router's balance), the counts' cumulative sum as offs; randn rows and
    randn weights scaled by k^-1/2 (outputs O(1)).  Drawn on the target device: the
    prefill trial's weights are 403 M values."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    scores = torch.rand(t, g, generator=gen, device=device)
    experts = scores.topk(topk, dim=-1).indices.reshape(-1)
    offs = torch.bincount(experts, minlength=g).cumsum(0).to(torch.int32)
    a = torch.randn(t * topk, k, generator=gen, device=device, dtype=dtype)
    b = torch.randn(g, k, n, generator=gen, device=device, dtype=dtype)
    b.mul_(k**-0.5)
    return a, b, offs


def _segments(offs: torch.Tensor) -> list[tuple[int, int]]:
    ends = offs.tolist()
    return list(zip([0, *ends[:-1]], ends, strict=True))


def reference(a: torch.Tensor, b: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    """Expert by expert in fp64 on the CPU (fp32 on the GPU) from the rounded inputs, rounded
    to a's dtype."""
    wide = torch.float64 if a.device.type == "cpu" else torch.float32
    out = torch.zeros(a.shape[0], b.shape[2], device=a.device, dtype=wide)
    for e, (lo, hi) in enumerate(_segments(offs)):
        if hi > lo:
            out[lo:hi] = a[lo:hi].to(wide) @ b[e].to(wide)
    return out.to(a.dtype)


def torch_grouped_mm(a: torch.Tensor, b: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    """What aten runs without FlagGems: torch._grouped_mm (CUTLASS grouped GEMM on Hopper,
    bf16); elsewhere (the CPU, other dtypes) one torch.mm per expert's segment."""
    if a.is_cuda and a.dtype == torch.bfloat16 and hasattr(torch, "_grouped_mm"):
        return torch._grouped_mm(a, b, offs=offs)
    out = torch.zeros(a.shape[0], b.shape[2], device=a.device, dtype=a.dtype)
    for e, (lo, hi) in enumerate(_segments(offs)):
        if hi > lo:
            out[lo:hi] = a[lo:hi] @ b[e]
    return out
