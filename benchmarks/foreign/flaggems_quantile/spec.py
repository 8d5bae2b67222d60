"""FlagGems' quantile of short rows (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_quantile flaggems_topk` and never committed.

Why this one as the set's sort: FlagGems replaces torch's `quantile` with it when it is
enabled, and percentile clipping before block quantization sets each group's scale from a
high quantile of its values instead of their absolute maximum, so that one outlier does not
flatten the group (`x.view(-1, 128).quantile(q, dim=-1)`).  For rows of at most 1024 values
FlagGems sorts each row inside one program: a bitonic sort in registers (topk.py's argsort,
log2(n) (log2(n) + 1) / 2 compare-and-swap rounds, fp32), then each quantile's two
neighbouring order statistics picked by masked sums and interpolated linearly.  Both trials
are DeepSeek-V3's 128-wide quantization groups of its 7168-wide hidden states with the 1st
and 99th percentiles: a 64-token decode step (3,584 rows, launch-sized) and an 8192-token
prefill (458,752 rows, large).  The floor is reading every value once and writing the
quantiles once; the sort's shuffles, not the bytes, are expected to set the time.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_quantile", "flaggems_topk")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction",)


def rows(d: Mapping[str, int]) -> int:
    """Groups sorted: tokens x hidden / group."""
    return d["tokens"] * d["hidden"] // d["group"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Every value read once, the quantiles written once (the q list is a few bytes)."""
    return (d["tokens"] * d["hidden"] + rows(d) * d["quantiles"]) * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """One compare per value and bitonic round (log2(g) (log2(g) + 1) / 2 rounds for a
    group of g, a power of two)."""
    stages = d["group"].bit_length() - 1
    return d["tokens"] * d["hidden"] * stages * (stages + 1) // 2


_make_inputs = _common.forward_make_inputs(
    "flaggems_quantile", "tokens", "hidden", "group", "quantiles"
)
_reference = _common.forward_reference("flaggems_quantile")
_baselines = _common.forward_baselines(
    "flaggems_quantile",
    (
        "torch",
        "torch",
        "the same quantiles by torch.quantile (a sort, then the interpolation), in fp32",
        "torch_quantile",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_quantile.launcher")


TRITON_KNOBS = (
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program (one row's sort); None: Triton's default 4 (FlagGems passes "
         "none, and its row and quantile tiles are the padded sizes, no choice)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_quantile",
    description=(
        "FlagGems' quantile of rows of at most 1024 values (v5.0.2), percentile clipping "
        "of 128-wide quantization groups: one program per row sorts it in registers "
        "(bitonic, fp32) and interpolates each quantile between two order statistics"
    ),
    dims=(
        Dim("tokens", "tokens", "rows"),
        Dim("hidden", "hidden size (values per token)"),
        Dim("group", "values per quantization group (the sorted row)", "row_len"),
        Dim("quantiles", "quantiles per group"),
    ),
    trials=(
        Trial(
            "deepseek_v3_clip_decode64",
            {"tokens": 64, "hidden": 7168, "group": 128, "quantiles": 2},
            "DeepSeek-V3's hidden states for a 64-token decode step in 128-wide groups, "
            "1st and 99th percentiles: 3,584 programs, 0.93 MB moved (bf16)",
        ),
        Trial(
            "deepseek_v3_clip_prefill8k",
            {"tokens": 8192, "hidden": 7168, "group": 128, "quantiles": 2},
            "the same for an 8192-token prefill: 458,752 programs, 119 MB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # an fp32 interpolation between two exact order statistics, rounded to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="quantile",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
