"""FlagGems' 1-D linear upsampling (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_upsample_linear1d` and never committed.

Why this one as the set's memory-bound resampling: FlagGems replaces torch's
`upsample_linear1d` (`F.interpolate(mode="linear")`) with it when it is enabled, and
flow-matching TTS models such as CosyVoice stretch their speech-token features (50 tokens a
second) to the mel frame rate (22,050 Hz with a 256-sample hop, about 86 frames a second)
with exactly that call before the flow decoder.  One program per row and 256 output frames
gathers the two neighbouring tokens of each frame and stores their fp32 linear blend.  Both
trials are a 30-second utterance (1500 tokens to 2584 frames) at 80 channels, the mel size
CosyVoice's flow decoder predicts: one utterance (880 programs, launch-sized) and a
256-utterance offline synthesis batch (225,280 programs, large).  The floor is reading the
features once and writing the frames once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_upsample_linear1d")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The token features read once, the frames written once."""
    return d["batch"] * d["channels"] * (d["tokens"] + d["frames"]) * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """About ten per output frame (source position, clamp, floor, weights, blend)."""
    return 10 * d["batch"] * d["channels"] * d["frames"]


_make_inputs = _common.forward_make_inputs(
    "flaggems_upsample_linear1d", "batch", "channels", "tokens", "frames"
)
_reference = _common.forward_reference("flaggems_upsample_linear1d")
_baselines = _common.forward_baselines(
    "flaggems_upsample_linear1d",
    (
        "torch",
        "torch",
        "the same frames by torch's F.interpolate(mode='linear') in the input dtype",
        "torch_upsample_linear1d",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_upsample_linear1d.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 64, 128, 256, 512, 1024, 2048, 4096), "tile_n",
         "output frames per program (of one row); None: FlagGems' 256"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (FlagGems passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_upsample_linear1d",
    description=(
        "FlagGems' 1-D linear upsampling (v5.0.2), a TTS length regulator stretching "
        "token features to mel frames: one program per row and 256 output frames blends "
        "the two neighbouring input samples of each in fp32"
    ),
    dims=(
        Dim("batch", "utterances in the batch", "batch"),
        Dim("channels", "feature channels per utterance", "rows"),
        Dim("tokens", "input samples per row (speech tokens)"),
        # block_size tiles a row's output frames (the grid is rows x cdiv(frames, block)).
        Dim("frames", "output samples per row (mel frames)", "row_len"),
    ),
    trials=(
        Trial(
            "cosyvoice_30s_1utt",
            {"batch": 1, "channels": 80, "tokens": 1500, "frames": 2584},
            "one 30-second utterance, 1500 tokens stretched to 2584 frames at 80 channels: "
            "880 programs, 0.65 MB moved (bf16)",
        ),
        Trial(
            "cosyvoice_30s_batch256",
            {"batch": 256, "channels": 80, "tokens": 1500, "frames": 2584},
            "the same for a 256-utterance offline batch: 225,280 programs, 167 MB moved (bf16)",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # an fp32 blend of two samples against fp64, rounded to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="upsample_linear1d",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
