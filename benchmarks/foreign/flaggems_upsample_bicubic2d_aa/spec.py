"""FlagGems' anti-aliased bicubic resize (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_upsample_bicubic2d_aa` and never committed.

Why this one as the set's weighted filter: FlagGems replaces torch's
`_upsample_bicubic2d_aa` with it when it is enabled, and a vision-language model's
preprocessor that runs on the GPU (a "fast" image processor, torchvision's `resize` with
antialias) shrinks every image or video frame with it: CLIP's bicubic resample, widened by
the scale factor so that no source pixel is skipped.  At a 3.2x downscale each output
pixel weighs a 13 x 13 source window (169 strided loads and multiply-adds per pixel and
plane, its weights recomputed per plane), so the kernel does far more arithmetic per byte
than a copy; its grid covers one plane's output and every program loops over all images
and channels, so a batch adds work per program, not programs.  Both trials are LLaVA-1.5's
CLIP ViT-L/14-336 preprocessing of 1080p frames (1080 x 1920, the short side resized to
336: 336 x 597): one image (launch-sized) and the 32 frames of a video clip (large), both
336 programs of 512 x 2 output pixels.  Output: the resized images in the dtype.  The floor
is reading the images once and writing the output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_upsample_bicubic2d_aa")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("memory-bound",)


def _taps(src: int, dst: int) -> int:
    """Window taps per output pixel along one side, as the kernel counts them."""
    scale = src / dst
    support = 2 * scale if scale >= 1.0 else 2.0
    return int(support + 0.5) * 2 + 1


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The images read once and the output written once."""
    planes = d["batch"] * d["channels"]
    return ELEMENT_SIZE[dtype] * planes * (d["in_h"] * d["in_w"] + d["out_h"] * d["out_w"])


def flops(d: Mapping[str, int]) -> int:
    """A multiply and an add per window tap, output pixel and plane (the weights'
    polynomials, recomputed per plane, not counted)."""
    taps = _taps(d["in_h"], d["out_h"]) * _taps(d["in_w"], d["out_w"])
    return 2 * taps * d["batch"] * d["channels"] * d["out_h"] * d["out_w"]


_make_inputs = _common.forward_make_inputs(
    "flaggems_upsample_bicubic2d_aa", "batch", "channels", "in_h", "in_w", "out_h", "out_w"
)
_reference = _common.forward_reference("flaggems_upsample_bicubic2d_aa")
_baselines = _common.forward_baselines(
    "flaggems_upsample_bicubic2d_aa",
    (
        "torch",
        "torch",
        "the same resize by torch's _upsample_bicubic2d_aa (F.interpolate, bicubic, "
        "antialias) in the input dtype",
        "torch_resize",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_upsample_bicubic2d_aa.launcher")


TRITON_KNOBS = (
    Knob("block_x", "int", (None, 32, 64, 128, 256, 512, 1024), "tile_n",
         "output columns per program's tile (a tile past the edge wraps onto the row's "
         "start and recomputes it); None: FlagGems' YAML's first, 512"),
    Knob("block_y", "int", (None, 1, 2, 4, 8, 16), "tile_m",
         "output rows per program's tile; None: 2"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: FlagGems' 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the tap loops; None: FlagGems' loader's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_upsample_bicubic2d_aa",
    description=(
        "FlagGems' anti-aliased bicubic resize (v5.0.2), a 3.2x downscale: one program "
        "per 512 x 2 output tile loops over every plane, summing a 13 x 13 window of "
        "strided source pixels with normalised bicubic weights in fp32"
    ),
    dims=(
        Dim("batch", "images (frames) in the batch", "batch"),
        Dim("channels", "colour channels"),
        Dim("in_h", "rows of each source image"),
        Dim("in_w", "columns of each source image"),
        Dim("out_h", "rows of each resized image"),
        Dim("out_w", "columns of each resized image"),
    ),
    trials=(
        Trial(
            "llava15_clip336_1frame",
            {"batch": 1, "channels": 3, "in_h": 1080, "in_w": 1920, "out_h": 336, "out_w": 597},
            "LLaVA-1.5's CLIP-336 preprocessing of one 1080p image (short side to 336): "
            "336 programs of 512 x 2 output pixels, 13 x 13 taps each, 13 MB moved",
        ),
        Trial(
            "llava15_clip336_32frames",
            {"batch": 32, "channels": 3, "in_h": 1080, "in_w": 1920, "out_h": 336, "out_w": 597},
            "the 32 frames of a video clip: the same 336 programs, each looping over 96 "
            "planes, 437 MB moved",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 weighted sums of up to 169 taps, rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-4},
    entry_point="resize",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
