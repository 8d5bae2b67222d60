"""SGLang's TMA alignment of fp32 group scales (the two `tma_align_input_scale` calls of the
DeepGEMM MoE runner's contiguous path, one MoE layer after DeepEP's normal dispatch on
Hopper): inputs, reference, torch baseline.

The rank holds `rows` rows in DeepGEMM's expert-contiguous layout (each local expert's
received slots, its segment padded to a multiple of 128): hidden_scale [rows, hidden / 128]
fp32, one scale per 128-column group of the e4m3 rows that `ep_scatter` laid out, and
down_scale [rows, inter / 128] fp32, the scales of the SiLU-and-mul output's per-token-group
quantization, both row-major.  The outputs are the same values in the layout DeepGEMM's TMA
reads on Hopper: each a [rows, K / 128] view, with strides 1 and padded rows, of a
[K / 128, padded rows] buffer, the rows rounded up to 4 (16 bytes of fp32).  Only the
layout changes; the check compares the values (the padding columns are outside the
views)."""

from __future__ import annotations

import torch

GROUP = 128  # one fp32 scale per 128 columns (DeepGEMM's fp8 block)
FP8_MAX = 448.0
TMA_ALIGNMENT_BYTES = 16  # DeepGEMM's M-stride alignment for the scales' TMA


def make_inputs(
    rows: int, hidden: int, inter: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """(hidden_scale, down_scale), fp32 whatever `dtype` is (the scales of fp8 rows), drawn
    on the device: a group's absolute maximum over 448, the maximum log-normal around 4 with
    a per-row factor (a token's magnitude) and a per-group one, so that every scale differs
    and a misplaced one shows.  The padding rows of each expert's segment hold scales like
    the others (SGLang leaves them as torch.empty gave them; they are moved all the same)."""
    del dtype  # the scales are fp32 for any activation dtype
    for name, size in (("hidden", hidden), ("inter", inter)):
        if size % GROUP:
            raise ValueError(f"{name} must be a multiple of {GROUP} (one scale per group)")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))

    def scales(groups: int) -> torch.Tensor:
        row = 0.5 * torch.randn(rows, 1, generator=gen, device=device)
        group = 0.3 * torch.randn(rows, groups, generator=gen, device=device)
        return torch.exp(row + group) * (4.0 / FP8_MAX)

    return scales(hidden // GROUP), scales(inter // GROUP)


def reference(
    hidden_scale: torch.Tensor, down_scale: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The values as they are (a layout change), row-major copies."""
    return hidden_scale.clone(), down_scale.clone()


def _tma_aligned(x: torch.Tensor) -> torch.Tensor:
    m, k = x.shape
    align = TMA_ALIGNMENT_BYTES // x.element_size()
    out = torch.empty((k, -(-m // align) * align), dtype=x.dtype, device=x.device)
    out[:, :m].copy_(x.t())
    return out.t()[:m]


def torch_tma_align(
    hidden_scale: torch.Tensor, down_scale: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The same layout by torch: each [K / 128, padded rows] buffer allocated and filled by
    one strided copy_ of the transposed scales, then returned transposed (the layout that
    DeepGEMM's get_mn_major_tma_aligned_tensor gives); the hidden scales, then the down
    scales."""
    return _tma_aligned(hidden_scale), _tma_aligned(down_scale)
