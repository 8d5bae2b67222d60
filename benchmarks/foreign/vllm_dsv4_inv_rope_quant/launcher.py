"""DeepSeek-V4's fused inverse RoPE and block fp8 quantization of the attention output
(vllm/models/deepseek_v4/common/ops/fused_inv_rope_fp8_quant.py, v0.34.0:
`FusedInvRopeFP8QuantKernel.kernel`), launched as vLLM's `fused_inv_rope_fp8_quant` launches
it for `deep_gemm_fp8_o_proj` on Hopper, so that its launch choices are knobs.

DeepSeek-V4's attention applies RoPE to the last 64 of each 512-wide head on the way in and
takes it back off the output: before the grouped `wo_a` projection (one fp8 GEMM per group of
8 heads, DeepGEMM's `fp8_einsum` with recipe (1, 128, 128) on SM90) the attention output is
rotated back by each token's angle and quantized per 128 values.  The grid is (tokens
rounded up to 4, heads / BLOCK_H): the program (t, j) loads BLOCK_H consecutive heads of
token t (a [BLOCK_H, 512] tile, fp32), splits it into (even, odd) pairs, rotates the pairs
past the 448 nope columns by the token's cos/sin row (GPT-J inverse: even cos + odd sin,
odd cos - even sin; the nope pairs' table loads masked to cos 1, sin 0), takes each 128-value
block's absolute maximum (at least 1e-10), rounds max / 448 up to a power of two (log2,
ceil, exp2), stores the tile clamped and cast to e4m3 into its group's row of a group-major
[groups, tokens, 8 x 512] buffer, and the BLOCK_H x 4 fp32 scales into a scale buffer whose
token axis is the fastest, its stride the tokens rounded up to 4 (DeepGEMM's MN-major,
TMA-aligned layout); the programs of the padding tokens store zero scales and return.  No
loop, no tl.dot.

vLLM's launch (SM90): BLOCK_H = gcd(heads per group, 4) (4 for DeepSeek-V4's 8, so a
program keeps 4 KiB of bf16 in flight; "a program per (token, head) keeps too few bytes in
flight to saturate HBM on large prefills"), num_warps 4 below 2048 programs else 1 ("few
programs (decode): more warps per program for latency; many (prefill): one warp each, so
more programs stay resident"), num_stages 1, fp32 scales (tma_aligned_scales off: SM90 keeps
block-row fp32 scales; SM100 packs UE8M0 bytes), quantize on (an fp8 `wo_a`), launch_pdl on
Hopper and later (`is_arch_support_pdl`; off on other devices here).  No autotune or table.
Knobs: the heads per program and the warps, None keeping vLLM's; no stage knob (the kernel
has no loop, so the PTX is the same at any num_stages); heads per program must be a power of
two dividing the heads per group (the tile is a tl.arange), and a tile of more than 256 fp32
values a thread is refused (MAX_PER_THREAD).  vLLM allocates both buffers per call
(torch.empty in its custom op); here they are made in `prepare`.

The kernel is a @staticmethod of a class in a module that imports vLLM, out of the fetch's
extract mode: the fetch keeps the whole module and `load_kernel` copies the method out with
ast (from its @triton.jit, dedented, with `triton` and `tl` imported) into a temporary file
that it imports once.  Under the CPU interpreter (tests only) the fp32 -> e4m3 cast is done
by torch, as for `sglang_fp8_group_quant`.
"""

from __future__ import annotations

import ast
import math
import sys
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from foreign import _common
from foreign.sglang_fp8_group_quant.launcher import interpreter_fp8_cast

LAST_INFO: dict[str, Any] = {}
SOURCE = "vllm_dsv4_inv_rope_quant"
CLASS = "FusedInvRopeFP8QuantKernel"
KERNEL = "kernel"
FP8 = torch.float8_e4m3fn
EPS = 1e-10  # vLLM's eps in the launch
VLLM_HEADS_CAP = 4  # BLOCK_H = gcd(heads_per_group, 4)
VLLM_FEW_PROGRAMS = 2048  # below this many programs 4 warps, else 1
VLLM_WARPS = (4, 1)
VLLM_STAGES = 1
# A [BLOCK_H, head_dim] fp32 tile over more than 256 values a thread spills; vLLM's holds 64
# (4 x 512 over 1 warp, prefill) or 16 (over 4 warps, decode).
MAX_PER_THREAD = 256


@dataclass(frozen=True)
class InvRopeQuantConfig:
    block_h: int | None = None  # None: vLLM's gcd(heads_per_group, 4)
    num_warps: int | None = None  # None: vLLM's 4 below 2048 programs, else 1


