"""xFormers' scaled index add (xFormers v0.0.35, BSD-3-Clause), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py xformers_scaled_index_add` and never committed.

Why this one: DINOv2's blocks import `scaled_index_add` from xFormers for their batch-level
stochastic depth on the multi-crop path (`drop_add_residual_stochastic_depth_list`, taken
in training whenever the drop rate is above 0.1): each attention and MLP branch runs on a
random subset of the crops, and its output, scaled by the LayerScale vector and by batch /
subset, is added back in place into the kept crops' rows of the residual stream, twice a
block.  xFormers' forward kernel fuses the LayerScale multiply, the alpha and the indexed
add: a 3-D grid of (kept crop, token, 512 channels) programs, each gathering one x tile
through the index, adding alpha * scaling * source in fp32 and storing it back over x.
Nearest: flaggems_index_add (a flat, atomic index_add of 2-D rows with no scale); here
the tile is 3-D, the add plain (the kept crops are distinct), a per-channel vector is
loaded by every program, and the tile's shape over (crops, tokens, channels) is the launch's
choice.  Memory-bound: the in-place kernel's input is copied fresh in the timed call, then
the kept rows are read and written once more and the source read once.  Both trials are
DINOv2 ViT-g/14 (1536 channels, drop path 0.4: int(0.6 b) crops kept) in bf16 on a per-GPU
batch of 32 images: the two 224-pixel global crops (64 crops of 257 tokens, 38 kept:
29,298 programs, 191 MB moved) and the eight 98-pixel local crops (256 crops of 50 tokens,
153 kept: 22,950 programs, 149 MB moved).  The floor is the copy plus reading the source
and the kept rows of x once and writing those rows once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "xformers_scaled_index_add")

ELEMENT_SIZE = _common.ELEMENT_SIZE
# the copy of x into the output, then the in-place kernel over the kept crops
CONTEXTS = ("memory-bound", "multi-kernel")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The copy (x read, the output written), the source read once, the kept crops' rows of
    the output read and written by the kernel, the int64 index and the LayerScale vector
    once; the vector's and the index's re-reads by every program are not counted."""
    whole = d["batch"] * d["tokens"] * d["channels"]
    kept = d["kept"] * d["tokens"] * d["channels"]
    return (2 * whole + 3 * kept + d["channels"]) * ELEMENT_SIZE[dtype] + 8 * d["kept"]


def flops(d: Mapping[str, int]) -> int:
    """Two multiplies (alpha, the LayerScale entry) and an add per source element."""
    return 3 * d["kept"] * d["tokens"] * d["channels"]


_make_inputs = _common.forward_make_inputs(
    "xformers_scaled_index_add", "batch", "kept", "tokens", "channels"
)
_reference = _common.forward_reference("xformers_scaled_index_add")
_baselines = _common.forward_baselines(
    "xformers_scaled_index_add",
    ("torch", "torch", "the scaled branch by torch.index_add", "torch_index_add"),
)


_launch_info = _common.triton_launch_info("foreign.xformers_scaled_index_add.launcher")


TRITON_KNOBS = (
    Knob("block_index", "int", (None, 1, 2, 4, 8), "rows_per_program",
         "kept crops per program (the grid's first axis); None: xFormers' 1"),
    Knob("block_row", "int", (None, 1, 2, 4, 8, 16), "tile_m",
         "tokens per program (the grid's second axis); None: xFormers' 1"),
    Knob("block_col", "int", (None, 128, 256, 512, 1024, 2048), "tile_n",
         "channels per program (the grid's third axis); None: xFormers' 512"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (xFormers passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="xformers_scaled_index_add",
    description=(
        "xFormers' scaled index add forward (v0.0.35, scaled_index_add_fwd_kernel as "
        "scaled_index_add_fwd launches it): after x's copy, one program per kept crop, token "
        "and 512 channels adds alpha * LayerScale * source into the crop's row of x in place"
    ),
    dims=(
        Dim("batch", "crops in the residual stream (images x crops of one size)", "batch"),
        Dim("kept", "crops the branch ran on, one per index (int(0.6 batch) at drop path 0.4)"),
        Dim("tokens", "tokens a crop (patches and the class token)"),
        Dim(
            "channels",
            "the model's width (the LayerScale vector's length; the contiguous row "
            "that block_col tiles)",
            "row_len",
        ),
    ),
    trials=(
        Trial(
            "ls_residual_global_vitg14_dinov2",
            {"batch": 64, "kept": 38, "tokens": 257, "channels": 1536},
            "a DINOv2 ViT-g/14 block's LayerScale residual on the 2 global 224-pixel crops of "
            "32 images: 38 of 64 crops kept, 257 tokens, 29,298 programs, 191 MB moved (bf16)",
        ),
        Trial(
            "ls_residual_local_vitg14_dinov2",
            {"batch": 256, "kept": 153, "tokens": 50, "channels": 1536},
            "the same on the 8 local 98-pixel crops of 32 images: 153 of 256 crops kept, 50 "
            "tokens, 22,950 programs, 149 MB moved (bf16)",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # one fp32 multiply-add per element rounded to the dtype (the reference rounds once)
    tolerances={"bfloat16": 1e-2, "float16": 1e-3, "float32": 1e-5},
    entry_point="scaled_index_add",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
