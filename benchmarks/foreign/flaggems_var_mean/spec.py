"""FlagGems' var_mean along the last dimension (FlagGems v5.0.2, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_var_mean` and never committed.

Why this one as the set's reduction: FlagGems replaces torch's `var_mean` with it when it is
enabled, and model code that writes its LayerNorm-style statistics by hand (a modulated
norm whose scale and shift come from a conditioning vector, as diffusion transformers'
adaptive norms do) asks for each token's mean and variance over the hidden size.  One
program per row (the tuning YAML's first row tile) walks the row in 1024-column steps,
every lane keeping its own Welford mean, count and sum of squared deviations in fp32, then
merges its lanes with a `tl.reduce` over three values.  Both trials are Flux.1-dev's
3072-wide hidden states over 4608 tokens per 1024 x 1024 image (4096 image patches and 512
text tokens): one image (4608 programs, launch-sized) and a 16-image batch (73,728
programs, large).  The floor is reading the hidden states once and writing two values per
row.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_var_mean")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The hidden states read once, a variance and a mean per row written."""
    return d["rows"] * (d["hidden"] + 2) * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """About eight per element for the per-lane Welford update (count, mean, deviation
    products), the lane merge not counted."""
    return 8 * d["rows"] * d["hidden"]


_make_inputs = _common.forward_make_inputs("flaggems_var_mean", "rows", "hidden")
_reference = _common.forward_reference("flaggems_var_mean")
_baselines = _common.forward_baselines(
    "flaggems_var_mean",
    (
        "torch",
        "torch",
        "the same statistics by torch.var_mean in the input dtype",
        "torch_var_mean",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_var_mean.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 1, 2, 4, 8), "tile_m",
         "rows per program; None: the tuning YAML's first value, 1"),
    Knob("block_n", "int", (None, 256, 512, 1024, 2048, 4096), "tile_n",
         "columns per loop step (the lanes' Welford statistics are BLOCK_M x BLOCK_N); "
         "None: the tuning YAML's first value, 1024"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: the tuning YAML's first value, 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipelining stages of the column loop; None: FlagGems' config loader's "
         "default, 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_var_mean",
    description=(
        "FlagGems' var_mean over the last dimension (v5.0.2), per-token statistics of "
        "hidden states: one program per row keeps per-lane Welford statistics in fp32 over "
        "1024-column steps, then merges them with a tl.reduce"
    ),
    dims=(
        Dim("rows", "rows (tokens) whose statistics are taken", "rows"),
        Dim("hidden", "hidden size (columns reduced per row)", "row_len"),
    ),
    trials=(
        Trial(
            "flux1_dev_1image",
            {"rows": 4608, "hidden": 3072},
            "Flux.1-dev's hidden states for one 1024 x 1024 image (4096 patches and 512 "
            "text tokens): 4608 programs of 3 steps, 28.3 MB moved (bf16)",
        ),
        Trial(
            "flux1_dev_batch16",
            {"rows": 73728, "hidden": 3072},
            "the same for a 16-image batch: 73,728 programs, 453 MB moved (bf16)",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 Welford statistics against an fp64 two-pass, rounded to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-4},
    entry_point="var_mean",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
