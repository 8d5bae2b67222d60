"""vLLM's ViT 3-D rotary setup (the `_vit_mrope_setup_kernel` launch of `VitMropeSetup`,
MiniMax-M3's vision tower): inputs, reference, torch baseline.

inv_freq_t, inv_freq_h and inv_freq_w are each axis's fp32 inverse frequencies (the rotary
dims of a head split in thirds, theta 10000) whatever the spec's dtype; cu_seqlens
[grids + 1] and grids [grids, 3] int32 are the batch's patch grids (frames, h, w) as vLLM
copies them to the device; spatial_merge is 2.  The outputs are cos and sin, each
[3, tokens, half_rot] fp32: plane a holds cos (sin) of axis a's position times its
frequencies in axis a's section of columns and zeros elsewhere (the kernel leaves those
columns unwritten; the launcher zeroes them once)."""

from __future__ import annotations

import torch

from foreign.vllm_vit_mrope_setup.spec import SPATIAL_MERGE, axis_dim, grid_shapes

THETA = 10000.0


def make_inputs(
    grids: int, frames: int, grid_h: int, grid_w: int, head_dim: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:  # fmt: skip
    """The grids of spec.grid_shapes (the last one a merge block smaller each way when
    there are several), their token boundaries and each axis's frequencies."""
    del dtype, seed  # fp32 frequencies, deterministic positions
    shapes = grid_shapes(grids, frames, grid_h, grid_w)
    cu = [0]
    for t, h, w in shapes:
        cu.append(cu[-1] + t * h * w)
    a = axis_dim(head_dim)
    inv = 1.0 / (THETA ** (torch.arange(0, a, 2, dtype=torch.float32) / a))
    return (
        inv.clone().to(device), inv.clone().to(device), inv.clone().to(device),
        torch.tensor(cu, dtype=torch.int32, device=device),
        torch.tensor(shapes, dtype=torch.int32, device=device), SPATIAL_MERGE,
    )  # fmt: skip


def _positions(t: int, h: int, w: int, m: int) -> tuple[torch.Tensor, ...]:
    """Each patch token's (frame, row, column), in the ViT's spatial-merge order: merge
    blocks row-major, m x m patches row-major inside each (the reference ViT's permute)."""
    hpos = torch.arange(h)[:, None].expand(h, w)
    wpos = torch.arange(w)[None, :].expand(h, w)
    hpos = hpos.reshape(h // m, m, w // m, m).permute(0, 2, 1, 3).flatten()
    wpos = wpos.reshape(h // m, m, w // m, m).permute(0, 2, 1, 3).flatten()
    tpos = torch.arange(t).repeat_interleave(h * w)
    return tpos, hpos.repeat(t), wpos.repeat(t)


def reference(
    inv_freq_t: torch.Tensor, inv_freq_h: torch.Tensor, inv_freq_w: torch.Tensor,
    cu_seqlens: torch.Tensor, grids: torch.Tensor, spatial_merge: int,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Positions from the grids, the fp32 angle (position x frequency, as the kernel
    rounds it), cos and sin in fp64, stored in fp32."""
    pos = [
        torch.cat(p)
        for p in zip(
            *(_positions(t, h, w, spatial_merge) for t, h, w in grids.tolist()), strict=True
        )
    ]
    freqs = [f.float().cpu() for f in (inv_freq_t, inv_freq_h, inv_freq_w)]
    half_rot = sum(f.numel() for f in freqs)
    n = int(cu_seqlens[-1])
    cos = torch.zeros(3, n, half_rot, dtype=torch.float32)
    sin = torch.zeros(3, n, half_rot, dtype=torch.float32)
    col = 0
    for axis, (p, f) in enumerate(zip(pos, freqs, strict=True)):
        angle = (p.float()[:, None] * f[None, :]).double()
        cos[axis, :, col : col + f.numel()] = angle.cos().float()
        sin[axis, :, col : col + f.numel()] = angle.sin().float()
        col += f.numel()
    dev = inv_freq_t.device
    return cos.to(dev), sin.to(dev)


def torch_vit_mrope_setup(
    inv_freq_t: torch.Tensor, inv_freq_h: torch.Tensor, inv_freq_w: torch.Tensor,
    cu_seqlens: torch.Tensor, grids: torch.Tensor, spatial_merge: int,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same by torch ops on the device: the positions decoded from a token index as
    the kernel does, one outer product per axis, cos and sin into zeroed planes."""
    n = int(cu_seqlens[-1])
    dev = inv_freq_t.device
    tok = torch.arange(n, device=dev, dtype=torch.int32)
    seg = torch.searchsorted(cu_seqlens[1:].contiguous(), tok, right=True)
    h = grids[seg, 1]
    w = grids[seg, 2]
    local = tok - cu_seqlens[seg]
    m = spatial_merge
    rem = local % (h * w)
    r = rem % (m * w)
    pos = (
        local // (h * w),
        (rem // (m * w)) * m + (r % (m * m)) // m,
        (r // (m * m)) * m + (r % (m * m)) % m,
    )
    freqs = (inv_freq_t, inv_freq_h, inv_freq_w)
    half_rot = sum(f.numel() for f in freqs)
    cos = torch.zeros(3, n, half_rot, device=dev, dtype=torch.float32)
    sin = torch.zeros(3, n, half_rot, device=dev, dtype=torch.float32)
    col = 0
    for axis, (p, f) in enumerate(zip(pos, freqs, strict=True)):
        angle = p.float()[:, None] * f[None, :]
        cos[axis, :, col : col + f.numel()] = angle.cos()
        sin[axis, :, col : col + f.numel()] = angle.sin()
        col += f.numel()
    return cos, sin
