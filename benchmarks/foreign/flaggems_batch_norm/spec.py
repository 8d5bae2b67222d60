"""FlagGems' batch-norm forward in training mode (FlagGems v5.0.2, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_batch_norm` and never committed.

Why this one as the set's reduction: FlagGems replaces torch's `native_batch_norm` with it
when it is enabled, and every convolution of a ResNet is followed by one; in training each
call first reduces a whole channel (batch x height x width values) to its mean and
variance, then normalises it.  One program per channel does both: a Welford walk over
[BLOCK_M images, BLOCK_N pixels] tiles kept per lane in fp32, a merge of the lanes, the
running statistics' momentum update, then a second read of the channel to write the
normalised, scaled and shifted output.  The grid is the channel count, so the parallelism
is fixed by the layer, not the data: ResNet-50's stem has 64 channels of 401,408 values
each (64 programs on 132 SMs, each streaming 0.8 MB twice), its last stage 2048 channels
of 1,568.  Both trials are one training step of ResNet-50 at 32 images per GPU (torchvision's
recipe, 256 images over 8 GPUs): the last stage's batch norm (launch-sized) and the stem's
(large).  Outputs: y in the dtype, the fp32 batch mean and inverse standard deviation, and
the fp32 running mean and variance written in place.  The floor is reading x once and
writing y once (the kernel reads x twice).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_batch_norm")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "normalization", "memory-bound")


def _elements(d: Mapping[str, int]) -> int:
    return d["batch"] * d["channels"] * d["height"] * d["width"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x read once and y written once, plus the per-channel fp32 parameters and
    statistics (weight and bias read, the mean and inverse standard deviation written, the
    running pair read and written)."""
    return 2 * ELEMENT_SIZE[dtype] * _elements(d) + d["channels"] * 8 * 4


def flops(d: Mapping[str, int]) -> int:
    """About ten per element, counted in the kernel's code: the Welford update (a
    subtract, a divide, an add, a second subtract, a multiply-add) and the normalisation
    (a subtract and two multiply-adds)."""
    return 10 * _elements(d)


_make_inputs = _common.forward_make_inputs(
    "flaggems_batch_norm", "batch", "channels", "height", "width"
)
_reference = _common.forward_reference("flaggems_batch_norm")
_baselines = _common.forward_baselines(
    "flaggems_batch_norm",
    (
        "torch",
        "torch",
        "the same training-mode step by torch's native_batch_norm (cuDNN on a GPU) in the "
        "input dtype",
        "torch_batch_norm",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_batch_norm.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 1, 2, 4, 8, 16, 32, 64), "tile_m",
         "images per tile of the channel walk; None: FlagGems' next power of two of the "
         "batch, at most 2048"),
    Knob("block_n", "int", (None, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096), "tile_n",
         "pixels per tile of the channel walk; None: FlagGems' next power of two of the "
         "pixels, at most 16384 / block_m (with block_m below the batch, block_n must "
         "divide the pixels: the Welford update divides by the step count, not a lane's "
         "own count, so a lane masked before its last step is weighted wrongly)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program (one channel); None: FlagGems' 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the tile loops; None: FlagGems' 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_batch_norm",
    description=(
        "FlagGems' batch-norm forward in training mode (v5.0.2): one program per channel "
        "reduces its batch x pixels plane to a mean and variance (per-lane fp32 Welford, "
        "merged), updates the running statistics, then reads the plane again to normalise"
    ),
    dims=(
        Dim("batch", "images in the batch", "batch"),
        Dim("channels", "channels (one program each)"),
        Dim("height", "rows of the feature map"),
        Dim("width", "columns of the feature map"),
    ),
    trials=(
        Trial(
            "resnet50_stage4_32img",
            {"batch": 32, "channels": 2048, "height": 7, "width": 7},
            "ResNet-50's last-stage batch norm (2048 channels of 7 x 7) in a 32-image "
            "training step: 2048 programs of 1568 values, 32 x 64 tiles, 13 MB moved",
        ),
        Trial(
            "resnet50_stem_32img",
            {"batch": 32, "channels": 64, "height": 112, "width": 112},
            "the stem's batch norm (64 channels of 112 x 112) in the same step: 64 programs "
            "of 401408 values, 32 x 512 tiles, 103 MB moved",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 statistics over up to 4e5 values; y rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-4},
    entry_point="batch_norm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
