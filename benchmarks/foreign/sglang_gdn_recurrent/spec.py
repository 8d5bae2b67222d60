"""SGLang's gated delta rule recurrence (SGLang v0.5.9, Apache-2.0; from
flash-linear-attention), as kbopt sees it: a kernel nobody here wrote, fetched into the
git-ignored third_party/ by `scripts/fetch_third_party.py sglang_gdn_recurrent` and never
committed.

The linear attention of Qwen3-Next (Gated DeltaNet): per value head a K x V fp32 state that
each token decays, corrects by the delta rule and reads; one single-warp program per 32
columns of a head's state walks the tokens in order.  Outputs: the per-token outputs (bf16)
and the final state (fp32).  No matmul: the floor is reading q, k, v, the gates and the
initial state once and writing the outputs and the final state once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_gdn_recurrent")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention-decode", "memory-bound", "small-grid")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q, k, v and the two gates read and o written once; the fp32 state read and written."""
    e = ELEMENT_SIZE[dtype]
    tokens = d["batch"] * d["seq"]
    qk = 2 * tokens * d["heads"] * d["dk"]
    vo = 2 * tokens * d["vheads"] * d["dv"]
    gates = 2 * tokens * d["vheads"]
    state = 2 * 4 * d["batch"] * d["vheads"] * d["dk"] * d["dv"]
    return e * (qk + vo + gates) + state


_make_inputs = _common.forward_make_inputs(
    "sglang_gdn_recurrent", "batch", "seq", "heads", "vheads", "dk", "dv"
)
_reference = _common.forward_reference("sglang_gdn_recurrent")
_baselines = _common.forward_baselines(
    "sglang_gdn_recurrent",
    (
        "torch",
        "torch",
        "the same recurrence as a loop of torch kernels over the tokens, in fp32",
        "torch_gdn_recurrent",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_gdn_recurrent.launcher")


TRITON_KNOBS = (
    Knob("block_v", "int", (None, 8, 16, 32, 64, 128), "tile_n",
         "state columns (of V) per program; None: SGLang's min(next_pow2(V), 32)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: SGLang's 1"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the token loop; None: SGLang's 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_gdn_recurrent",
    description=(
        "SGLang's gated delta rule recurrence (v0.5.9, Qwen3-Next linear attention): a K x V "
        "fp32 state per value head updated token by token, one single-warp program per 32 "
        "state columns, bf16 q/k/v"
    ),
    dims=(
        Dim("batch", "sequences", "batch"),
        Dim("seq", "tokens per sequence walked in order", "query_len"),
        Dim("heads", "q/k heads", "num_heads"),
        Dim("vheads", "value heads (each with its own state)"),
        Dim("dk", "q/k head size (the state's rows)", "head_dim"),
        Dim("dv", "value head size (the state's columns)"),
    ),
    trials=(
        Trial(
            "decode_qwen3_next",
            {"batch": 64, "seq": 1, "heads": 16, "vheads": 32, "dk": 128, "dv": 128},
            "a 64-sequence decode step of a Qwen3-Next linear-attention layer (16 q/k heads, "
            "32 value heads of 128): 268 MB of fp32 state read and written by 8192 one-warp "
            "programs",
        ),
        Trial(
            "recurrent_chunk",
            {"batch": 8, "seq": 64, "heads": 16, "vheads": 32, "dk": 128, "dv": 128},
            "8 sequences of 64 tokens (a speculative or short-prompt step) through the same "
            "layer: 46 MB, 1024 programs each walking 64 tokens in order",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 state and arithmetic; the outputs are rounded once to the input dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-4},
    entry_point="gdn_recurrent",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
