"""FlagGems' unfold backward (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_unfold_backward` and never committed.

Why this one as the set's atomics: FlagGems replaces torch's `unfold_backward` (the
gradient of `Tensor.unfold`) with it when it is enabled, and a model that frames a waveform
with `wav.unfold(-1, window, hop)` before a learned front end gets its input gradient by
overlap-adding the frames' gradients back onto the samples.  One program per 128 frame
elements adds each one, in fp32, at its sample with an atomic add; with 400-sample windows
every 160 samples each sample takes two or three adds from neighbouring frames, which sit
in other programs.  The fp32 sum is zero-filled first and cast to the input dtype after:
three launches (two in fp32).  Both trials are Whisper's framing (25 ms windows every 10 ms
at 16 kHz, 30-second clips): one clip (9,369 programs, launch-sized) and a 64-clip training
batch (599,600 programs, large).  The floor is reading the frames' gradient once and
writing the samples' gradient once in the input dtype.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_unfold_backward")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("memory-bound", "multi-kernel")


def frames(d: Mapping[str, int]) -> int:
    """Windows per clip: (samples - window) // hop + 1, as unfold makes them."""
    return (d["samples"] - d["window"]) // d["hop"] + 1


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The frames' gradient read once, the samples' gradient written once."""
    frame_elems = d["batch"] * frames(d) * d["window"]
    return (frame_elems + d["batch"] * d["samples"]) * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """One add per frame element."""
    return d["batch"] * frames(d) * d["window"]


_make_inputs = _common.forward_make_inputs(
    "flaggems_unfold_backward", "batch", "samples", "window", "hop"
)
_reference = _common.forward_reference("flaggems_unfold_backward")
_baselines = _common.forward_baselines(
    "flaggems_unfold_backward",
    (
        "torch",
        "torch",
        "the same gradient by torch's own unfold_backward in the input dtype",
        "torch_unfold_backward",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_unfold_backward.launcher")


TRITON_KNOBS = (
    Knob("block", "int", (None, 64, 128, 256, 512, 1024, 2048), "tile_n",
         "frame elements per program (one atomic add each); None: FlagGems' 128"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (FlagGems passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_unfold_backward",
    description=(
        "FlagGems' unfold backward (v5.0.2), the overlap-add of a framed waveform's "
        "gradient: one program per 128 frame elements adds each into its sample's fp32 "
        "sum atomically (zero-filled before, cast after)"
    ),
    dims=(
        Dim("batch", "clips in the batch", "rows"),
        Dim("samples", "samples per clip (the unfolded dimension)", "row_len"),
        Dim("window", "samples per window (unfold's size)"),
        Dim("hop", "samples between windows (unfold's step)"),
    ),
    trials=(
        Trial(
            "whisper_framing_1clip",
            {"batch": 1, "samples": 480000, "window": 400, "hop": 160},
            "one 30-second 16 kHz clip framed as Whisper's STFT frames it: 2998 windows, "
            "9,369 programs, 3.4 MB moved (bf16)",
        ),
        Trial(
            "whisper_framing_batch64",
            {"batch": 64, "samples": 480000, "window": 400, "hop": 160},
            "the same for a 64-clip training batch: 599,600 programs, 215 MB moved (bf16)",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # two or three terms summed in fp32 (atomic order) against fp64, rounded to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="unfold_backward",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
