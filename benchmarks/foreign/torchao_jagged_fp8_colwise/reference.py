"""torchao's dual jagged column-wise fp8 quantization (`triton_fp8_per_group_colwise_scales_dual`,
as the backward of `_Float8GroupedMM` calls it before the weight-gradient grouped GEMM of
fp8 rowwise MoE training): inputs, reference, torch baseline.

grad_output [rows, n1] and a [rows, n2] hold the routed tokens' rows sorted by expert, group
g (one expert) being rows offsets[g - 1] to offsets[g] (int32 end offsets; every group a
multiple of 16 rows when rows is, as torchao pads them).  Per group and column: amax =
max |x| over the group's rows, scale = 448 / max(amax, 1e-12) computed in fp64, rounded to
fp32 and down to a power of two; the rows times the scale (fp32), clamped to +-448 and cast
to e4m3 (round to nearest even).  Outputs: the e4m3 grad_output and a, each [rows, n]
column-major, and their fp32 scales flattened [groups x n] (group-major)."""

from __future__ import annotations

import torch

FP8 = torch.float8_e4m3fn
EPS = 1e-12


def make_inputs(
    rows: int, groups: int, n1: int, n2: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """Gradient rows at 1e-3 with a few outlier columns, unit activation rows, and an uneven
    routing: group sizes drawn from a multinomial over weights 0.5 to 1.5 in units of 16
    rows (of 1 row where rows is no multiple of 16), so experts receive different counts
    and a group may be empty."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    g = torch.randn(rows, n1, generator=gen) * 1e-3
    outliers = torch.randint(0, n1, (max(1, n1 // 64),), generator=gen)
    g[:, outliers] *= 30.0
    a = torch.randn(rows, n2, generator=gen)
    unit = 16 if rows % 16 == 0 else 1
    weights = 0.5 + torch.rand(groups, generator=gen, dtype=torch.float64)
    picks = torch.multinomial(weights, rows // unit, replacement=True, generator=gen)
    sizes = torch.bincount(picks, minlength=groups) * unit
    offsets = torch.cumsum(sizes, 0).to(torch.int32)
    return g.to(dtype=dtype, device=device), a.to(dtype=dtype, device=device), offsets.to(device)


def _quantize(x: torch.Tensor, offsets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    rows, n = x.shape
    groups = offsets.numel()
    sizes = torch.diff(offsets.long(), prepend=offsets.new_zeros(1).long())
    ids = torch.repeat_interleave(torch.arange(groups, device=x.device), sizes)
    xf = x.float()
    amax = torch.zeros(groups, n, dtype=torch.float32, device=x.device)
    amax = amax.scatter_reduce(0, ids[:, None].expand(rows, n), xf.abs(), "amax")
    info = torch.finfo(FP8)
    scales = (info.max / amax.double().clamp(min=EPS)).float()
    scales = torch.exp2(torch.floor(torch.log2(scales)))
    q = (xf * scales[ids]).clamp(info.min, info.max).to(FP8)
    return q.t().contiguous().t(), scales.reshape(-1)


def reference(
    grad_output: torch.Tensor, a: torch.Tensor, offsets: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    q1, s1 = _quantize(grad_output, offsets)
    q2, s2 = _quantize(a, offsets)
    return q1, s1, q2, s2


def torch_jagged_colwise(
    grad_output: torch.Tensor, a: torch.Tensor, offsets: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The same quantization in torch's kernels (a scatter amax per group and column, the
    scales, one gather of each row's scales, multiply, clamp, cast, a column-major copy),
    each tensor on its own."""
    return reference(grad_output, a, offsets)
