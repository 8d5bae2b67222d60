"""vLLM's GDN prefill initial-state gather (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_gdn_initial_states` and never committed.

Why this one as the set's state gather: every gated-delta-net layer of Qwen3-Next and
Qwen3.5 (three of every four layers) runs it on each prefill step on the Triton/FLA
chunked path, to hand the chunked gated delta rule the recurrent state each prefill
sequence starts from: one program per sequence and 1024 values of its [v_heads, head_v,
head_k] state reads the sequence's flag and slot, then copies that block of the slot's
state from the layer's pool into a contiguous buffer, or writes zeros for a sequence that
starts fresh (its loads masked off, no read at all).  A large, regular copy (a state is
0.5 M values at tensor parallel 1) whose source rows are picked per sequence and half of
which are zero fills, with a programmatic-dependent-launch wait on Hopper.  The large trial
is a 64-sequence chunked-prefill step of Qwen3-Next-80B-A3B on one GPU (32 value heads of
128 x 128: 32,768 programs, up to 134 MB moved); the small one a 4-sequence prefill at
tensor parallel 4 (8 value heads: 512 programs, up to 2.1 MB moved).  Memory-bound; the
floor is reading the continuing sequences' states once and writing every row once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_gdn_initial_states")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Every sequence's state row read once (an upper bound: a fresh sequence's row is not
    read, about half of them) and written once in the dtype, plus the int32 slots and the
    bool flags."""
    row = d["v_heads"] * d["head_v"] * d["head_k"]
    return 2 * d["seqs"] * row * ELEMENT_SIZE[dtype] + d["seqs"] * (4 + 1)


def flops(d: Mapping[str, int]) -> int:
    """None counted: a copy or a zero fill."""
    return 0


_make_inputs = _common.forward_make_inputs(
    "vllm_gdn_initial_states", "seqs", "slots", "v_heads", "head_k", "head_v"
)
_reference = _common.forward_reference("vllm_gdn_initial_states")
_baselines = _common.forward_baselines(
    "vllm_gdn_initial_states",
    (
        "torch",
        "torch",
        "vLLM's former path by torch ops: an index_select of the sequences' slots, then the "
        "fresh sequences' rows zeroed by a boolean-indexed assignment",
        "torch_gather",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_gdn_initial_states.launcher")


TRITON_KNOBS = (
    Knob("block", "int", (None, 256, 512, 1024, 2048, 4096, 8192), "tile_n",
         "state values per program (one masked load and store); None: vLLM's "
         "min(next_power_of_2(row), 1024)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: vLLM's 8"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software pipeline stages (the kernel has no loop to pipeline); None: Triton's "
         "default 3 (vLLM passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_gdn_initial_states",
    description=(
        "vLLM's GDN prefill initial-state gather (v0.34.0, _gather_initial_states_kernel): "
        "one program per prefill sequence and 1024 state values copies that block of the "
        "sequence's slot from the layer's SSM state pool into a contiguous buffer, or "
        "writes zeros for a sequence without an initial state"
    ),
    dims=(
        Dim("seqs", "prefill sequences in the step", "batch"),
        Dim("slots", "state slots of the layer's pool (at least seqs)"),
        Dim("v_heads", "value heads on this rank (one head_v x head_k state each)"),
        Dim("head_k", "key head size"),
        Dim("head_v", "value head size"),
    ),
    trials=(
        Trial(
            "prefill4_qwen3_next_80b_tp4",
            {"seqs": 4, "slots": 64, "v_heads": 8, "head_k": 128, "head_v": 128},
            "a 4-sequence prefill step through a GDN layer of Qwen3-Next-80B-A3B (32 value "
            "heads of 128 x 128) at tensor parallel 4, a 64-slot pool: 128 x 4 = 512 "
            "programs, up to 2.1 MB moved (bf16)",
        ),
        Trial(
            "prefill64_qwen3_next_80b_tp1",
            {"seqs": 64, "slots": 128, "v_heads": 32, "head_k": 128, "head_v": 128},
            "a 64-sequence chunked-prefill step through the same layer on one GPU, a "
            "128-slot pool: 512 x 64 = 32,768 programs, up to 134 MB moved (bf16)",
        ),
    ),
    backoff_dim="seqs",
    make_inputs=_make_inputs,
    # The row a program tiles is a sequence's whole state (the grid is its blocks x the
    # sequences), not one key row: the tile moves stop once a block spans it.
    shape_metrics=lambda d: {"row_len": d["v_heads"] * d["head_v"] * d["head_k"]},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a copy and zeros, checked exactly
    tolerances={"bfloat16": 1e-15, "float16": 1e-15, "float32": 1e-15},
    entry_point="gather_initial_states",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
