"""vLLM's fused SiLU-and-mul with per-group fp8 quantization into column-major scales
(`silu_mul_per_token_group_quant_fp8_colmajor` as `DeepGemmExperts` calls it on Hopper
between DeepGEMM's contiguous grouped GEMMs): inputs, reference, torch baseline.

x is the gate-and-up GEMM's output, the [M_sum, 2 * inter] workspace in the model's dtype
(gate in the first half of each row, up in the second); expert_ends [experts] (int32) is
DeepGEMM's prefix-sum layout: expert e's rows are [roundup(ends[e - 1], align), ends[e]),
the rows between segments and past the last one being slack.  Outputs: the e4m3 rows
[M_sum, inter] and the fp32 scales [M_sum, inter / group] (a column-major view, stride
(1, M_sum)), zero outside the segments.  For a live row: g = silu(gate) in fp32, rounded to
the input dtype; h = g * up, rounded to the input dtype; per group of `group` columns the
scale is max(|h|, 1e-10) / 448 rounded up to a power of two (UE8M0: exp2(ceil(log2))), and
the values are h / scale clamped to +-448 and rounded to e4m3 (nearest even)."""

from __future__ import annotations

import torch

from foreign.vllm_silu_mul_colmajor_quant.spec import (
    expert_counts,
    m_sum,
    segment_starts,
)

FP8 = torch.float8_e4m3fn
EPS = 1e-10
SENTINEL = 1e4  # outside the segments: a kernel that reads these rows is far off


def make_inputs(
    tokens: int, topk: int, experts: int, global_experts: int, inter: int, group: int,
    align: int, *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int, int]:  # fmt: skip
    """Live rows (spec.expert_counts, laid out by spec.segment_starts): gate values N(0, 2)
    and up values N(0, 1), a few up channels twenty times larger (so the groups' scales
    differ); every other row of the workspace holds 1e4.  Drawn on the device."""
    if inter % group or experts > global_experts:
        raise ValueError("inter a multiple of group, experts <= global_experts")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    rows = m_sum(tokens, topk, experts, align)
    counts = expert_counts(tokens, topk, experts, global_experts)
    starts = segment_starts(counts, align)
    x = torch.full((rows, 2 * inter), SENTINEL, dtype=dtype, device=device)
    outliers = torch.randint(
        inter, 2 * inter, (max(1, inter // 256),), generator=gen, device=device
    )
    for start, c in zip(starts, counts, strict=True):
        if not c:
            continue
        live = torch.randn(c, 2 * inter, generator=gen, device=device)
        live[:, :inter] *= 2.0
        live[:, outliers] *= 20.0
        x[start : start + c] = live.to(dtype)
    ends = torch.tensor(
        [s + c for s, c in zip(starts, counts, strict=True)], dtype=torch.int32, device=device
    )
    return x, ends, group, align


def _segments(ends: torch.Tensor, align: int) -> list[tuple[int, int]]:
    """(start, end) of each expert's rows, from the prefix-sum ends."""
    out, prev = [], 0
    for end in ends.tolist():
        start = -(-prev // align) * align
        out.append((start, end))
        prev = end
    return out


def _quantize(x: torch.Tensor, group: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows of x quantized: (e4m3 rows, fp32 scales [rows, inter / group])."""
    rows, width = x.shape
    inter = width // 2
    fp8_max = torch.finfo(FP8).max
    gate = x[:, :inter].float()
    g = (gate / (1.0 + torch.exp(-gate))).to(x.dtype)
    h = (g.float() * x[:, inter:].float()).to(x.dtype).float()
    hg = h.view(rows, inter // group, group)
    raw = hg.abs().amax(dim=-1).clamp_min(EPS) * (1.0 / fp8_max)
    scales = torch.exp2(torch.ceil(torch.log2(raw)))
    q = (hg / scales[..., None]).clamp(-fp8_max, fp8_max).to(FP8).view(rows, inter)
    return q, scales


def _column_major(scales: torch.Tensor) -> torch.Tensor:
    """The scales in vLLM's buffer: [groups, rows] allocated, viewed transposed."""
    return scales.t().contiguous().t()


def reference(
    x: torch.Tensor, ends: torch.Tensor, group: int, align: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Computed on the experts' segments only (the rest stays zero)."""
    rows, width = x.shape
    q = torch.zeros((rows, width // 2), dtype=FP8, device=x.device)
    scales = torch.zeros((rows, width // 2 // group), dtype=torch.float32, device=x.device)
    for start, end in _segments(ends, align):
        if end > start:
            q[start:end], scales[start:end] = _quantize(x[start:end], group)
    return q, _column_major(scales)


def torch_silu_mul_colmajor_quant(
    x: torch.Tensor, ends: torch.Tensor, group: int, align: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The same in torch's kernels over the whole workspace (silu, mul, amax, power-of-two
    scale, clamp, cast), rows outside the segments zeroed by a mask built on the device, the
    scales transposed into the column-major buffer."""
    rows = x.shape[0]
    q, scales = _quantize(x, group)
    ends = ends.long()
    prev = torch.cat([ends.new_zeros(1), ends[:-1]])
    starts = (prev + align - 1) // align * align
    row = torch.arange(rows, device=x.device)
    live = ((row[:, None] >= starts[None, :]) & (row[:, None] < ends[None, :])).any(dim=1)
    q = torch.where(live[:, None], q.float(), 0.0).to(FP8)
    scales = torch.where(live[:, None], scales, 0.0)
    return q, _column_major(scales)
