"""FlagGems' Hopper GEMM (src/flag_gems/runtime/backend/_nvidia/hopper/ops/mm.py, v5.0.2:
`mm_kernel_general_host_tma`), launched as FlagGems' `general_mm` launches it on an sm90
GPU for TMA-compatible operands (fp16/bf16 with N and K multiples of 8), so that its launch
choices are knobs.

One program per BLOCK_M x BLOCK_N output tile, in GROUP_M order (GROUP_M row tiles share
a band of column tiles).  Each walks K in BLOCK_K steps: a [BLOCK_M, BLOCK_K] box of A
through A's host TMA descriptor (a row-major A; a column-major one as a [BLOCK_K, BLOCK_M]
box, transposed), and of B either a [BLOCK_K, BLOCK_N] box (row-major B) or, for the
column-major B that a bias-free linear passes (weight.t()), a [BLOCK_N, BLOCK_K] box of the
weight's rows transposed with tl.trans; one tl.dot into the fp32 accumulator per step
(allow_tf32=False), the tile converted to C's dtype and stored through C's descriptor.  No
masks: the descriptors zero-fill past the edges and clip the store.

FlagGems' launch: `@libtuner` (its autotuner) over `matmul_get_configs()`, 216
configurations (BLOCK_M 32 to 256, BLOCK_N and BLOCK_K 32 to 128, 2 to 4 stages, 4 or 8
warps, those over the shared-memory limit dropped), keyed on M, N, K, the strides and the
dtype, a pre-hook writing the block shapes into the descriptors; GROUP_M is 8.
`triton_v1` takes the list's first (32 x 32 tiles, 32-deep steps, 4 warps, 2 stages), as
the other FlagGems specs take their lists' first.  Knobs: `block_m`, `block_n`, `block_k`,
`group_m`, `num_warps`, `num_stages`, None keeping FlagGems'.  The descriptors are built
with the chosen block shapes, as the pre-hook sets them; FlagGems allocates the output and
builds the descriptors per call, here both are made in `prepare`.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from triton.tools.tensor_descriptor import TensorDescriptor

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# hopper/ops/mm.py's matmul_get_configs()[0] with general_mm's GROUP_M
FLAGGEMS_FIRST = {
    "block_m": 32,
    "block_n": 32,
    "block_k": 32,
    "group_m": 8,
    "num_warps": 4,
    "num_stages": 2,
}


@dataclass(frozen=True)
class MmTmaConfig:
    block_m: int | None = None  # None: FlagGems' first, 32 (rows of an output tile)
    block_n: int | None = None  # None: FlagGems' first, 32 (columns of an output tile)
    block_k: int | None = None  # None: FlagGems' first, 32 (the reduction step)
    group_m: int | None = None  # None: general_mm's 8 (row tiles per swizzle band)
    num_warps: int | None = None  # None: FlagGems' first, 4
    num_stages: int | None = None  # None: FlagGems' first, 2


class _CastForInterpreter(ast.NodeTransformer):
    """`x.to(dtype)` rewritten as `tl.cast(x, dtype)`: the K loop's `(k * BLOCK_K).to(
    tl.int32)` is a Python int under the CPU interpreter (its `range` yields ints), which has
    no `.to`; compiled Triton reads both forms alike.  Applied under the interpreter only."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "to" and len(node.args) == 1:
            cast = ast.Attribute(value=ast.Name(id="tl", ctx=ast.Load()), attr="cast")
            return ast.Call(func=cast, args=[f.value, node.args[0]], keywords=[])
        return node


def _pick(cfg: MmTmaConfig, name: str) -> int:
    value = getattr(cfg, name)
    return int(value) if value is not None else FLAGGEMS_FIRST[name]


def prepare(cfg: MmTmaConfig, a: torch.Tensor, b: torch.Tensor) -> Callable[[], torch.Tensor]:
    interpreting = os.environ.get("TRITON_INTERPRET") == "1"
    if interpreting:
        mod = _common.load_source_rewritten("flaggems_mm_tma", _CastForInterpreter())
    else:
        mod = _common.load_source("flaggems_mm_tma")
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError("a [m, k] and b [k, n] (aten::mm)")
    m, k = a.shape
    n = b.shape[1]
    if a.dtype != b.dtype or a.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise ValueError("a and b of one dtype, fp16, bf16 or fp32 (general_mm's TMA path)")
    bm, bn, bk = (_pick(cfg, x) for x in ("block_m", "block_n", "block_k"))
    group_m, warps, stages = (_pick(cfg, x) for x in ("group_m", "num_warps", "num_stages"))
    c = a.new_empty(m, n)
    a_row_major = a.stride(1) == 1
    b_row_major = b.stride(1) == 1
    # as general_mm builds them, with the block shapes matmul_tma_set_block_size_hook writes
    if a_row_major:
        a_desc = TensorDescriptor(a, list(a.shape), list(a.stride()), [bm, bk])
    else:
        a_desc = TensorDescriptor(a, list(a.T.shape), list(a.T.stride()), [bk, bm])
    if b_row_major:
        b_desc = TensorDescriptor(b, list(b.shape), list(b.stride()), [bk, bn])
    else:
        b_desc = TensorDescriptor(b, list(b.T.shape), list(b.T.stride()), [bn, bk])
    c_desc = TensorDescriptor(c, list(c.shape), list(c.stride()), [bm, bn])
    dtype_str = str(a.dtype).split(".")[-1]
    grid = (-(-m // bm) * -(-n // bn),)
    # the kernel's unused `enable_warp_specialization=True` is a plain (not constexpr) bool
    # argument, which the CPU interpreter cannot convert (a 32-bit numpy bool into int1);
    # there only, it is passed as the int 1.  On the GPU it keeps its default, as upstream.
    extra = {"enable_warp_specialization": 1} if interpreting else {}

    def launch() -> torch.Tensor:
        handle = mod.mm_kernel_general_host_tma[grid](
            a_desc, b_desc, c_desc, m, n, k,
            a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group_m,
            A_ROW_MAJOR=a_row_major, B_ROW_MAJOR=b_row_major, dtype=dtype_str,
            num_warps=warps, num_stages=stages, **extra,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["mm_kernel_general_host_tma"],
            block_m=bm, block_n=bn, block_k=bk, group_m=group_m, num_warps=warps,
            num_stages=stages, a_row_major=a_row_major, b_row_major=b_row_major,
        )  # fmt: skip
        return c

    return launch
