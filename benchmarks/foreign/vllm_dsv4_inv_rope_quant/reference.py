"""DeepSeek-V4's fused inverse RoPE and block fp8 quantization of the attention output
(`fused_inv_rope_fp8_quant` as `deep_gemm_fp8_o_proj` calls it on Hopper before the grouped
`wo_a` fp8 einsum): inputs, reference, torch baseline.

o is the sparse attention's output for the rank's live heads, [tokens, heads, head_dim] in
the model's dtype: a view of FlashMLA's buffer, whose heads are padded to 64 or 128 (so its
token stride is padded_heads x head_dim); positions [tokens] (int64); cos_sin_cache
[context, rope_dim] fp32, cos in the first half of a row and sin in the second; groups: the
rank's `wo_a` groups (heads / groups consecutive heads each); group_size: the quantization
block (DeepGEMM's 128 on Hopper).  Per head the last rope_dim values are rotated back by
the token's angle (GPT-J pairs: even' = even cos + odd sin, odd' = odd cos - even sin, in
fp32); the first head_dim - rope_dim pass through.  Per group_size values the scale is
max(|x|, 1e-10) / 448 rounded up to a power of two (exp2(ceil(log2))), and the values are
x / scale clamped to +-448 and rounded to e4m3 (nearest even).  Outputs, as vLLM returns
them: the e4m3 values [tokens, groups, heads_per_group x head_dim], a view of a group-major
[groups, tokens, ...] buffer, and the fp32 scales [tokens, groups, heads_per_group x
head_dim / group_size], a view of a [groups, ..., tokens rounded up to 4] buffer whose token
axis is the fastest (DeepGEMM's MN-major, TMA-aligned layout)."""

from __future__ import annotations

import torch

FP8 = torch.float8_e4m3fn
EPS = 1e-10
THETA = 10000.0
SENTINEL = 1e4  # the padded heads of the attention buffer: a kernel that reads them is far off


def tma_aligned(tokens: int) -> int:
    """vLLM's `get_tma_aligned_size(tokens, 4)`: tokens rounded up to 16 bytes of fp32."""
    return -(-tokens // 4) * 4


def make_inputs(
    tokens: int, groups: int, heads_per_group: int, padded_heads: int, head_dim: int,
    rope_dim: int, group_size: int, context: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int, int]:  # fmt: skip
    """o: N(0, 1) values scaled per head from 0.05 to 2 (so the groups' scales differ), a
    few nope channels twenty times larger, as a view of the first heads of a padded buffer
    whose other heads hold 1e4; positions uniform below `context`; the rotary table of a
    theta-10000 RoPE over rope_dim, fp32 as vLLM's DeepSeek-V4 rotary keeps it.  Drawn on
    the device."""
    heads = groups * heads_per_group
    if heads > padded_heads or head_dim % group_size or rope_dim % 2 or rope_dim > head_dim:
        raise ValueError(
            "groups x heads_per_group <= padded_heads, head_dim a multiple of group_size, "
            "rope_dim even and at most head_dim"
        )
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    live = torch.randn(tokens, heads, head_dim, generator=gen, device=device)
    live *= torch.linspace(0.05, 2.0, heads, device=device)[None, :, None]
    nope = head_dim - rope_dim
    outliers = torch.randint(0, max(nope, 1), (max(1, head_dim // 128),), generator=gen,
                             device=device)  # fmt: skip
    live[:, :, outliers] *= 20.0
    buf = torch.full((tokens, padded_heads, head_dim), SENTINEL, dtype=dtype, device=device)
    buf[:, :heads] = live.to(dtype)
    o = buf[:, :heads]
    positions = torch.randint(0, context, (tokens,), generator=gen, device=device)
    inv_freq = 1.0 / THETA ** (
        torch.arange(0, rope_dim, 2, device=device, dtype=torch.float32) / rope_dim
    )
    angles = torch.arange(context, device=device, dtype=torch.float32)[:, None] * inv_freq
    cos_sin_cache = torch.cat([angles.cos(), angles.sin()], dim=-1).contiguous()
    return o, positions, cos_sin_cache, groups, group_size


def _rotate_back(o: torch.Tensor, positions: torch.Tensor, cache: torch.Tensor) -> torch.Tensor:
    """o in fp32 with its last rope_dim values of every head rotated back (GPT-J pairs)."""
    x = o.float().clone()
    rope_dim = cache.shape[-1]
    half = rope_dim // 2
    row = cache[positions.long()]  # [tokens, rope_dim]
    cos, sin = row[:, None, :half], row[:, None, half:]
    tail = x[..., x.shape[-1] - rope_dim :]
    even, odd = tail[..., 0::2].clone(), tail[..., 1::2].clone()
    tail[..., 0::2] = even * cos + odd * sin
    tail[..., 1::2] = odd * cos - even * sin
    return x


def _quantize(x: torch.Tensor, groups: int, group_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """x [tokens, heads, head_dim] fp32 -> (e4m3 [tokens, groups, d], fp32 scales
    [tokens, groups, d / group_size]), d = heads / groups x head_dim."""
    tokens, heads, head_dim = x.shape
    fp8_max = torch.finfo(FP8).max
    xg = x.reshape(tokens, groups, heads // groups * head_dim // group_size, group_size)
    raw = xg.abs().amax(dim=-1).clamp_min(EPS) * (1.0 / fp8_max)
    scales = torch.exp2(torch.ceil(torch.log2(raw)))
    q = (xg / scales[..., None]).clamp(-fp8_max, fp8_max).to(FP8)
    return q.reshape(tokens, groups, -1), scales


def _vllm_layout(q: torch.Tensor, scales: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The outputs in vLLM's buffers: values group-major, scales MN-major over the tokens
    rounded up to 4 (the padding rows zero), both viewed [tokens, groups, ...]."""
    tokens, groups, blocks = scales.shape
    aligned = tma_aligned(tokens)
    out = q.transpose(0, 1).contiguous().transpose(0, 1)
    flat = torch.zeros(groups * blocks * aligned, dtype=torch.float32, device=scales.device)
    buf = flat.as_strided((groups, tokens, blocks), (blocks * aligned, 1, aligned))
    buf.copy_(scales.transpose(0, 1))
    return out, buf.transpose(0, 1)


def reference(
    o: torch.Tensor, positions: torch.Tensor, cos_sin_cache: torch.Tensor, groups: int,
    group_size: int,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The rotation and the quantization in fp32, laid out as vLLM's kernel writes them."""
    q, scales = _quantize(_rotate_back(o, positions, cos_sin_cache), groups, group_size)
    return _vllm_layout(q, scales)


def torch_inv_rope_fp8_quant(
    o: torch.Tensor, positions: torch.Tensor, cos_sin_cache: torch.Tensor, groups: int,
    group_size: int,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same in torch's kernels: the table rows gathered, the rope pairs rotated in fp32,
    the group absmax, power-of-two scale, division, clamp and cast, then copies into the
    group-major values and the MN-major scale buffer."""
    return reference(o, positions, cos_sin_cache, groups, group_size)
