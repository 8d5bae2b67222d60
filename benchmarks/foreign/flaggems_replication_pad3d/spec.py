"""FlagGems' 3-D replication padding (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_replication_pad3d` and never committed.

Why this one: a video VAE's causal 3-D convolutions pad every input before the convolution
with `F.pad(x, (k // 2, k // 2, k // 2, k // 2, k - 1, 0), mode="replicate")` (HunyuanVideo's
CausalConv3d, kernel 3: one repeated row and column on each side, two repeated frames in
front, none behind), which FlagGems replaces with this kernel when enabled.  No arithmetic:
each program clamps one output depth slice's source frame, then copies one 16 x 64 tile of
that slice from its clamped rows and columns, one gathered 2-D load and one store.  Both
trials are HunyuanVideo's VAE decoder (512 channels in its first two up blocks) on a
256 x 256-pixel spatial tile (32 x 32 latents): a 129-frame clip's first up block after its
temporal upsampling (33 frames at 64 x 64, so a 66-column output row is one full 64-column
tile and a 2-column one) and a 17-frame clip's 5 latent frames at 32 x 32 (34 columns, half
of each 64-wide tile masked).  Output: [batch, channels, frames + pad_t, height + 2 pad_hw,
width + 2 pad_hw] in the input dtype.  The floor is reading the input once and writing the
output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_replication_pad3d")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def _volumes(d: Mapping[str, int]) -> tuple[int, int]:
    nc = d["batch"] * d["channels"]
    x = nc * d["frames"] * d["height"] * d["width"]
    p = 2 * d["pad_hw"]
    out = nc * (d["frames"] + d["pad_t"]) * (d["height"] + p) * (d["width"] + p)
    return x, out


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The input read once and the padded output written once."""
    return ELEMENT_SIZE[dtype] * sum(_volumes(d))


_make_inputs = _common.forward_make_inputs(
    "flaggems_replication_pad3d",
    "batch", "channels", "frames", "height", "width", "pad_hw", "pad_t",
)  # fmt: skip
_reference = _common.forward_reference("flaggems_replication_pad3d")
_baselines = _common.forward_baselines(
    "flaggems_replication_pad3d",
    (
        "torch",
        "torch",
        "the same padding by torch's F.pad (mode replicate), as the causal conv calls it",
        "torch_replication_pad3d",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_replication_pad3d.launcher")


TRITON_KNOBS = (
    Knob("block_h", "int", (None, 4, 8, 16, 32, 64), "tile_m",
         "output rows of a depth slice per program; None: FlagGems' 16"),
    Knob("block_w", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "output columns of a depth slice per program (the contiguous axis); None: "
         "FlagGems' 64"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: FlagGems' 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_replication_pad3d",
    description=(
        "FlagGems' 3-D replication padding (v5.0.2): per (image, channel, output frame) "
        "and 16 x 64 output tile, the source frame, rows and columns clamped into the "
        "input, one gathered 2-D load and one store"
    ),
    dims=(
        Dim("batch", "videos in the batch", "batch"),
        Dim("channels", "channels of the feature volume"),
        Dim("frames", "frames (latent or upsampled) of the input volume"),
        Dim("height", "rows of each input frame"),
        Dim("width", "columns of each input frame"),
        Dim("pad_hw", "replicated rows and columns on each side (kernel // 2)"),
        Dim("pad_t", "replicated frames in front, none behind (kernel - 1: causal)"),
    ),
    trials=(
        Trial(
            "hunyuanvideo_vae_up_33x64x64",
            {
                "batch": 1,
                "channels": 512,
                "frames": 33,
                "height": 64,
                "width": 64,
                "pad_hw": 1,
                "pad_t": 2,
            },
            "HunyuanVideo's VAE decoder, a causal conv of its first up block after the "
            "temporal and spatial upsampling, on a 129-frame clip's 256 x 256-pixel tile "
            "(512 channels, 33 frames at 64 x 64 -> 35 at 66 x 66): 179200 programs, 295 MB "
            "moved",
        ),
        Trial(
            "hunyuanvideo_vae_mid_5x32x32",
            {
                "batch": 1,
                "channels": 512,
                "frames": 5,
                "height": 32,
                "width": 32,
                "pad_hw": 1,
                "pad_t": 2,
            },
            "the same decoder's mid-block causal conv at latent resolution on a 17-frame "
            "clip's tile (5 latent frames at 32 x 32 -> 7 at 34 x 34): 10752 programs, "
            "13.5 MB moved",
        ),
    ),
    backoff_dim="channels",
    make_inputs=_make_inputs,
    # block_w tiles an output row of a depth slice (width + 2 pads), block_h its output rows
    shape_metrics=lambda d: {
        "row_len": d["width"] + 2 * d["pad_hw"],
        "rows": d["height"] + 2 * d["pad_hw"],
    },
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a copy: exact
    tolerances={"bfloat16": 1e-9, "float16": 1e-9, "float32": 1e-9},
    entry_point="replication_pad3d",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
