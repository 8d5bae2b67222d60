"""Qwen3-VL's bilinear position-embedding interpolation (`triton_pos_embed_interpolate`, as
the vision tower's `fast_pos_embed_interpolate` calls it for one (t, h, w) grid): inputs,
reference, torch baseline.

embed is the vision tower's learned position table [grid_side ** 2, hidden] in the model's
dtype (Qwen3-VL's 48 x 48 = 2304 positions of 1152 columns).  The output is the table
bilinearly resized to the image's h x w patch grid, in spatial-merge order (each 2 x 2 merge
block's four patches consecutive), repeated for each of the t frames: [t * h * w, hidden]."""

from __future__ import annotations

import torch

MERGE = 2  # Qwen3-VL's spatial_merge_size


def make_inputs(
    frames: int,
    grid_h: int,
    grid_w: int,
    hidden: int,
    grid_side: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, int, int, int, int, int]:
    """A normal position table (standard deviation 0.5) and the grid, as the tower passes
    them: (embed, t, h, w, grid_side, merge)."""
    if grid_h % MERGE or grid_w % MERGE:
        raise ValueError(f"grid_h and grid_w must be multiples of the merge size {MERGE}")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    embed = torch.randn(grid_side * grid_side, hidden, generator=gen) * 0.5
    return embed.to(dtype=dtype, device=device), frames, grid_h, grid_w, grid_side, MERGE


def _axis(n: int, side: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Each output row's (or column's) two source indices and the far one's weight, fp64."""
    pos = torch.arange(n, dtype=torch.float64) * ((side - 1) / (n - 1) if n > 1 else 0.0)
    lo = pos.floor().long().clamp(max=side - 1)
    hi = (lo + 1).clamp(max=side - 1)
    return lo, hi, pos - lo.double()


def reference(embed: torch.Tensor, t: int, h: int, w: int, side: int, merge: int) -> torch.Tensor:
    """The four neighbours of each patch's source point blended in fp64, put in merge order,
    repeated per frame, rounded to the table's dtype."""
    table = embed.double().cpu().view(side, side, -1)
    h_lo, h_hi, dh = _axis(h, side)
    w_lo, w_hi, dw = _axis(w, side)
    dh, dw = dh[:, None, None], dw[None, :, None]
    grid = (
        (1 - dh) * (1 - dw) * table[h_lo][:, w_lo]
        + (1 - dh) * dw * table[h_lo][:, w_hi]
        + dh * (1 - dw) * table[h_hi][:, w_lo]
        + dh * dw * table[h_hi][:, w_hi]
    )  # [h, w, hidden]
    hidden = grid.shape[-1]
    merged = grid.view(h // merge, merge, w // merge, merge, hidden).permute(0, 2, 1, 3, 4)
    out = merged.reshape(1, h * w, hidden).expand(t, -1, -1).reshape(t * h * w, hidden)
    return out.to(device=embed.device, dtype=embed.dtype)


def torch_pos_embed_interpolate(
    embed: torch.Tensor, t: int, h: int, w: int, side: int, merge: int
) -> torch.Tensor:
    """vLLM's `pos_embed_interpolate_native` (its path without Triton): four gathers of the
    table, weighted and summed in the dtype, permuted to merge order and repeated."""
    dev = embed.device
    h_idx = torch.linspace(0, side - 1, h, dtype=torch.float32, device=dev)
    w_idx = torch.linspace(0, side - 1, w, dtype=torch.float32, device=dev)
    h_f, w_f = h_idx.to(torch.long), w_idx.to(torch.long)
    h_c, w_c = (h_f + 1).clamp(max=side - 1), (w_f + 1).clamp(max=side - 1)
    dh_g, dw_g = torch.meshgrid(h_idx - h_f, w_idx - w_f, indexing="ij")
    hf_g, wf_g = torch.meshgrid(h_f, w_f, indexing="ij")
    hc_g, wc_g = torch.meshgrid(h_c, w_c, indexing="ij")
    w11 = dh_g * dw_g
    w10 = dh_g - w11
    w01 = dw_g - w11
    w00 = 1 - dh_g - w01
    hg = torch.stack([hf_g, hf_g, hc_g, hc_g]) * side
    wg = torch.stack([wf_g, wc_g, wf_g, wc_g])
    idx = (hg + wg).reshape(4, -1)
    weights = torch.stack([w00, w01, w10, w11]).reshape(4, -1, 1).to(embed.dtype)
    combined = (embed[idx] * weights).sum(dim=0)
    hidden = embed.shape[1]
    combined = combined.reshape(h // merge, merge, w // merge, merge, hidden)
    combined = combined.permute(0, 2, 1, 3, 4).reshape(1, -1, hidden)
    return combined.expand(t, -1, -1).reshape(-1, hidden)
