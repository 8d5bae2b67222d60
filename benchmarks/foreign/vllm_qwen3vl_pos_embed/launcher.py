"""Qwen3-VL's bilinear position-embedding interpolation (vllm/model_executor/models/
qwen3_vl.py, v0.34.0: `_bilinear_pos_embed_kernel`), launched as vLLM's
`triton_pos_embed_interpolate` launches it, so that its launch choices are knobs.

The grid is one program per output row, t * h * w of them: each decodes its patch's row and
column in spatial-merge order, maps them onto the grid_side x grid_side table (scale
(side - 1) / (h - 1)), takes the four neighbours' bilinear weights in fp32, casts them to
the output dtype and walks the hidden size in BLOCK_D steps, loading four table rows and
storing their weighted sum (each frame's rows are computed again, as vLLM does).

vLLM's launch: BLOCK_D the next power of two of the hidden size (2048 for 1152: one masked
step), Triton's default 4 warps and 3 stages (it passes none; no autotune).  Knobs: BLOCK_D
(smaller tiles loop over the hidden size), the warps and the stages (the loop's pipeline),
None keeping vLLM's choice.  vLLM allocates the output per call; here it is made in
`prepare`.

The kernel sits under `if HAS_TRITON:` in a module that imports vLLM, so the fetch keeps
the whole module and `load_kernel` copies the function out with ast (dedented, with
`triton` and `tl` imported) into a temporary file that it imports once.
"""

from __future__ import annotations

import ast
import sys
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
KERNEL = "_bilinear_pos_embed_kernel"


def load_kernel() -> ModuleType:
    """The kernel, copied verbatim (dedented) from under the module's `if HAS_TRITON:`."""
    name = "_kbopt_third_party_vllm_qwen3vl_pos_embed_kernel"
    if name in sys.modules:
        return sys.modules[name]
    path = _common.source_path("vllm_qwen3vl_pos_embed")
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing; fetch it with: {_common.fetch_hint('vllm_qwen3vl_pos_embed')}"
        )
    text = path.read_text()
    lines = text.splitlines()
    found = None
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef) and node.name == KERNEL:
            found = node
    if found is None or not found.decorator_list:
        raise ImportError(f"{path}: no {KERNEL}")
    assert found.end_lineno is not None
    first = found.decorator_list[0].lineno
    body = textwrap.dedent("\n".join(lines[first - 1 : found.end_lineno]))
    out = Path(tempfile.mkdtemp(prefix="kbopt_qwen3vl_pos_embed_")) / "pos_embed_kernel.py"
    out.write_text("import triton\nimport triton.language as tl\n\n\n" + body + "\n")
    from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

    fix_scalar_index_if_interpreting()
    return _common.import_file(name, out)


@dataclass(frozen=True)
class PosEmbedConfig:
    block_d: int | None = None  # None: vLLM's next power of two of the hidden size
    num_warps: int | None = None  # None: Triton's default (4)
    num_stages: int | None = None  # None: Triton's default (3)


def prepare(
    cfg: PosEmbedConfig, embed: torch.Tensor, t: int, h: int, w: int, side: int, merge: int
) -> Callable[[], torch.Tensor]:
    mod = load_kernel()
    if embed.dim() != 2 or embed.shape[0] != side * side or not embed.is_contiguous():
        raise ValueError("embed must be a contiguous [grid_side ** 2, hidden] table")
    if h % merge or w % merge:
        raise ValueError(f"h={h} and w={w} must be divisible by the merge size {merge}")
    hidden = embed.shape[1]
    block_d = cfg.block_d or triton.next_power_of_2(hidden)
    total = t * h * w
    out = torch.empty(total, hidden, device=embed.device, dtype=embed.dtype)
    h_scale = float(side - 1) / float(h - 1) if h > 1 else 0.0
    w_scale = float(side - 1) / float(w - 1) if w > 1 else 0.0
    extra: dict[str, int] = {}
    if cfg.num_warps is not None:
        extra["num_warps"] = cfg.num_warps
    if cfg.num_stages is not None:
        extra["num_stages"] = cfg.num_stages
    grid = (total,)

    def launch() -> torch.Tensor:
        with _common.interpreter_float_scalars():
            handle = getattr(mod, KERNEL)[grid](
                embed, out, h, w, h_scale, w_scale, side, merge, hidden, block_d, **extra,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=[KERNEL], block_d=block_d,
            num_warps=cfg.num_warps or 4, num_stages=cfg.num_stages or 3, programs=total,
        )  # fmt: skip
        return out

    return launch
