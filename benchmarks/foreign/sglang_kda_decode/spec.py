"""SGLang's Kimi Delta Attention decode step (SGLang v0.5.9, Apache-2.0; from
flash-linear-attention, MIT), as kbopt sees it: a kernel nobody here wrote, fetched into the
git-ignored third_party/ by `scripts/fetch_third_party.py sglang_kda_decode` and never
committed.

Why this one: Kimi-Linear-48B-A3B runs three of every four layers as Kimi Delta Attention,
and on every decode step SGLang's `KimiLinearAttnBackend.forward_decode` runs each of them,
after the q, k and v short convolutions, through one launch of
`fused_sigmoid_gating_delta_rule_update` with is_kda=True: one single-warp program per
(request, head, 32 of the state's 128 value columns) loads its request's [128, 32] fp32
tile of the head's state from the pool (a CUDA-graph padded row, slot -1, starts from
zero and stores nothing), computes the forget gate inline, a vector over the key channels
(g = -exp(A_log) softplus(a + dt_bias), 128 softpluses where Qwen3-Next's gated delta rule
has one scalar), beta = sigmoid(b) and the q/k L2 norms, decays the tile row by row by
exp(g), applies the delta-rule correction and the rank-1 update, reads out o = S^T q and
stores the tile back in place.  Two column sums over the 128 key rows a program, no tensor
cores: the floor is reading and writing every live request's 64 KiB per head of fp32 state
once.  Nearest: `vllm_gdn_gated_decode` (vLLM's copy of the same FLA kernel in its gated
delta rule mode: a scalar gate per head, the state [dv, dk] in the dtype, 4 warps) and
`sglang_gdn_verify` (the same recurrence over draft tokens, the gates precomputed);
`vllm_kda_state_commit` replays accepted draft tokens into KDA states after a verify, and the
`sglang_kda_*` kernels are Kimi-Linear's chunked prefill.  Both trials are a Kimi-Linear
KDA layer (32 heads of 128, split over tensor parallelism), the batch run at a CUDA-graph
size: 250 requests in the 256-request graph at TP 2 (16 heads a rank: 16,384 programs, 524
MB of state read and written) and 21 requests in the 24-request graph at TP 4 (8 heads: 768
programs, 22 MB of state).  The launch has two knobs that matter, the value columns a
program and its warps; the stages are no knob (the kernel's sm_90 PTX is the same at 1 to 4:
its token loop runs once a decode row).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_kda_decode")

ELEMENT_SIZE = _common.ELEMENT_SIZE
# a read-modify-write of each request's state tile with two column sums over the key rows
CONTEXTS = ("reduction", "elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each live request's fp32 state read and written once (a padded row has none); for
    every launched row, padded or not, q, k and the gate projection a (dk values a head)
    and v (dv) read once and o written once in the dtype, b read once in fp32; A_log and
    dt_bias (fp32) once; the int32 slots and sequence bounds once."""
    e = ELEMENT_SIZE[dtype]
    rows, h, dk, dv = d["reqs"] + d["pad"], d["heads"], d["dk"], d["dv"]
    state = 2 * 4 * d["reqs"] * h * dk * dv
    vectors = e * rows * h * (3 * dk + 2 * dv) + 4 * rows * h
    params = 4 * h * (1 + dk)
    return state + vectors + params + 4 * (2 * rows + 1)


def flops(d: Mapping[str, int]) -> int:
    """Per state element of every launched row (a padded row runs the same update on a zero
    tile): the decay, and a multiply and an add each for the correction S^T k, the rank-1
    update and the read-out S^T q: 7 FLOPs.  The gate's softplus and exp, the norms and
    beta are not counted."""
    return 7 * (d["reqs"] + d["pad"]) * d["heads"] * d["dk"] * d["dv"]


def shape_metrics(d: Mapping[str, int]) -> dict[str, float]:
    """The row a program reduces: each of its state tile's columns is summed over the dk
    key rows (the correction and the read-out), as are q's and k's squares for the norms."""
    return {"row_len": float(d["dk"])}


_make_inputs = _common.forward_make_inputs("sglang_kda_decode", "reqs", "pad", "heads", "dk", "dv")
_reference = _common.forward_reference("sglang_kda_decode")
_baselines = _common.forward_baselines(
    "sglang_kda_decode",
    ("torch", "torch", "the same by torch ops: the slots gathered, the per-channel gate, the "
     "norms, the decay, the delta-rule update and the read-out in fp32, the live states "
     "scattered back into the pool", "torch_kda_decode"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.sglang_kda_decode.launcher")


TRITON_KNOBS = (
    Knob("block_v", "int", (None, 8, 16, 32, 64, 128), "tile_n",
         "state columns (of dv) per program, each holding all dk key rows; None: SGLang's "
         "min(next_pow2(dv), 32)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: SGLang's 1"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_kda_decode",
    description=(
        "SGLang's Kimi Delta Attention decode step (v0.5.9, from FLA, fused_sigmoid_gating_"
        "delta_rule_update_kernel with IS_KDA, as KimiLinearAttnBackend.forward_decode "
        "launches it): one single-warp program per (request, head, 32 state columns) computes "
        "the per-key-channel forget gate and beta inline, L2-normalizes q and k, decays its "
        "[dk, 32] fp32 state tile channel by channel, applies the delta-rule update in place "
        "in the pool and reads it out"
    ),
    dims=(
        Dim("reqs", "live decoding requests (one token each, a state slot each)", "batch"),
        Dim("pad", "rows padded to SGLang's CUDA-graph size (slot -1: zero state, none stored)"),
        Dim("heads", "KDA heads on this rank (q, k and v alike in Kimi-Linear)", "num_heads"),
        Dim("dk", "key channels per head (the state's rows, one power-of-two block)", "head_dim"),
        Dim("dv", "value channels per head (the state's columns, block_v a program)"),
    ),
    # A large decode batch first, then a latency-bound one at a CUDA-graph size with padding
    # (SGLang's default capture sizes run 1, 2, 4, 8, 12, then steps of 8 from 16 to 256).
    trials=(
        Trial(
            "decode_250_kimi_linear_tp2",
            {"reqs": 250, "pad": 6, "heads": 16, "dk": 128, "dv": 128},
            "a 250-request decode step of a Kimi-Linear-48B-A3B KDA layer at TP 2 (16 of its "
            "32 heads of 128 a rank), run in SGLang's 256-request CUDA graph: 16,384 one-warp "
            "programs (256 rows x 16 heads x 4 slices of 32 columns), 384 of them on the 6 "
            "padded rows; 524 MB of fp32 state read and written in place, 530 MB moved",
        ),
        Trial(
            "decode_21_kimi_linear_tp4",
            {"reqs": 21, "pad": 3, "heads": 8, "dk": 128, "dv": 128},
            "a 21-request decode step of the same layer at TP 4 (8 heads a rank), run in "
            "SGLang's 24-request CUDA graph: 768 one-warp programs, 96 of them on the 3 padded "
            "rows; 22 MB of state, 22.3 MB moved",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    shape_metrics=shape_metrics,
    # fp32 state and arithmetic; the output rounded once to the dtype, the state kept fp32
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-4},
    entry_point="kda_decode",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
