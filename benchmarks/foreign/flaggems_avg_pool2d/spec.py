"""FlagGems' 2-D average pooling forward (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_avg_pool2d` and never committed.

Why this one as the set's windowed reduction: FlagGems replaces torch's `avg_pool2d` with
it when it is enabled, and Gemma 3's multimodal projector calls exactly this on every image
(nn.AvgPool2d(4, 4) over the SigLIP tower's 64 x 64 patch grid, 1152 channels, to make the
256 soft tokens the language model sees).  Each program owns a 16 x 16 tile of output
pixels of one (image, channel) plane and loops over the 16 window taps; at every tap it
gathers 16 x 16 input pixels four columns apart (a strided, poorly coalesced load whose
sectors the next taps reuse from cache) into an fp32 sum.  A reduction of 16 to 1 with
almost no arithmetic: memory-bound, reading 16 times what it writes.  Both trials are Gemma
3's projector: one image (1152 programs, one per channel plane) and a 16-image batch.
Output: [batch, 1152, 16, 16] in the input dtype.  The floor is reading the input once
and writing the output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_avg_pool2d")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound")


def _out(d: Mapping[str, int]) -> int:
    return d["batch"] * d["channels"] * (d["height"] // d["pool"]) * (d["width"] // d["pool"])


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The input read once and the pooled output written once."""
    return ELEMENT_SIZE[dtype] * (d["batch"] * d["channels"] * d["height"] * d["width"] + _out(d))


def flops(d: Mapping[str, int]) -> int:
    """An add per window tap and a divide per output pixel."""
    return _out(d) * (d["pool"] ** 2 + 1)


_make_inputs = _common.forward_make_inputs(
    "flaggems_avg_pool2d", "batch", "channels", "height", "width", "pool"
)
_reference = _common.forward_reference("flaggems_avg_pool2d")
_baselines = _common.forward_baselines(
    "flaggems_avg_pool2d",
    (
        "torch",
        "torch",
        "the same pooling by torch's F.avg_pool2d (window 4, stride 4) in the input dtype",
        "torch_avg_pool2d",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_avg_pool2d.launcher")


TRITON_KNOBS = (
    Knob("block_h", "int", (None, 4, 8, 16, 32, 64), "tile_m",
         "output rows per program; None: FlagGems' 16"),
    Knob("block_w", "int", (None, 4, 8, 16, 32, 64), "tile_n",
         "output columns per program (each tap's load spans pool times as many input "
         "columns); None: FlagGems' 16"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: FlagGems' 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the window-tap loop; None: FlagGems' 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_avg_pool2d",
    description=(
        "FlagGems' 2-D average pooling forward (v5.0.2): one program per (image, channel) "
        "plane and 16 x 16 output tile loops over the window taps, gathering strided input "
        "pixels into an fp32 sum, then divides"
    ),
    dims=(
        Dim("batch", "images in the batch", "batch"),
        Dim("channels", "channels (each a separate plane)"),
        Dim("height", "rows of the input map"),
        Dim("width", "columns of the input map"),
        Dim("pool", "window side and stride (non-overlapping, no padding)"),
    ),
    trials=(
        Trial(
            "gemma3_projector_1image",
            {"batch": 1, "channels": 1152, "height": 64, "width": 64, "pool": 4},
            "Gemma 3's multimodal projector on one 896 x 896 image (the SigLIP tower's 64 x "
            "64 patches of 1152 channels pooled 4 x 4 to 256 tokens): 1152 programs, 10 MB "
            "moved",
        ),
        Trial(
            "gemma3_projector_16images",
            {"batch": 16, "channels": 1152, "height": 64, "width": 64, "pool": 4},
            "the same projector on a 16-image batch: 18432 programs, 160 MB moved",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums of pool^2 terms, rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="avg_pool2d",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
