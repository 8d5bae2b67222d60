"""vLLM's fused sigmoid-gating gated delta rule decode step (vLLM v0.34.0, Apache-2.0; from
flash-linear-attention, MIT), as kbopt sees it: a kernel nobody here wrote, fetched into
the git-ignored third_party/ by `scripts/fetch_third_party.py vllm_gdn_gated_decode` and
never committed.

Why this one as the set's linear-attention decode: every decode step of Qwen3-Next (and
Qwen3.5's Gated DeltaNet layers) runs each GDN layer's recurrence through
`fused_sigmoid_gating_delta_rule_update`: one program per (sequence, value head, 32 rows
of the head's [dv, dk] state) looks the sequence's slot up in the state pool (returning on
the null slot), loads its state tile in the pool's dtype, computes the gate g =
-exp(A_log) softplus(a + dt_bias) and beta = sigmoid(b) from the token's scalars inline,
L2-normalizes q and k, decays the tile, applies the delta-rule correction and the rank-1
update, stores the tile back in place and writes o = h q.  No matmul: the floor is reading
and writing every live slot's state once.  Both trials are Qwen3-Next-80B-A3B (16 q/k
heads, 32 value heads of 128): 512 sequences at tensor parallel 2 (8 and 16 heads a rank:
32,768 programs, 256 MiB of bf16 state read and written), and 16 sequences at tensor
parallel 4 (4 and 8 heads: 512 programs, 4 MiB).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_gdn_gated_decode")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention-decode", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Every sequence's state read and written once in the dtype; q, k, v, a, b and the
    output once; A_log and dt_bias (fp32), the int32 slots and starts."""
    e = ELEMENT_SIZE[dtype]
    n, hv = d["seqs"], d["vheads"]
    state = 2 * n * hv * d["dv"] * d["dk"] * e
    vectors = (2 * n * d["heads"] * d["dk"] + 2 * n * hv * d["dv"] + 2 * n * hv) * e
    return state + vectors + 2 * hv * 4 + (2 * n + 1) * 4


def flops(d: Mapping[str, int]) -> int:
    """Per state element: the decay, the h k product, the rank-1 update and the h q
    product (a multiply and an add each for the three sums): 7 FLOPs."""
    return 7 * d["seqs"] * d["vheads"] * d["dv"] * d["dk"]


_make_inputs = _common.forward_make_inputs(
    "vllm_gdn_gated_decode", "seqs", "heads", "vheads", "dk", "dv"
)
_reference = _common.forward_reference("vllm_gdn_gated_decode")
_baselines = _common.forward_baselines(
    "vllm_gdn_gated_decode",
    (
        "torch",
        "torch",
        "the same by torch ops: the slots gathered, the gated delta-rule step in fp32, the "
        "states scattered back into the pool",
        "torch_gdn_decode",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_gdn_gated_decode.launcher")


TRITON_KNOBS = (
    Knob("block_v", "int", (None, 8, 16, 32, 64, 128), "tile_m",
         "state rows (value channels) per program, each with all dk columns; None: vLLM's "
         "min(next_power_of_2(dv), 32)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: vLLM's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the token loop's loads; None: vLLM's 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_gdn_gated_decode",
    description=(
        "vLLM's fused sigmoid-gating gated delta rule decode (v0.34.0, "
        "fused_sigmoid_gating_delta_rule_update_kernel): one program per (sequence, value "
        "head, 32 state rows) computes the gate and beta inline, L2-normalizes q and k, "
        "updates its slot's state tile in the pool in place and reads it out"
    ),
    dims=(
        Dim("seqs", "decoding sequences (one token each)", "batch"),
        Dim("heads", "q/k heads on this rank"),
        Dim("vheads", "value heads on this rank (the heads share q/k in groups)", "num_heads"),
        Dim("dk", "key channels per head", "head_dim"),
        Dim("dv", "value channels per head"),
    ),
    trials=(
        Trial(
            "decode_512_qwen3_next_tp2",
            {"seqs": 512, "heads": 8, "vheads": 16, "dk": 128, "dv": 128},
            "a 512-sequence decode step of a Qwen3-Next-80B-A3B GDN layer at tensor "
            "parallel 2 (8 q/k and 16 value heads of 128 a rank): 32,768 programs, 256 MiB "
            "of bf16 state read and written in place",
        ),
        Trial(
            "decode_16_qwen3_next_tp4",
            {"seqs": 16, "heads": 4, "vheads": 8, "dk": 128, "dv": 128},
            "a 16-sequence decode step of the same layer at tensor parallel 4 (4 q/k and 8 "
            "value heads a rank): 512 programs, 4 MiB of state",
        ),
    ),
    backoff_dim="seqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-4},
    entry_point="gdn_gated_decode",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
