"""SGLang's masked SiLU-and-mul with per-group fp8 quantization (DeepEP low-latency MoE,
between DeepGEMM's masked grouped GEMMs): inputs, reference, torch baseline.

x is the gate-and-up output [experts, capacity, 2 * inter] in the model's dtype (gate in the
first half of each row, up in the second); masked_m [experts] (int32) holds each local
expert's valid tokens, the rows past it being padding.  Outputs: the e4m3 rows [experts,
capacity, inter] and the fp32 scales [experts, capacity, inter / group], zero on padded
rows.  For a valid row: g = silu(gate) in fp32, rounded to the input dtype; h = up * g,
rounded to the input dtype; per group of `group` columns the scale is max(|h|, 1e-10) /
448 and the values are h / scale clamped to +-448 and rounded to e4m3 (nearest even)."""

from __future__ import annotations

import torch

from foreign.sglang_silu_mul_masked_quant.spec import expert_counts

FP8 = torch.float8_e4m3fn


def make_inputs(
    experts: int, capacity: int, tokens: int, inter: int, group: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int]:  # fmt: skip
    """Valid rows (spec.expert_counts): gate values N(0, 2) and up values N(0, 1) with a
    few outlier channels (so the groups' scales differ); padded rows hold 1e4, which the
    kernel must not read."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.full((experts, capacity, 2 * inter), 1e4, dtype=dtype)
    outliers = torch.randint(inter, 2 * inter, (max(1, inter // 256),), generator=gen)
    counts = expert_counts(experts, tokens, capacity)
    for e, c in enumerate(counts):
        rows = torch.randn(c, 2 * inter, generator=gen)
        rows[:, :inter] *= 2.0
        rows[:, outliers] *= 20.0
        x[e, :c] = rows.to(dtype)
    masked_m = torch.tensor(counts, dtype=torch.int32)
    return x.to(device), masked_m.to(device), group


def _quantize(
    x: torch.Tensor, masked_m: torch.Tensor, group: int
) -> tuple[torch.Tensor, torch.Tensor]:
    experts, capacity, width = x.shape
    inter = width // 2
    info = torch.finfo(FP8)
    gate = x[..., :inter].float()
    g = (gate / (1.0 + torch.exp(-gate))).to(x.dtype)
    h = (x[..., inter:].float() * g.float()).to(x.dtype).float()
    hg = h.view(experts, capacity, inter // group, group)
    scales = hg.abs().amax(dim=-1, keepdim=True).clamp_min(1e-10) / info.max
    q = (hg / scales).clamp(-info.max, info.max).to(FP8).view(experts, capacity, inter)
    scales = scales.view(experts, capacity, inter // group)
    valid = torch.arange(capacity, device=x.device)[None, :] < masked_m.long()[:, None]
    q = torch.where(valid[..., None], q.float(), 0.0).to(FP8)
    scales = torch.where(valid[..., None], scales, 0.0)
    return q, scales


def reference(
    x: torch.Tensor, masked_m: torch.Tensor, group: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Computed on the rows up to the longest count only (the rest stay zero)."""
    experts, capacity, width = x.shape
    rows = int(masked_m.max()) if masked_m.numel() else 0
    q = torch.zeros((experts, capacity, width // 2), dtype=FP8, device=x.device)
    scales = torch.zeros(
        (experts, capacity, width // 2 // group), dtype=torch.float32, device=x.device
    )
    q[:, :rows], scales[:, :rows] = _quantize(x[:, :rows], masked_m, group)
    return q, scales


def torch_silu_mul_quant(
    x: torch.Tensor, masked_m: torch.Tensor, group: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The same in torch's kernels over the whole padded buffer (silu, mul, amax, scale,
    clamp, cast), padded rows zeroed by a mask."""
    return _quantize(x, masked_m, group)
