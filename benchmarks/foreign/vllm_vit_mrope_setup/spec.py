"""vLLM's ViT 3-D rotary setup (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
vllm_vit_mrope_setup` and never committed.

Why this one as the set's table generator: a vision transformer with 3-D rotary positions
(MiniMax-M3's vision tower, which vLLM 0.34.0 serves; Qwen2-VL-style patch 14, merge 2,
rotary dims split in thirds over frame, row and column) needs, before every encoder
forward, each patch token's cos and sin for the three axes.  vLLM builds them in one launch
with no cos/sin cache: one program per 32 patch tokens decodes each token's (frame, row,
column) from its flat index and the grids (a scalar walk over every grid's boundary, then
div/mod in the spatial-merge order) and stores fp32 cos and sin of position x inverse
frequency for each axis's section of columns.  Nothing is read but a few hundred bytes of
frequencies and grids; the work is the integer decode and 2 x half_rot transcendental
evaluations per token, and the floor is writing the cos and sin columns once.  Both trials
use a 1280-wide, 16-head ViT (head_dim 80: 13 frequencies per axis, a 39-column half, a
64-wide tile): one 896 x 896 image (64 x 64 patches, 4096 tokens, 128 programs) and the
worst-case detail=high batch of four 3584 x 3584 images (256 x 256 patches each, the last
254 x 254 here: 261,124 tokens, 8,161 programs walking 4 grids each).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_vit_mrope_setup")

CONTEXTS = ("elementwise", "memory-bound")
SPATIAL_MERGE = 2  # the ViT's spatial merge (2 x 2 patches per LLM token)
FP32 = 4


def axis_dim(head_dim: int) -> int:
    """Each axis's rotary dims, as MiniMax-M3's vision tower splits a head's."""
    rope_dims = 2 * (head_dim // 2)
    return 2 * ((rope_dims // 3) // 2)


def grid_shapes(grids: int, frames: int, grid_h: int, grid_w: int) -> list[list[int]]:
    """Each grid's (frames, h, w): all frames x grid_h x grid_w, except that the last one is
    a merge block smaller each way when there are several (so that the grids differ)."""
    if grid_h % SPATIAL_MERGE or grid_w % SPATIAL_MERGE:
        raise ValueError("grid_h and grid_w must be multiples of the spatial merge (2)")
    shapes = [[frames, grid_h, grid_w] for _ in range(grids)]
    if grids > 1 and grid_h > SPATIAL_MERGE and grid_w > SPATIAL_MERGE:
        shapes[-1] = [frames, grid_h - SPATIAL_MERGE, grid_w - SPATIAL_MERGE]
    return shapes


def tokens(d: Mapping[str, int]) -> int:
    return sum(
        t * h * w for t, h, w in grid_shapes(d["grids"], d["frames"], d["grid_h"], d["grid_w"])
    )


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The written cos and sin columns (each plane's own axis section: 3 x half_rot / 3 x
    2 fp32 per token); the frequencies and the grids (bytes) not counted."""
    del dtype
    half_rot = 3 * (axis_dim(d["head_dim"]) // 2)
    return 2 * tokens(d) * half_rot * FP32


def flops(d: Mapping[str, int]) -> int:
    """One multiply per written angle (its cos and sin not counted as FLOPs)."""
    return tokens(d) * 3 * (axis_dim(d["head_dim"]) // 2)


_make_inputs = _common.forward_make_inputs(
    "vllm_vit_mrope_setup", "grids", "frames", "grid_h", "grid_w", "head_dim"
)
_reference = _common.forward_reference("vllm_vit_mrope_setup")
_baselines = _common.forward_baselines(
    "vllm_vit_mrope_setup",
    (
        "torch",
        "torch",
        "the same by torch ops: each token's grid by searchsorted, its positions by integer "
        "ops, one outer product per axis, cos and sin into zeroed planes",
        "torch_vit_mrope_setup",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_vit_mrope_setup.launcher")


TRITON_KNOBS = (
    Knob("block_n", "int", (None, 8, 16, 32, 64, 128), "rows_per_program",
         "patch tokens per program (the rows of its [tokens, rotary half] tile); None: "
         "vLLM's 32"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: vLLM's 8"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_vit_mrope_setup",
    description=(
        "vLLM's ViT 3-D rotary setup (v0.34.0, _vit_mrope_setup_kernel): one program per 32 "
        "patch tokens decodes each token's frame, row and column from the grids in the "
        "spatial-merge order and stores fp32 cos and sin of position x inverse frequency "
        "for each axis's section of the rotary half"
    ),
    dims=(
        Dim("grids", "images (patch grids) in the encoder batch", "batch"),
        Dim("frames", "temporal patches per grid (1 for an image)"),
        Dim("grid_h", "patch rows per grid (a multiple of the merge, 2)"),
        Dim("grid_w", "patch columns per grid (a multiple of the merge, 2)"),
        Dim("head_dim", "the ViT's head size (rotary dims split in thirds)", "head_dim"),
    ),
    trials=(
        Trial(
            "minimax_m3_vit_4x3584px",
            {"grids": 4, "frames": 1, "grid_h": 256, "grid_w": 256, "head_dim": 80},
            "MiniMax-M3's worst-case detail=high batch: four 3584 x 3584 images (256 x 256 "
            "patches of 14 px, the last 254 x 254 here), head_dim 80: 261,124 tokens, "
            "8,161 programs, 81 MB of cos and sin written",
        ),
        Trial(
            "minimax_m3_vit_896px",
            {"grids": 1, "frames": 1, "grid_h": 64, "grid_w": 64, "head_dim": 80},
            "one 896 x 896 image (64 x 64 patches), head_dim 80: 4,096 tokens, 128 "
            "programs, 1.3 MB written",
        ),
    ),
    backoff_dim="grids",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the same fp32 angle; the GPU's fp32 cos and sin against fp64 ones, whatever the dtype
    tolerances={"bfloat16": 1e-4, "float16": 1e-4, "float32": 1e-4},
    entry_point="vit_mrope_setup",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
