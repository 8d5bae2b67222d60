"""SGLang's gated RMSNorm (SGLang v0.5.9, Apache-2.0; from FLA / Tri Dao's gated layer
norm), as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored
third_party/ by `scripts/fetch_third_party.py sglang_rms_norm_gated` and never committed.

Why this one: Qwen3-Next (and Qwen3.5's, Jet-Nemotron's linear layers) end every gated
delta net layer with `RMSNormGated`: the recurrence's output and the gate z from the QKVZ
projection, [tokens, heads, head_dim] each, are viewed as tokens x heads rows of head_dim
(128) values; each row is RMS-normalized in fp32, scaled by the weight and multiplied by
silu(z).  Unlike the set's row norms (`liger_rmsnorm`, `liger_fused_add_rms_norm`: one
hidden-wide row of thousands of values per program or row block), the rows here are a
head wide, so a program is SGLang's 1 warp over a [ROWS_PER_BLOCK, 128] tile with the row
count scaled to the SM count (at most 4 rows), a second full-size operand (the gate) is
read, and the grid is tens of thousands of tiny programs at prefill.  `vllm_qk_norm_rope_gate`
also normalizes head-wide rows but rotates them and gates elsewhere.  The large trial is an
8192-token prefill chunk of Qwen3-Next-80B-A3B at TP 2 (16 value heads of 128): 131,072
rows, 32,768 programs, about 101 MB moved; the small one a 32-request decode step of the
same (512 rows, 2 a program: 256 programs, 0.4 MB).  The floor is reading x and z once,
writing y and the fp32 rstd once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_rms_norm_gated")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("normalization", "reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x and z read once, y written once, the weight read once, an fp32 rstd written per
    row."""
    es = ELEMENT_SIZE[dtype]
    rows = d["tokens"] * d["heads"]
    return 3 * es * rows * d["head_dim"] + es * d["head_dim"] + 4 * rows


def flops(d: Mapping[str, int]) -> int:
    """About 9 per value: the square and its sum, the rstd and weight products, silu (a
    sigmoid counted as 3 and a product) and the gate product."""
    return 9 * d["tokens"] * d["heads"] * d["head_dim"]


_make_inputs = _common.forward_make_inputs("sglang_rms_norm_gated", "tokens", "heads", "head_dim")
_reference = _common.forward_reference("sglang_rms_norm_gated")
_baselines = _common.forward_baselines(
    "sglang_rms_norm_gated",
    (
        "torch",
        "torch",
        "the same by torch ops (SGLang's rms_norm_ref with upcast): fp32 statistics, weight "
        "and silu gate, rounded once",
        "torch_rms_norm_gated",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_rms_norm_gated.launcher")


TRITON_KNOBS = (
    Knob("rows_per_block", "int", (None, 1, 2, 4, 8, 16, 32), "rows_per_program",
         "head rows per program (ROWS_PER_BLOCK, one [rows, BLOCK_N] tile); None: SGLang's "
         "calc_rows_per_block, min(next_power_of_2(cdiv(rows, 2 * SMs)), 4)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: SGLang's min(max(BLOCK_N // 256, 1), 8), 1 for a "
         "128-wide head"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_rms_norm_gated",
    description=(
        "SGLang's gated RMSNorm (v0.5.9, fla/layernorm_gated.py's _layer_norm_fwd_1pass_kernel "
        "as rms_norm_gated launches it for Qwen3-Next's gated delta net output): per up to 4 "
        "head-wide rows, fp32 RMS statistics, times the weight and silu(z), 1 warp"
    ),
    dims=(
        Dim("tokens", "tokens in the step (all sequences packed)"),
        Dim("heads", "linear-attention value heads on this rank (one row each per token)"),
        Dim("head_dim", "values per head (the normalized row)", "row_len"),
    ),
    trials=(
        Trial(
            "prefill_8192_qwen3_next_80b_tp2",
            {"tokens": 8192, "heads": 16, "head_dim": 128},
            "an 8192-token prefill chunk of Qwen3-Next-80B-A3B at TP 2 (16 of its 32 value "
            "heads of 128): 131,072 rows, 4 a program (32,768 programs of 1 warp), about "
            "101 MB moved",
        ),
        Trial(
            "decode_32_qwen3_next_80b_tp2",
            {"tokens": 32, "heads": 16, "head_dim": 128},
            "a 32-request decode step of Qwen3-Next-80B-A3B at TP 2: 512 rows, 2 a program "
            "on a 132-SM GPU (256 programs), 0.4 MB moved",
        ),
    ),
    backoff_dim="tokens",
    # the kernel's rows are the tokens' heads
    shape_metrics=lambda d: {"rows": d["tokens"] * d["heads"]},
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 statistics and gate, one rounding to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="rms_norm_gated",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
