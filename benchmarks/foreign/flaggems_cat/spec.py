"""FlagGems' cat (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel nobody here wrote,
fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py flaggems_cat`
and never committed.

Why this one as the set's concatenation: FlagGems replaces `torch.cat` with it when it is
enabled, and DeepSeek-V3's multi-head latent attention, as transformers' DeepseekV3Attention
runs it in training and eager inference, joins every layer's query halves with
`torch.cat((q_pass, q_rot), dim=-1)`: 128 no-position columns and 64 rotated ones per head.
Both halves are contiguous here (transformers' q_pass is a split view, which FlagGems would
first copy with `.contiguous()`; that copy is left out, the join alone timed).
One launch copies both inputs: grid row y takes input y, each program copies 1024 of its
elements, decoding each flat index by two integer divisions into its output index (a
192-column row, the rotated half shifted by 128), so the reads are contiguous and the stores
contiguous runs of 128 or 64 elements.  The grid is as wide as the larger input, so half of
the second row's programs find nothing.  Memory-bound, with an integer division per element.
Both trials are DeepSeek-V3's query (128 heads, 128 + 64 columns): a 64-token decode step
(2048 programs, 6.3 MB moved) and a 4096-token training sequence (131,072 programs, 403 MB
moved).  The floor is reading both halves and writing the query once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_cat")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Both halves read once, the joined query written once."""
    elements = d["tokens"] * d["heads"] * (d["nope_dim"] + d["rope_dim"])
    return 2 * elements * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """None counted: a copy (the index decoding is integer work)."""
    del d
    return 0


_make_inputs = _common.forward_make_inputs(
    "flaggems_cat", "tokens", "heads", "nope_dim", "rope_dim"
)
_reference = _common.forward_reference("flaggems_cat")
_baselines = _common.forward_baselines(
    "flaggems_cat",
    ("torch", "torch", "torch.cat over the last dimension (what the attention layer calls)",
     "torch_cat"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.flaggems_cat.launcher")


TRITON_KNOBS = (
    Knob("block_x", "int", (None, 256, 512, 1024, 2048, 4096, 8192), "tile_n",
         "input elements copied per program; None: FlagGems' 1024"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (FlagGems passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_cat",
    description=(
        "FlagGems' cat (v5.0.2, cat_copy_func_kernel_4) of MLA's query halves over the last "
        "dimension: one grid row per input, 1024 input elements per program, each decoded "
        "to its output index and copied"
    ),
    dims=(
        Dim("tokens", "tokens (batch x sequence)"),
        Dim("heads", "attention heads"),
        Dim("nope_dim", "per-head query columns without position (the first input)"),
        Dim("rope_dim", "per-head rotated query columns (the second input)"),
    ),
    trials=(
        Trial(
            "deepseek_v3_mla_q_cat_decode64",
            {"tokens": 64, "heads": 128, "nope_dim": 128, "rope_dim": 64},
            "DeepSeek-V3's MLA query join (transformers' DeepseekV3Attention: "
            "torch.cat((q_pass, q_rot), dim=-1), 128 heads of 128 + 64 columns) for a "
            "64-token decode step: 2048 programs, 6.3 MB moved (bf16)",
        ),
        Trial(
            "deepseek_v3_mla_q_cat_train4k",
            {"tokens": 4096, "heads": 128, "nope_dim": 128, "rope_dim": 64},
            "the same for a 4096-token training sequence: 131,072 programs (32,768 of the "
            "second row masked off), 403 MB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a copy: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="cat",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
