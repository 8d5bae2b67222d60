"""FlagGems' bucket-sort top-k for DeepSeek sparse attention (src/flag_gems/fused/DSA/
bin_topk.py, v5.0.2: `kernel_bucket_sort_topk` with `convert_to_uint16` and
`convert_to_uint32`), launched as FlagGems' `bucket_sort_topk_triton` launches it, so that
its launch choices are knobs.

One program per row of the indexer's [rows, s] fp32 scores, over the row's visible columns
[starts, ends): a first pass over the row BS columns at a time histograms the top byte of
each score's sortable uint32 key into 256 bins (tl.histogram), a reverse cumsum finds the
bin holding the (k + 1)-th largest; a second pass stores the columns above that bin straight
into the row's k outputs and compacts the bin's own columns into a 4096-entry scratch row.
Up to four rounds then re-histogram those candidates BSS at a time on the next key byte
(the first round on the top byte again), storing the columns above the new threshold and
compacting the rest, and that score's equals fill what is left.  Both compactions
place every column by a cumsum of its mask, so the output order is fixed (see
reference.py).

FlagGems' launch: grid (rows,), HISTOGRAM_SIZE 256 and SMEM_INPUT_SIZE 4096 literals, and
`@triton.autotune` keyed on (S, K) over ten configurations written in the file (BS 32 to
8192, BSS 32 to 1024, 1 to 8 warps, 1 to 3 stages); the fetched copy drops the tuner and
`triton_v1` takes the list's first entry (BS 32, BSS 32, 1 warp, 1 stage), as the other
autotuned FlagGems wraps do.  Knobs: `bs`, `bss`, `num_warps`, `num_stages`, None keeping
that entry.  FlagGems allocates the [rows, k] int32 output (filled with -1) and the
[rows, 4096] int32 scratch per call; here both are made in `prepare` (every row has at
least k visible columns, so all k outputs are written each call).  FlagGems prefers a TLE
kernel when FlagTree's triton.experimental.tle imports; stock Triton runs this one.

Under the CPU interpreter only, `~key` in `convert_to_uint32` is rewritten to
`key ^ 0xFFFFFFFF` (the interpreter's invert of a uint32 overflows numpy).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the first of the ten configurations FlagGems' @triton.autotune lists for this kernel
FLAGGEMS_LAUNCH = {"bs": 32, "bss": 32, "num_warps": 1, "num_stages": 1}
HISTOGRAM_SIZE = 256  # FlagGems' literal: one bin per key byte value
SMEM_INPUT_SIZE = 4096  # FlagGems' literal: threshold-bin candidates a row can hold


@dataclass(frozen=True)
class BucketTopkConfig:
    bs: int | None = None  # None: 32 columns per step of the two passes over the row
    bss: int | None = None  # None: 32 candidates per step of the refinement rounds
    num_warps: int | None = None  # None: 1
    num_stages: int | None = None  # None: 1


class _InvertAsXor(ast.NodeTransformer):
    """`~x` -> `x ^ tl.full(x.shape, 0xFFFFFFFF, tl.uint32)` (interpreter only)."""

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Invert):
            return node
        full = ast.parse(
            f"tl.full({ast.unparse(node.operand)}.shape, 0xFFFFFFFF, tl.uint32)", mode="eval"
        ).body
        return ast.copy_location(ast.BinOp(node.operand, ast.BitXor(), full), node)


def _module() -> Any:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return _common.load_source_rewritten("flaggems_bucket_topk", _InvertAsXor())
    return _common.load_source("flaggems_bucket_topk")


def _pick(cfg: BucketTopkConfig, name: str) -> int:
    value = getattr(cfg, name)
    return int(value) if value is not None else FLAGGEMS_LAUNCH[name]


def prepare(
    cfg: BucketTopkConfig,
    logits: torch.Tensor,
    starts: torch.Tensor,
    ends: torch.Tensor,
    k: int,
) -> Callable[[], torch.Tensor]:
    mod = _module()
    if logits.dim() != 2 or not logits.is_contiguous():
        raise ValueError("logits must be a contiguous [rows, s] tensor")
    rows, s = logits.shape
    bs, bss, warps, stages = (_pick(cfg, n) for n in ("bs", "bss", "num_warps", "num_stages"))
    indices = torch.full((rows, k), -1, dtype=torch.int32, device=logits.device)
    scratch = torch.zeros(rows, SMEM_INPUT_SIZE, dtype=torch.int32, device=logits.device)
    kernel = mod.kernel_bucket_sort_topk

    def launch() -> torch.Tensor:
        handle = kernel[(rows,)](
            logits, indices, scratch, starts, ends, s, k, HISTOGRAM_SIZE, SMEM_INPUT_SIZE,
            BS=bs, BSS=bss, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["kernel_bucket_sort_topk"],
            bs=bs, bss=bss, num_warps=warps, num_stages=stages, programs=rows,
        )  # fmt: skip
        return indices

    return launch
