"""FlagGems' nearest-neighbour 2-D upsampling (FlagGems v5.0.2, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_upsample_nearest2d` and never committed.

Why this one as the set's memory-bound kernel: FlagGems replaces torch's
`upsample_nearest2d` with it when it is enabled, and the upsampling blocks of a diffusion
model's VAE decoder and U-Net call exactly this (`F.interpolate(x, scale_factor=2.0,
mode="nearest")`) before their convolution.  No arithmetic: every output pixel is a copy of
one input pixel, so it writes four times what it reads (at scale 2).  Each program computes
its 1024 output pixels' source pixels once and walks about four (image, channel) planes
with them, one gathered load (each input pixel read by two neighbouring lanes) and one
contiguous store per plane.  Both trials are Stable Diffusion 1.5's VAE decoder on one
512 x 512 image: its first upsampling (512 channels, 64 x 64 -> 128 x 128) and its last
(256 channels, 256 x 256 -> 512 x 512).  Output: [batch, channels, 2 h, 2 w] in the input
dtype.  The floor is reading the input once and writing the output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_upsample_nearest2d")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The input read once and the scale^2 times larger output written once."""
    plane = d["batch"] * d["channels"] * d["height"] * d["width"]
    return ELEMENT_SIZE[dtype] * plane * (1 + d["scale"] ** 2)


_make_inputs = _common.forward_make_inputs(
    "flaggems_upsample_nearest2d", "batch", "channels", "height", "width", "scale"
)
_reference = _common.forward_reference("flaggems_upsample_nearest2d")
_baselines = _common.forward_baselines(
    "flaggems_upsample_nearest2d",
    (
        "torch",
        "torch",
        "the same upsampling by torch's F.interpolate (mode nearest, scale factor 2)",
        "torch_upsample_nearest2d",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_upsample_nearest2d.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 256, 512, 1024, 2048, 4096), "tile_n",
         "consecutive output pixels of a plane per program; None: FlagGems' 1024"),
    Knob("planes_per_program", "int", (None, 1, 2, 4, 8, 16), "rows_per_program",
         "(image, channel) planes each program walks with the same source pixels (the grid "
         "has cdiv(planes, this) programs along them); None: FlagGems' 4"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: FlagGems' 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the loop over planes; None: FlagGems' 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_upsample_nearest2d",
    description=(
        "FlagGems' nearest-neighbour 2-D upsampling (v5.0.2): 1024 output pixels per "
        "program, their source pixels computed once and copied for about four (image, "
        "channel) planes, one gathered load and one contiguous store each"
    ),
    dims=(
        Dim("batch", "images in the batch", "batch"),
        Dim("channels", "channels of the feature map"),
        Dim("height", "rows of the input map"),
        Dim("width", "columns of the input map"),
        Dim("scale", "integer upsampling factor along both axes (2)"),
    ),
    trials=(
        Trial(
            "sd15_vae_up_64_to_128",
            {"batch": 1, "channels": 512, "height": 64, "width": 64, "scale": 2},
            "Stable Diffusion 1.5's VAE decoder, first upsampling of a 512 x 512 image's "
            "latent (512 channels, 64 x 64 -> 128 x 128): 2048 programs (16 pixel tiles x "
            "128 plane groups), 21 MB moved",
        ),
        Trial(
            "sd15_vae_up_256_to_512",
            {"batch": 1, "channels": 256, "height": 256, "width": 256, "scale": 2},
            "the same decoder's last upsampling (256 channels, 256 x 256 -> 512 x 512): "
            "16384 programs, 168 MB moved",
        ),
    ),
    backoff_dim="channels",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a copy: exact
    tolerances={"bfloat16": 1e-9, "float16": 1e-9, "float32": 1e-9},
    entry_point="upsample_nearest2d",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
