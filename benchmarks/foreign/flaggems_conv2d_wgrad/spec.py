"""FlagGems' 2-D convolution weight gradient (FlagGems v5.0.2, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_conv2d_wgrad` and never committed.

Why this one: FlagGems replaces torch's `conv2d` with its own autograd function when it is
enabled (`flag_gems.enable()`), so in a training step every bias-free convolution of a CNN
gets its weight gradient from this kernel (after a zero fill of the gradient; the input's
gradient is a separate launch of the forward kernel, `flaggems_conv2d`).  FlagGems registers
`conv2d` for the CUDA dispatch key only, and autograd reaches that function's backward
through PyTorch's autograd fallback, which warns that the path is deprecated (seen here
with a Python autograd function registered the same way for the CPU key, torch 2.13).  It is
the weight-gradient GEMM of a convolution, [ci x kh x kw, co] = x-patches^T @ dy, written
as one program per 32 x 32 tile of the gradient whose depth, every (image, output row,
output column) position, is walked in three nested loops: each output row, each output
column, and the batch 32 images at a time, one tl.dot of a gathered
[32 filter rows, 32 images] input tile by a [32 images, 32 channels] gradient tile per
step, fp32 accumulation (tf32 off).  No program splits that depth, so the grid is the
weight's size over the tile and each program takes out_h x out_w x cdiv(batch, 32) steps in
sequence; both operands are strided gathers (the images a whole image apart, the channels a
plane apart).  Both trials are ResNet-50 v1.5 training steps in bf16 autocast (its 3 x 3
convolutions: stride 1, padding 1, no bias): stage 3's (256 -> 256 on 14 x 14) at the 256
images a GPU of NVIDIA's DeepLearningExamples recipe (576 programs of 1,568 steps), and
stage 1's (64 -> 64 on 56 x 56) at the 32 images a GPU of torchvision's reference recipe
(36 programs, under one wave, of 3,136 steps).  Output: the weight gradient, [co, ci, 3, 3]
in the input dtype.  The floor is the larger of reading the input and the output gradient
once and writing the weight gradient once, and the GEMM's flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_conv2d_wgrad")

ELEMENT_SIZE = _common.ELEMENT_SIZE
# a GEMM whose depth (batch x output positions) one program walks alone: a weight-sized
# grid (36 programs on the stage-1 trial, under one wave), a zero fill before it
CONTEXTS = ("gemm", "compute-bound", "small-grid", "multi-kernel")


def _out(d: Mapping[str, int], side: str) -> int:
    """The output map's side: padding filter_size // 2."""
    k = d["filter_size"]
    return (d[side] + 2 * (k // 2) - k) // d["stride"] + 1


def _filter_rows(d: Mapping[str, int]) -> int:
    return d["channels_in"] * d["filter_size"] ** 2


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The input read once, the output gradient read once, the weight gradient written once,
    all in the dtype; the zero fill and the re-reads of each input pixel by every filter
    tap and every output-channel tile are not counted."""
    positions = _out(d, "height") * _out(d, "width")
    return ELEMENT_SIZE[dtype] * (
        d["batch"] * d["channels_in"] * d["height"] * d["width"]
        + d["batch"] * d["channels_out"] * positions
        + d["channels_out"] * _filter_rows(d)
    )


def flops(d: Mapping[str, int]) -> int:
    """A multiply-add per weight element (output channel, input channel, filter tap), image
    and output position."""
    positions = _out(d, "height") * _out(d, "width")
    return 2 * d["channels_out"] * _filter_rows(d) * d["batch"] * positions


_make_inputs = _common.forward_make_inputs(
    "flaggems_conv2d_wgrad", "batch", "channels_in", "channels_out", "height", "width",
    "filter_size", "stride",
)  # fmt: skip
_reference = _common.forward_reference("flaggems_conv2d_wgrad")
_baselines = _common.forward_baselines(
    "flaggems_conv2d_wgrad",
    (
        "torch",
        "torch",
        "the same gradient by torch's aten::convolution_backward with only the weight's "
        "gradient asked for (cuDNN's wgrad) in the input dtype",
        "torch_conv2d_wgrad",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_conv2d_wgrad.launcher")


TRITON_KNOBS = (
    Knob("block_ci_hk_wk", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "filter rows (input channel, tap row, tap column) per program, the gradient "
         "GEMM's M tile (its input tile a gather of this many pixels per image); None: "
         "FlagGems' 32"),
    Knob("block_co", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "output channels per program, the gradient GEMM's N tile; None: FlagGems' 32"),
    Knob("block_no", "int", (None, 16, 32, 64, 128), "tile_k",
         "images per tl.dot step at one output position (the depth's step; a batch below "
         "it is masked, one above it takes cdiv(batch, this) steps a position); None: "
         "FlagGems' 32"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program (at FlagGems' 32 x 32 x 32 tile the dot is mma.sync, at 64 rows "
         "and 4 warps a wgmma); None: FlagGems' 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_conv2d_wgrad",
    description=(
        "FlagGems' 2-D convolution weight gradient (v5.0.2, conv2d_backward_kernel_weight "
        "as Conv2d.backward launches it): one program per 32 filter rows x 32 output "
        "channels of the gradient walks every output position and the batch 32 images a "
        "step, a gathered input tile times the output gradient's tile in fp32 tl.dot (tf32 "
        "off), after a zero fill"
    ),
    dims=(
        Dim("batch", "images in the micro-batch", "batch"),
        Dim("channels_in", "input channels"),
        Dim("channels_out", "output channels (filters)"),
        Dim("height", "rows of the input map"),
        Dim("width", "columns of the input map"),
        Dim("filter_size", "filter side, square (padding filter_size // 2)"),
        Dim("stride", "stride, both ways"),
    ),
    # A large micro-batch through a deep stage first (many programs, a long depth each),
    # then a small micro-batch through the first stage (few programs, a longer depth).
    trials=(
        Trial(
            "resnet50_stage3_conv3x3_b256",
            {
                "batch": 256,
                "channels_in": 256,
                "channels_out": 256,
                "height": 14,
                "width": 14,
                "filter_size": 3,
                "stride": 1,
            },
            "a ResNet-50 v1.5 training step at 256 images a GPU (NVIDIA DeepLearningExamples' "
            "default, AMP), a stage-3 bottleneck's 3 x 3 convolution (256 -> 256 on 14 x 14): "
            "576 programs (72 filter-row tiles x 8 channel tiles) of 196 positions x 8 image "
            "steps, 59.2 GFLOP, 52.6 MB at the floor (bf16)",
        ),
        Trial(
            "resnet50_stage1_conv3x3_b32",
            {
                "batch": 32,
                "channels_in": 64,
                "channels_out": 64,
                "height": 56,
                "width": 56,
                "filter_size": 3,
                "stride": 1,
            },
            "a ResNet-50 training step at 32 images a GPU (torchvision's reference recipe), a "
            "stage-1 bottleneck's 3 x 3 convolution (64 -> 64 on 56 x 56): 36 programs (18 "
            "filter-row tiles x 2 channel tiles) of 3,136 positions x one image step, "
            "7.4 GFLOP, 25.8 MB at the floor (bf16)",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation over batch x positions products (up to 50,176), rounded once to
    # the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-4},
    entry_point="conv2d_wgrad",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
