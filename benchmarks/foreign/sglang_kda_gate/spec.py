"""SGLang's Kimi Delta Attention forget gate (SGLang v0.5.9, Apache-2.0), as kbopt sees it:
a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_kda_gate` and never committed.

Kimi-Linear's KDA layers (three of every four layers of Kimi-Linear-48B-A3B) decay their
recurrent state per channel, not per head: on every prefill or extend batch
`KimiDeltaAttention.forward` turns the forget-gate projection [tokens, heads * head_dim]
into the fp32 log decay -exp(A_log[h]) * softplus(g + dt_bias) with `fused_kda_gate` before
the chunked KDA kernels read it (decode fuses it into the recurrent kernel instead).  One
program per 32-token tile and head: a [BT, 128] block-pointer tile, the bias row, softplus
with a threshold, the head's scale, an fp32 store twice the input's width.  Memory-bound;
the floor is reading g once and writing y once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_kda_gate")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """g read once in the dtype, y written once in fp32, A_log and the fp32 bias once."""
    n = d["tokens"] * d["heads"] * d["head_dim"]
    return (ELEMENT_SIZE[dtype] + 4) * n + 4 * (d["heads"] + d["heads"] * d["head_dim"])


def flops(d: Mapping[str, int]) -> int:
    """The bias add, the threshold's compare-scale and the product with -exp(A) per value;
    the softplus's exp and log not counted."""
    return 3 * d["tokens"] * d["heads"] * d["head_dim"]


_make_inputs = _common.forward_make_inputs("sglang_kda_gate", "tokens", "heads", "head_dim")
_reference = _common.forward_reference("sglang_kda_gate")
_baselines = _common.forward_baselines(
    "sglang_kda_gate",
    (
        "torch",
        "torch",
        "the same by torch's kernels in fp32: bias add, F.softplus (threshold 20), times "
        "-exp(A_log) per head",
        "torch_kda_gate",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_kda_gate.launcher")


TRITON_KNOBS = (
    Knob("block_t", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "tokens per program (the grid is ceil(tokens / block_t) x heads); None: the first "
         "autotune configuration's 32 (SGLang tunes over 32, 64, 128)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program; None: 4 (SGLang tunes over 4, 8, 16, 32)"),
    Knob("num_stages", "int", (None, 1, 2, 3), "pipeline_stages",
         "pipeline stages (no loop: little effect expected); None: 2 (SGLang tunes over 2, 3)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_kda_gate",
    description=(
        "SGLang's Kimi Delta Attention forget gate (v0.5.9, kda_gate_fwd_kernel): per "
        "token tile and head, -exp(A_log) * softplus(g + bias) over the head's channels, "
        "stored in fp32"
    ),
    dims=(
        Dim("tokens", "tokens of the prefill or extend batch", "batch"),
        Dim("heads", "KDA heads on this GPU"),
        Dim("head_dim", "channels per head (head_k_dim)", "row_len"),
    ),
    trials=(
        Trial(
            "prefill_8192_kimi_linear",
            {"tokens": 8192, "heads": 32, "head_dim": 128},
            "an 8192-token prefill chunk of Kimi-Linear-48B-A3B (32 KDA heads of 128) at TP1, "
            "one KDA layer's gate: 8192 programs, 201 MB moved",
        ),
        Trial(
            "extend_128_kimi_linear_tp4",
            {"tokens": 128, "heads": 8, "head_dim": 128},
            "a 128-token extend batch of the same model at TP4 (8 heads per GPU): 32 "
            "programs, 786 KB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 arithmetic on the same rounded input: only exp/log rounding differs
    tolerances={"bfloat16": 1e-4, "float16": 1e-4, "float32": 1e-4},
    entry_point="kda_gate",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
