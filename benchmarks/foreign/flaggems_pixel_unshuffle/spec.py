"""FlagGems' pixel_unshuffle (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_pixel_unshuffle` and never committed.

Why this one as the set's data-movement kernel: FlagGems replaces torch's `pixel_unshuffle`
with it when it is enabled, and vision-language models such as InternVL2.5 shrink their
vision tokens four-fold by stacking each 2 x 2 cell of ViT patches into the channels before
the projector (a space-to-depth of the 32 x 32 patch grid of each 448-pixel tile, 1024-wide
for InternViT-300M).  One program per 1024 output elements decodes each index, finds its
input element and copies it: contiguous stores, loads two elements apart along a row.  Both
trials are InternVL2.5-8B's tiles: one image's 7 tiles (six and a thumbnail, 7168 programs,
launch-sized) and a 256-tile prefill batch (262,144 programs, large).  The floor is reading
the patch features once and writing them once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_pixel_unshuffle")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The patch features read once and written once."""
    return 2 * d["tiles"] * d["hidden"] * d["grid"] * d["grid"] * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """No arithmetic on the data: a copy (its index math not counted)."""
    return 0


_make_inputs = _common.forward_make_inputs(
    "flaggems_pixel_unshuffle", "tiles", "hidden", "grid", "factor"
)
_reference = _common.forward_reference("flaggems_pixel_unshuffle")
_baselines = _common.forward_baselines(
    "flaggems_pixel_unshuffle",
    (
        "torch",
        "torch",
        "the same rearrangement by torch's F.pixel_unshuffle",
        "torch_pixel_unshuffle",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_pixel_unshuffle.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 256, 512, 1024, 2048, 4096, 8192), "tile_n",
         "output elements copied per program; None: FlagGems' 1024"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (FlagGems passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_pixel_unshuffle",
    description=(
        "FlagGems' pixel_unshuffle (v5.0.2), a vision-language model's 2 x 2 space to "
        "depth of ViT patch features: one program per 1024 output elements decodes each "
        "index and copies its input element"
    ),
    dims=(
        Dim("tiles", "448-pixel image tiles", "batch"),
        Dim("hidden", "ViT hidden size (input channels)", "rows"),
        Dim("grid", "patches per side of a tile"),
        Dim("factor", "downscale factor (patches per side of a cell)"),
    ),
    trials=(
        Trial(
            "internvl25_8b_1image",
            {"tiles": 7, "hidden": 1024, "grid": 32, "factor": 2},
            "one image's 7 tiles of InternViT-300M features: 7168 programs, 29.4 MB moved (bf16)",
        ),
        Trial(
            "internvl25_8b_tiles256",
            {"tiles": 256, "hidden": 1024, "grid": 32, "factor": 2},
            "a 256-tile prefill batch: 262,144 programs, 1074 MB moved (bf16)",
        ),
    ),
    backoff_dim="tiles",
    make_inputs=_make_inputs,
    # A program's block is 1-D over the whole flattened output (tiles x hidden x grid x grid).
    shape_metrics=lambda d: {"row_len": d["tiles"] * d["hidden"] * d["grid"] * d["grid"]},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a copy: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="pixel_unshuffle",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
