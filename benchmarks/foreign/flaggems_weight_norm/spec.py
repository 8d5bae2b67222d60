"""FlagGems' weight norm over dim 0 (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_weight_norm` and never committed.

Why this one as the set's weight reparametrization: FlagGems replaces
aten::_weight_norm_interface with it when it is enabled, and torch's weight_norm (the
parametrization, or the older hook) recomputes every wrapped layer's weight as
g * v / ||v|| in each forward; GAN vocoders (HiFi-GAN, BigVGAN) and neural audio codecs
wrap every convolution with it over dim 0, so a training step (and an inference that keeps
the parametrization) launches it once per convolution.  One program per output row
(FlagGems' first configuration) walks the row in 512-column steps with 4 warps, summing
fp32 squares, then reads the row again to store v / norm * g.  Memory-bound on v, read
twice (the second read from L2 while a program's row is there).  Trials: HiFi-GAN V1's
conv_pre, Conv1d(80 mels -> 512, kernel 7), a [512, 80, 7] weight (512 programs of two
column steps, the second masked; 1.15 MB moved, bf16), and BigVGAN v2's first upsampling
(the 44 kHz 128-band 512x generator: ConvTranspose1d(1536 -> 768, kernel 16), a
[1536, 768, 16] weight: 1536 programs of 24 steps, 75.5 MB moved).  The floor is reading v
and g once and writing w and the norms once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_weight_norm")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound")  # a row norm, then a scaled copy of the row


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """v read once, w written once, g read and the norms written once."""
    rows = d["channels"]
    elements = rows * d["fan"] * d["taps"]
    return (2 * elements + 2 * rows) * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """A multiply and an add per element for the norm, a divide and a multiply for w."""
    return 4 * d["channels"] * d["fan"] * d["taps"]


_make_inputs = _common.forward_make_inputs("flaggems_weight_norm", "channels", "fan", "taps")
_reference = _common.forward_reference("flaggems_weight_norm")
_baselines = _common.forward_baselines(
    "flaggems_weight_norm",
    (
        "torch",
        "torch",
        "the same weight and norms by torch's aten::_weight_norm_interface (its fused CUDA kernel)",
        "torch_weight_norm",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_weight_norm.launcher")


TRITON_KNOBS = (
    Knob("block_rows", "int", (None, 1, 2, 4, 8, 16), "rows_per_program",
         "weight rows (dim-0 slices) per program; None: the tuning YAML's first value, 1 "
         "(its 32 left out: with 2048 columns and one warp the fp32 accumulator is 2048 "
         "values per thread, minutes of sm_90 compile)"),
    Knob("block_cols", "int", (None, 128, 256, 512, 1024, 2048), "tile_k",
         "columns of the rows loaded per loop step (the reduction tile, both passes); "
         "None: the tuning YAML's first value, 512"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: the tuning YAML's first value, 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipelined loop steps in flight; None: the config loader's default, 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_weight_norm",
    description=(
        "FlagGems' weight norm over dim 0 (v5.0.2, weight_norm_kernel_first): one program "
        "per weight row sums fp32 squares in 512-column steps (4 warps, 2 stages), then "
        "reads the row again to store v / norm * g and the norm"
    ),
    dims=(
        Dim("channels", "size of the weight's dim 0 (the norms' count, one row each)", "rows"),
        Dim("fan", "size of the weight's dim 1 (the other channel side)"),
        Dim("taps", "the convolution's kernel width (dim 2)"),
    ),
    trials=(
        Trial(
            "hifigan_v1_conv_pre",
            {"channels": 512, "fan": 80, "taps": 7},
            "HiFi-GAN V1's conv_pre, Conv1d(80 mels -> 512, kernel 7), weight-normed over "
            "dim 0 in each forward: a [512, 80, 7] weight, 512 programs of two 512-column "
            "steps (the second masked), 1.15 MB moved (bf16)",
        ),
        Trial(
            "bigvgan_v2_ups0",
            {"channels": 1536, "fan": 768, "taps": 16},
            "BigVGAN v2's first upsampling (44 kHz, 128 bands, 512x: ConvTranspose1d(1536 -> "
            "768, kernel 16), dim 0 its input channels): a [1536, 768, 16] weight, 1536 "
            "programs of 24 steps per pass, 75.5 MB moved (bf16)",
        ),
    ),
    backoff_dim="channels",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums of up to 12,288 squares, a divide and a multiply, rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="weight_norm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
