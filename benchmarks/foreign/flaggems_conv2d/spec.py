"""FlagGems' 2-D convolution forward (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_conv2d` and never committed.

Why this one as the set's tl.dot kernel: FlagGems replaces torch's `conv2d` with it when it
is enabled (`flag_gems.enable()`), so every convolution of a vision model runs through it.
It is an implicit GEMM: no im2col buffer; each program gathers its input tiles straight
from the NCHW tensor at each filter tap's shifted coordinates (masked at the border), so
the K loop walks kh x kw taps of BLOCK_CI channels and the A operand's rows are strided
gathers rather than contiguous rows.  fp32 accumulation, tf32 off.  Both trials are
ResNet-50's stage-3 3 x 3 convolution (256 -> 256 channels on a 14 x 14 map, the
bottleneck's middle layer, six of them per image): one image (a launch-sized grid of 56
programs) and a 64-image batch.  Output: [batch, 256, 14, 14] in the input dtype.  The
floor is the larger of reading the input and the weight once and writing the output once,
and the convolution's flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_conv2d")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "compute-bound")  # an implicit GEMM; the one-image trial is launch-bound


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The input read once, the weight read once, the output written once (stride 1 and
    "same" padding: the output map is the input's size)."""
    plane = d["height"] * d["width"]
    return ELEMENT_SIZE[dtype] * (
        d["batch"] * d["channels_in"] * plane
        + d["channels_out"] * d["channels_in"] * d["filter_size"] ** 2
        + d["batch"] * d["channels_out"] * plane
    )


def flops(d: Mapping[str, int]) -> int:
    """A multiply-add per output element, input channel and filter tap."""
    return (
        2 * d["batch"] * d["height"] * d["width"] * d["channels_out"] * d["channels_in"]
        * d["filter_size"] ** 2
    )  # fmt: skip


_make_inputs = _common.forward_make_inputs(
    "flaggems_conv2d", "batch", "channels_in", "channels_out", "height", "width", "filter_size"
)
_reference = _common.forward_reference("flaggems_conv2d")
_baselines = _common.forward_baselines(
    "flaggems_conv2d",
    (
        "torch",
        "torch",
        "the same convolution by torch's F.conv2d (cuDNN) in the input dtype",
        "torch_conv2d",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_conv2d.launcher")


TRITON_KNOBS = (
    Knob("block_ni_ho_wo", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "output positions (image, row, column) per program, the GEMM's M tile; None: "
         "FlagGems' 32"),
    Knob("block_co", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "output channels per program, the GEMM's N tile; None: FlagGems' 32"),
    Knob("block_ci", "int", (None, 16, 32, 64, 128), "tile_k",
         "input channels per tl.dot step (one filter tap at a time); None: FlagGems' 32"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program; None: FlagGems' 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the tap-and-channel loop; None: FlagGems' 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_conv2d",
    description=(
        "FlagGems' 2-D convolution forward (v5.0.2): an implicit GEMM over NCHW, input tiles "
        "gathered per filter tap and 32 input channels, fp32 tl.dot (tf32 off), 32 positions "
        "x 32 output channels per program"
    ),
    dims=(
        Dim("batch", "images in the batch", "batch"),
        Dim("channels_in", "input channels"),
        Dim("channels_out", "output channels (filters)"),
        Dim("height", "rows of the feature map (the output's too)"),
        Dim("width", "columns of the feature map (the output's too)"),
        Dim("filter_size", "filter size, square, odd (stride 1, padding filter_size // 2)"),
    ),
    trials=(
        Trial(
            "b1_resnet50_stage3_conv3x3",
            {
                "batch": 1,
                "channels_in": 256,
                "channels_out": 256,
                "height": 14,
                "width": 14,
                "filter_size": 3,
            },
            "one image through ResNet-50's stage-3 3 x 3 convolution (256 -> 256 on 14 x 14): "
            "56 programs (7 position tiles x 8 channel tiles), 0.23 GFLOP, 1.4 MB moved (the "
            "weight most of it)",
        ),
        Trial(
            "b64_resnet50_stage3_conv3x3",
            {
                "batch": 64,
                "channels_in": 256,
                "channels_out": 256,
                "height": 14,
                "width": 14,
                "filter_size": 3,
            },
            "a 64-image batch through the same layer: 3136 programs, 14.8 GFLOP, 14 MB moved",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation over channels_in * kernel^2 products, rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-4},
    entry_point="conv2d",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
