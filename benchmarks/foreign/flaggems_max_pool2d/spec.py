"""FlagGems' 2-D max pooling with indices (FlagGems v5.0.2, Apache-2.0), as kbopt sees it:
a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_max_pool2d` and never committed.

Why this one as the set's windowed max with an argmax: FlagGems replaces torch's
`max_pool2d_with_indices` with it when it is enabled, and every ResNet (and most
convolutional backbones) pools its stem's output with a 3 x 3, stride-2 max pool; in
training the index of each window's maximum is kept for the backward pass, so the kernel
writes an int64 index beside every pooled value (four times the value's bytes in bf16).
One program per (image, channel) plane and 16 x 16 tile of output pixels walks the nine
window taps (unrolled), each a strided, masked load of the input under the tile, keeping a
running maximum and the index of its first occurrence.  The windows overlap (stride 2 over
3 taps), so each input pixel is loaded by up to four programs' taps, mostly from cache.
Both trials are ResNet-50's stem pool (64 channels of 112 x 112 -> 56 x 56): one image at
inference (launch-sized, 1024 programs) and a 32-image training step (large).  Outputs:
the pooled values in the dtype and their int64 indices.  The floor is reading x once and
writing both outputs once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_max_pool2d")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("memory-bound", "reduction")
KERNEL, STRIDE, PADDING = 3, 2, 1  # ResNet's stem pool (reference.py holds the same)


def _out(size: int) -> int:
    return (size + 2 * PADDING - KERNEL) // STRIDE + 1


def _outputs(d: Mapping[str, int]) -> int:
    return d["batch"] * d["channels"] * _out(d["height"]) * _out(d["width"])


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x read once; the pooled values (dtype) and their int64 indices written once."""
    es = ELEMENT_SIZE[dtype]
    return d["batch"] * d["channels"] * d["height"] * d["width"] * es + _outputs(d) * (es + 8)


def flops(d: Mapping[str, int]) -> int:
    """One compare per window tap and output."""
    return KERNEL * KERNEL * _outputs(d)


_make_inputs = _common.forward_make_inputs(
    "flaggems_max_pool2d", "batch", "channels", "height", "width"
)
_reference = _common.forward_reference("flaggems_max_pool2d")
_baselines = _common.forward_baselines(
    "flaggems_max_pool2d",
    (
        "torch",
        "torch",
        "the same pooling by torch's max_pool2d_with_indices (values and int64 indices) "
        "in the input dtype",
        "torch_max_pool2d",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_max_pool2d.launcher")


TRITON_KNOBS = (
    Knob("block_h", "int", (None, 4, 8, 16, 32, 64), "tile_m",
         "output rows per program's tile (one plane's); None: FlagGems' first autotune "
         "entry, 16"),
    Knob("block_w", "int", (None, 8, 16, 32, 64, 128), "tile_n",
         "output columns per program's tile; None: 16"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: FlagGems' 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth (the window taps are unrolled, not looped); None: "
         "FlagGems' 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_max_pool2d",
    description=(
        "FlagGems' 2-D max pooling with indices (v5.0.2), ResNet's 3 x 3 stride-2 stem pool: "
        "one program per plane and 16 x 16 output tile keeps the running maximum of the "
        "nine strided window taps and its int64 input index"
    ),
    dims=(
        Dim("batch", "images in the batch", "batch"),
        Dim("channels", "channels (planes per image)"),
        Dim("height", "rows of the input feature map"),
        Dim("width", "columns of the input feature map"),
    ),
    trials=(
        Trial(
            "resnet50_stem_pool_1img",
            {"batch": 1, "channels": 64, "height": 112, "width": 112},
            "ResNet-50's stem max pool for one image at inference (64 planes of 112 x 112 "
            "-> 56 x 56): 1024 programs of 16 x 16 outputs, 3.6 MB moved",
        ),
        Trial(
            "resnet50_stem_pool_32img",
            {"batch": 32, "channels": 64, "height": 112, "width": 112},
            "the same pool in a 32-image training step: 32768 programs, 116 MB moved",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the maxima are copies of input values and the indices exact: any error is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="max_pool2d",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
