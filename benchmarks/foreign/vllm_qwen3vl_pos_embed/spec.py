"""Qwen3-VL's bilinear position-embedding interpolation (vLLM v0.34.0, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_qwen3vl_pos_embed` and never committed.

Why this one: Qwen3-VL's vision tower learns its absolute position embeddings on a fixed
48 x 48 grid and resizes them to every image's (and video's) patch grid before the first ViT
block; vLLM's `fast_pos_embed_interpolate` runs this kernel once per grid of the encoder
batch (its torch path, four gathers and a permute, only without Triton).  One program per
output patch row decodes its position in the 2 x 2 spatial-merge order, finds the four
neighbouring table rows and their bilinear weights, and blends the four 1152-column rows in
the model's dtype: a weighted gather of table rows, not an image resize (the table, 5.3 MB,
stays in L2; each frame of a video computes its rows again).  The floor is writing the
output once and reading the table once.  Trials: Qwen3-VL-8B's tower (hidden 1152, patch 16,
merge 2): one 448 x 448 image (28 x 28 patches, 784 programs) and a 32-frame 1024 x 576
video (16 temporal patches of 36 x 64: 36,864 programs, 85 MB written).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_qwen3vl_pos_embed")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("memory-bound",)


def rows(d: Mapping[str, int]) -> int:
    return d["frames"] * d["grid_h"] * d["grid_w"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The output written once and the position table read once."""
    return (rows(d) + d["grid_side"] ** 2) * d["hidden"] * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """Per output element: four products and three sums (seven)."""
    return 7 * rows(d) * d["hidden"]


_make_inputs = _common.forward_make_inputs(
    "vllm_qwen3vl_pos_embed", "frames", "grid_h", "grid_w", "hidden", "grid_side"
)
_reference = _common.forward_reference("vllm_qwen3vl_pos_embed")
_baselines = _common.forward_baselines(
    "vllm_qwen3vl_pos_embed",
    (
        "torch",
        "torch",
        "vLLM's pos_embed_interpolate_native: four table gathers weighted and summed in the "
        "dtype, permuted to merge order and repeated per frame",
        "torch_pos_embed_interpolate",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_qwen3vl_pos_embed.launcher")


TRITON_KNOBS = (
    Knob("block_d", "int", (None, 128, 256, 512, 1024, 2048, 4096), "tile_n",
         "hidden columns per loop step (each step loads four table rows' slices); None: "
         "vLLM's next power of two of the hidden size, 2048 at 1152"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the loop over the hidden size; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_qwen3vl_pos_embed",
    description=(
        "vLLM's Qwen3-VL bilinear position-embedding interpolation (v0.34.0, "
        "_bilinear_pos_embed_kernel): one program per patch of the image's grid, in "
        "spatial-merge order, blends four gathered rows of the 48 x 48 learned table with "
        "bilinear weights in the model's dtype, 2048 columns per step"
    ),
    dims=(
        Dim("frames", "temporal patches of the grid (1 for an image)", "batch"),
        Dim("grid_h", "patch rows of the grid (a multiple of the merge, 2)"),
        Dim("grid_w", "patch columns of the grid (a multiple of the merge, 2)"),
        Dim("hidden", "the vision tower's hidden size (table columns)", "row_len"),
        Dim("grid_side", "the learned table's side (sqrt of its positions)"),
    ),
    trials=(
        Trial(
            "qwen3_vl_8b_video_1024x576_32f",
            {"frames": 16, "grid_h": 36, "grid_w": 64, "hidden": 1152, "grid_side": 48},
            "Qwen3-VL-8B's vision tower (hidden 1152, 48 x 48 table, patch 16, merge 2) on a "
            "32-frame 1024 x 576 video clip (16 temporal patches of 36 x 64): 36,864 "
            "programs, 85 MB written (bf16)",
        ),
        Trial(
            "qwen3_vl_8b_image_448",
            {"frames": 1, "grid_h": 28, "grid_w": 28, "hidden": 1152, "grid_side": 48},
            "the same tower on one 448 x 448 image (28 x 28 patches): 784 programs, 1.8 MB "
            "written (bf16)",
        ),
    ),
    backoff_dim="frames",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # weights cast to the dtype and four products summed in the dtype (as vLLM keeps it),
    # against an fp64 blend rounded once
    tolerances={"bfloat16": 3e-2, "float16": 4e-3, "float32": 1e-5},
    entry_point="pos_embed_interpolate",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
