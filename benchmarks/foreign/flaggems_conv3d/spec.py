"""FlagGems' 3-D convolution forward (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_conv3d` and never committed.

Why this one as the set's patch embedding: FlagGems replaces torch's `conv3d` with it when
it is enabled (`flag_gems.enable()`), and every vision-language model of the Qwen2-VL line
(Qwen2-VL, Qwen2.5-VL, Qwen3-VL; GLM-4V too) embeds its image and video patches with an
`nn.Conv3d` whose stride is its kernel, once per image or clip before the vision encoder.
FlagGems' kernel is an implicit GEMM over NCDHW that walks the filter's taps and, inside
each, the input channels in BLOCK_CI steps; a patch embedding has one output position per
patch and 3 input channels, so its K loop is temporal_patch x patch x patch taps (392 for
2 x 14 x 14) of one tl.dot each over a 16-wide channel step with 3 live channels (the A
tile's gathered rows read 3 values 392 elements apart).  The same product is one
[patches, 1176] x [1176, embed] GEMM.  Both trials are Qwen2.5-VL-7B's patch embedding (3
channels, temporal patch 2, 14 x 14 patches, vision hidden size 1280, no bias): one
448 x 448 image (1024 patches) and a 16-frame 448 x 448 video clip (8192 patches).  Output:
[patches, 1280, 1, 1, 1] in the input dtype.  The floor is the larger of reading the
pixels and the weight once and writing the embeddings once, and the GEMM's flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_conv3d")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "compute-bound")  # an implicit GEMM whose K loop is 392 taps of 3 channels


def _taps(d: Mapping[str, int]) -> int:
    return d["channels"] * d["temporal_patch"] * d["patch"] ** 2


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The pixels read once, the weight read once, the embeddings written once."""
    return ELEMENT_SIZE[dtype] * (
        d["patches"] * _taps(d) + d["embed"] * _taps(d) + d["patches"] * d["embed"]
    )


def flops(d: Mapping[str, int]) -> int:
    """A multiply-add per patch, embedding channel, input channel and filter tap."""
    return 2 * d["patches"] * d["embed"] * _taps(d)


_make_inputs = _common.forward_make_inputs(
    "flaggems_conv3d", "patches", "channels", "temporal_patch", "patch", "embed"
)
_reference = _common.forward_reference("flaggems_conv3d")
_baselines = _common.forward_baselines(
    "flaggems_conv3d",
    (
        "torch",
        "torch",
        "the same convolution by torch's F.conv3d (cuDNN) in the input dtype",
        "torch_conv3d",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_conv3d.launcher")


TRITON_KNOBS = (
    Knob("block_ni_do_ho_wo", "int", (None, 16, 32, 64, 128, 256, 512), "tile_m",
         "output positions (patches here) per program, the GEMM's M tile; None: FlagGems' "
         "512"),
    Knob("block_co", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "output channels per program, the GEMM's N tile; None: FlagGems' 16"),
    Knob("block_ci", "int", (None, 16, 32, 64), "tile_k",
         "input channels per tl.dot step (one filter tap at a time; 3 live here, 16 is "
         "tl.dot's least); None: FlagGems' 16"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program; None: FlagGems' 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the tap-and-channel loop; None: FlagGems' 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_conv3d",
    description=(
        "FlagGems' 3-D convolution forward (v5.0.2) as a vision patch embedding: an implicit "
        "GEMM over NCDHW, input tiles gathered per filter tap and 16 input channels (3 live), "
        "fp32 tl.dot (tf32 off), 512 positions x 16 output channels per program"
    ),
    dims=(
        Dim("patches", "patches of the image or clip (the output positions)", "batch"),
        Dim("channels", "input channels (RGB: 3)"),
        Dim("temporal_patch", "frames per patch, the filter's depth and stride"),
        Dim("patch", "patch side in pixels, the filter's height and width and stride"),
        Dim("embed", "output channels (the vision encoder's hidden size)"),
    ),
    trials=(
        Trial(
            "qwen25vl_7b_image_448",
            {"patches": 1024, "channels": 3, "temporal_patch": 2, "patch": 14, "embed": 1280},
            "Qwen2.5-VL-7B's patch embedding of one 448 x 448 image (32 x 32 patches of "
            "2 x 14 x 14, vision hidden 1280): 160 programs (2 position tiles x 80 channel "
            "tiles), 3.1 GFLOP, 8.0 MB moved (bf16)",
        ),
        Trial(
            "qwen25vl_7b_video_16f_448",
            {"patches": 8192, "channels": 3, "temporal_patch": 2, "patch": 14, "embed": 1280},
            "the same for a 16-frame 448 x 448 video clip (8 temporal patches x 32 x 32): "
            "1280 programs, 24.7 GFLOP, 43.2 MB moved (bf16)",
        ),
    ),
    backoff_dim="patches",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation over 1176 products, rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-4},
    entry_point="conv3d",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
