"""FlagGems' count_nonzero along the last dimension (FlagGems v5.0.2, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_count_nonzero` and never committed.

Why this one as the set's reduction: FlagGems replaces torch's `count_nonzero` with it when
it is enabled, and models with ReLU MLPs count each token's active neurons (the activation
sparsity that sparse-inference schemes measure and exploit: `h.count_nonzero(dim=-1)`).  A
row longer than 2048 takes two launches: one program per row and 2048-column block counts
its non-zeros into int64, then one program per row sums those counts.  The first launch
reads the whole activation once with one 2048-wide compare-and-sum per program; the second
is a tiny tail launch.  Both trials are ProSparse-Llama-2-7B's MLP (11,008 ReLU activations
per token, about 89% zeros): a 64-token decode step (384 programs, launch-sized) and an
8192-token prefill (49,152 programs, large).  The floor is reading the activations once
and writing one int64 count per token.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_count_nonzero")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound", "multi-kernel")
INT64 = 8


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The activations read once, one int64 count per token written."""
    return d["tokens"] * (d["inter"] * ELEMENT_SIZE[dtype] + INT64)


def flops(d: Mapping[str, int]) -> int:
    """One compare and one add per activation."""
    return 2 * d["tokens"] * d["inter"]


_make_inputs = _common.forward_make_inputs("flaggems_count_nonzero", "tokens", "inter")
_reference = _common.forward_reference("flaggems_count_nonzero")
_baselines = _common.forward_baselines(
    "flaggems_count_nonzero",
    (
        "torch",
        "torch",
        "the same counts by torch.count_nonzero in the input dtype",
        "torch_count_nonzero",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_count_nonzero.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 512, 1024, 2048, 4096, 8192), "tile_n",
         "columns counted per program of the first launch (the row's blocks); None: "
         "FlagGems' 2048"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program of the first launch; None: Triton's default 4"),
    Knob("combine_block", "int", (None, 1024, 2048, 4096), "tile_n",
         "block counts summed per loop step of the second launch (its autotuned BLOCK_SIZE); "
         "None: the tuning YAML's first value, 1024"),
    Knob("combine_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program of the second launch; None: the tuning YAML's 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_count_nonzero",
    description=(
        "FlagGems' count_nonzero over the last dimension (v5.0.2), the active neurons of each "
        "token of a ReLU MLP: int64 counts per row and 2048-column block, then each row's "
        "block counts summed (two launches)"
    ),
    dims=(
        Dim("tokens", "tokens (rows counted)", "rows"),
        Dim("inter", "MLP intermediate size (columns per row)", "row_len"),
    ),
    trials=(
        Trial(
            "prosparse_llama2_7b_decode64",
            {"tokens": 64, "inter": 11008},
            "ProSparse-Llama-2-7B's MLP activations for a 64-token decode step: 64 x 6 "
            "programs, 1.4 MB moved (bf16)",
        ),
        Trial(
            "prosparse_llama2_7b_prefill8k",
            {"tokens": 8192, "inter": 11008},
            "the same for an 8192-token prefill: 49,152 programs, 180 MB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # integer counts: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="count_nonzero",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