def load_kernel() -> ModuleType:
    """The kernel, copied verbatim (dedented) from its class in the fetched module."""
    name = f"_kbopt_third_party_{SOURCE}_kernel"
    if name in sys.modules:
        return sys.modules[name]
    path = _common.source_path(SOURCE)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing; fetch it with: {_common.fetch_hint(SOURCE)}")
    text = path.read_text()
    lines = text.splitlines()
    found = None
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef) and node.name == CLASS:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == KERNEL:
                    found = item
    if found is None:
        raise ImportError(f"{path}: no {CLASS}.{KERNEL}")
    jit = [d for d in found.decorator_list if ast.unparse(d).startswith("triton.jit")]
    if not jit or found.end_lineno is None:
        raise ImportError(f"{path}: {CLASS}.{KERNEL} is not a @triton.jit function")
    body = textwrap.dedent("\n".join(lines[jit[0].lineno - 1 : found.end_lineno]))
    out = Path(tempfile.mkdtemp(prefix="kbopt_dsv4_inv_rope_quant_")) / "inv_rope_kernel.py"
    out.write_text("import triton\nimport triton.language as tl\n\n\n" + body + "\n")
    from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

    fix_scalar_index_if_interpreting()
    return _common.import_file(name, out)


def vllm_pdl(device: torch.device) -> bool:
    """vLLM's `current_platform.is_arch_support_pdl()`: CUDA at compute capability 9+."""
    if device.type != "cuda":
        return False
    return torch.cuda.get_device_capability(device)[0] >= 9


def vllm_block_h(heads_per_group: int) -> int:
    """Heads per program as `_heads_per_program` picks them (they share one output group)."""
    return math.gcd(heads_per_group, VLLM_HEADS_CAP)


def vllm_warps(programs: int) -> int:
    """Warps as `_fused_inv_rope_fp8_quant_kernel_impl` picks them from the grid's size."""
    return VLLM_WARPS[0] if programs < VLLM_FEW_PROGRAMS else VLLM_WARPS[1]


def tma_aligned(tokens: int) -> int:
    """vLLM's `get_tma_aligned_size(tokens, 4)`: the scale buffer's token stride."""
    return -(-tokens // 4) * 4


def prepare(
    cfg: InvRopeQuantConfig, o: torch.Tensor, positions: torch.Tensor,
    cos_sin_cache: torch.Tensor, groups: int, group_size: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = load_kernel()
    if o.dim() != 3 or o.stride(-1) != 1:
        raise ValueError("o must be [tokens, heads, head_dim] with unit-stride rows")
    tokens, heads, head_dim = o.shape
    rope_dim = cos_sin_cache.shape[-1]
    if heads % groups or head_dim % group_size or rope_dim % 2 or rope_dim > head_dim:
        raise ValueError(
            "heads a multiple of groups, head_dim of group_size, rope_dim even (vLLM asserts)"
        )
    if cos_sin_cache.dtype != torch.float32 or positions.shape != (tokens,):
        raise ValueError("an fp32 [positions, rope_dim] table and one position a token")
    heads_per_group = heads // groups
    block_h = cfg.block_h or vllm_block_h(heads_per_group)
    if block_h & (block_h - 1) or heads_per_group % block_h:
        raise ValueError(
            f"heads per program ({block_h}) must be a power of two dividing the "
            f"{heads_per_group} heads of a group"
        )
    aligned = tma_aligned(tokens)
    grid = (aligned, heads // block_h)
    warps = cfg.num_warps or vllm_warps(grid[0] * grid[1])
    if block_h * head_dim > MAX_PER_THREAD * 32 * warps:
        raise ValueError(
            f"a {block_h} x {head_dim} tile over {warps} warps holds more than "
            f"{MAX_PER_THREAD} fp32 values per thread"
        )
    chunks = head_dim // group_size
    d = heads_per_group * head_dim
    blocks = d // group_size
    pdl = vllm_pdl(o.device)
    out_buf = torch.empty((groups, tokens, d), device=o.device, dtype=FP8)
    scale_buf = torch.empty(groups * blocks * aligned, device=o.device, dtype=torch.float32)
    scale_buf = scale_buf.as_strided((groups, tokens, blocks), (blocks * aligned, 1, aligned))
    fp8_max = torch.finfo(FP8).max

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        with interpreter_fp8_cast():
            handle = getattr(mod, KERNEL)[grid](
                o, positions, cos_sin_cache, out_buf, scale_buf, tokens,
                heads_per_group=heads_per_group, o_stride_token=o.stride(0),
                o_stride_head=o.stride(1), cache_stride_pos=cos_sin_cache.stride(0),
                out_stride_group=out_buf.stride(0), out_stride_token=out_buf.stride(1),
                scale_stride_group=scale_buf.stride(0), scale_stride_k=scale_buf.stride(2),
                fp8_max=fp8_max, eps=EPS, QUANT_GROUP_SIZE=group_size, CHUNKS_PER_HEAD=chunks,
                NOPE_DIM=head_dim - rope_dim, HALF_ROPE=rope_dim // 2, QUANTIZE=True,
                TMA_ALIGNED_SCALES=False, BLOCK_H=block_h, launch_pdl=pdl,
                num_stages=VLLM_STAGES, num_warps=warps,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=[KERNEL], block_h=block_h,
            num_warps=warps, num_stages=VLLM_STAGES, programs=grid[0] * grid[1],
            aligned_tokens=aligned, launch_pdl=pdl,
        )  # fmt: skip
        return out_buf.transpose(0, 1), scale_buf.transpose(0, 1)

    return launch
