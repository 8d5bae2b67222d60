"""FlagGems' 2-D average pooling backward (FlagGems v5.0.2, Apache-2.0), as kbopt sees it:
a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_avg_pool2d_backward` and never committed.

Why this one: FlagGems replaces torch's aten::avg_pool2d_backward with it when it is
enabled, and PoolFormer (MetaFormer's pooling baseline) mixes its tokens with nothing but
nn.AvgPool2d(3, stride 1, padding 1, count_include_pad=False) minus the identity, in every
block of every stage, so a training step runs this backward once per block.  Under bf16
autocast the pooling runs in fp32 (it follows a GroupNorm, which autocast keeps in fp32),
hence the spec's dtype.  Each program owns a 16 x 16 tile of input pixels of one (image,
channel) plane and loops over the 9 window taps, gathering the gradient of the output pixel
whose window has this input pixel at that tap, dividing it by that window's in-map pixel
count and adding in fp32; the count is recomputed at every tap by a second 3 x 3 loop of
bounds compares over the tile, 81 compare-and-count steps per input pixel next to its 9
loads (about 640 sm_90 instructions a pixel: by its SASS, bound by instruction issue rather
than by its bytes).  A zero fill of the fp32 gradient precedes the kernel (FlagGems'
torch.zeros_like, though the kernel writes every pixel) and, in 16-bit dtypes, a cast
follows it.  Trials: a 128-image micro-batch of ImageNet training at 224 x 224,
PoolFormer-M36's first stage (96 channels at 56 x 56) and PoolFormer-S12's third (320
channels at 14 x 14, one 16 x 16 tile a plane with 60 of its 256 pixels masked).  The
floor is reading the output gradient once and writing the input gradient once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_avg_pool2d_backward")

ELEMENT_SIZE = _common.ELEMENT_SIZE
# issue-bound by its sm_90 SASS: about 640 instructions a pixel (the divisor's recount at
# every tap) against 9 loads and a store
CONTEXTS = ("reduction", "compute-bound", "multi-kernel")


def _pixels(d: Mapping[str, int]) -> int:
    return d["batch"] * d["channels"] * d["height"] * d["width"]


def bytes_moved(d: Mapping[str, int], dtype: str = "float32") -> int:
    """The output gradient read once and the input gradient written once, both in the
    dtype and both the input map's size (stride 1, padding pool // 2); the fp32 zero fill,
    the cast and the taps' re-reads of neighbouring pixels are not counted."""
    return 2 * ELEMENT_SIZE[dtype] * _pixels(d)


def flops(d: Mapping[str, int]) -> int:
    """An add per window tap of each input pixel and one divide per output pixel (pool^2 +
    1 per pixel); the divisors, in-map pixel counts that depend on the position alone, and
    the kernel's recount of them at every tap are not counted."""
    return _pixels(d) * (d["pool"] ** 2 + 1)


_make_inputs = _common.forward_make_inputs(
    "flaggems_avg_pool2d_backward", "batch", "channels", "height", "width", "pool"
)
_reference = _common.forward_reference("flaggems_avg_pool2d_backward")
_baselines = _common.forward_baselines(
    "flaggems_avg_pool2d_backward",
    (
        "torch",
        "torch",
        "torch's own aten::avg_pool2d_backward (window pool, stride 1, padding pool // 2, "
        "count_include_pad False), as autograd calls it, in the input dtype",
        "torch_avg_pool2d_backward",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_avg_pool2d_backward.launcher")


TRITON_KNOBS = (
    Knob("block_h", "int", (None, 4, 8, 16, 32, 64), "tile_m",
         "input rows per program (the map's height is cut into cdiv(height, this) row "
         "tiles, the last masked); None: FlagGems' 16"),
    Knob("block_w", "int", (None, 4, 8, 16, 32, 64), "tile_n",
         "input columns per program (each tap's gradient load spans this many contiguous "
         "pixels of a row); None: FlagGems' 16"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program (fewer warps, more pixels of the tile per thread: the "
         "recount's compares are per pixel); None: FlagGems' 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_avg_pool2d_backward",
    description=(
        "FlagGems' 2-D average pooling backward (v5.0.2, avg_pool2d_backward_kernel) for "
        "PoolFormer's 3 x 3 stride-1 pooling without padded pixels counted: one program per "
        "(image, channel) plane and 16 x 16 input tile gathers each tap's output gradient "
        "divided by a divisor recounted at every tap, in fp32, after a zero fill"
    ),
    dims=(
        Dim("batch", "images in the micro-batch", "batch"),
        Dim("channels", "channels of the stage (each a separate plane)"),
        Dim("height", "rows of the feature map (input and output alike)"),
        Dim("width", "columns of the feature map (input and output alike)"),
        Dim("pool", "window side, odd (stride 1, padding pool // 2)"),
    ),
    trials=(
        Trial(
            "poolformer_m36_stage1_128",
            {"batch": 128, "channels": 96, "height": 56, "width": 56, "pool": 3},
            "a training step of PoolFormer-M36 on a 128-image micro-batch at 224 x 224, a "
            "first-stage block's pooling (96 channels at 56 x 56): 12,288 planes of 4 x 4 "
            "tiles (the last row and column of tiles half masked), 196,608 programs; 308 MB "
            "at the floor (fp32)",
        ),
        Trial(
            "poolformer_s12_stage3_128",
            {"batch": 128, "channels": 320, "height": 14, "width": 14, "pool": 3},
            "a training step of PoolFormer-S12 on a 128-image micro-batch at 224 x 224, a "
            "third-stage block's pooling (320 channels at 14 x 14): 40,960 programs of one "
            "16 x 16 tile each, 196 of its 256 pixels live; 64 MB at the floor (fp32)",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums of pool^2 quotients, rounded once to the dtype
    tolerances={"float32": 1e-5, "float16": 2e-3, "bfloat16": 1e-2},
    entry_point="avg_pool2d_backward",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    dtype="float32",
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
