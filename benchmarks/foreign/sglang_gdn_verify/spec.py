"""SGLang's gated delta rule verify kernel (SGLang v0.5.9, Apache-2.0; adapted there from
flash-linear-attention), as kbopt sees it: a kernel nobody here wrote, fetched into the
git-ignored third_party/ by `scripts/fetch_third_party.py sglang_gdn_verify` and never
committed.

Why this one: Qwen3-Next is served with its MTP head as the draft model (SGLang's NEXTN
speculative decoding, 3 steps, one draft per step, 4 draft tokens), and every target-verify
pass runs each of its Gated DeltaNet layers through this kernel
(`fused_recurrent_gated_delta_rule_update`, the hybrid GDN backend's verify path), with the
backend's intermediate-state cache.  One single-warp program per request, value head and 8
columns of the head's 128 x 128 fp32 state walks the request's draft tokens in order: q
and k L2-normalised, the state decayed by exp(g), the delta rule's correction and rank-1
update, the output S^T q, and the whole state slice stored to the cache after every token,
so that the verifier can keep the state after any accepted prefix; the pool is only read.
No tensor cores: the traffic is the state read once and written `step` times, about one
flop per byte.  Nearest: `sglang_gdn_recurrent` (the same recurrence from the same FLA file
over precomputed gates, the state written once at the end, 32 columns a program) and
`sglang_seg_la_mtp` (the same verify pattern and cache for Ling's decayed linear attention,
no delta rule, no GQA); `vllm_gdn_gated_decode` takes one token with the gates computed
inline and updates the pool in place.  Both trials are a Qwen3-Next-80B-A3B GDN layer at
TP 4 (4 q/k heads and 8 value heads of 128 per GPU) verifying 4 draft tokens per request:
64 requests, and 8 (a latency-bound deployment, a launch-sized grid).  Outputs: o in the
inputs' dtype and the fp32 cache.  The floor is reading q, k, v, the gates and the
requests' states once and writing the output and the `step` cached states once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_gdn_verify")

ELEMENT_SIZE = _common.ELEMENT_SIZE
# a recurrence over a few tokens per program, streaming the fp32 state to the cache
CONTEXTS = ("attention-decode", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q, k and v read once and o written once, in the dtype (q and k once per key head,
    though every value head of its group and every column slice reads them again); g and
    beta read once in fp32; each request's fp32 state read once from the pool and written
    `step` times to the cache; the int32 slots, cache entries and sequence bounds read
    once."""
    tokens = d["reqs"] * d["step"]
    qk = 2 * tokens * d["heads"] * d["dk"]
    vo = 2 * tokens * d["vheads"] * d["dv"]
    gates = 2 * 4 * tokens * d["vheads"]
    state = 4 * d["reqs"] * d["vheads"] * d["dk"] * d["dv"]
    indices = 4 * (3 * d["reqs"] + 1)
    return ELEMENT_SIZE[dtype] * (qk + vo) + gates + (1 + d["step"]) * state + indices


def flops(d: Mapping[str, int]) -> int:
    """Per draft token and value head, three multiply-adds per state element: the
    correction S^T k, the rank-1 update k u^T and the output S^T q (the decay, the norms
    and the exps not counted)."""
    return 6 * d["reqs"] * d["step"] * d["vheads"] * d["dk"] * d["dv"]


_make_inputs = _common.forward_make_inputs(
    "sglang_gdn_verify", "reqs", "step", "heads", "vheads", "dk", "dv"
)
_reference = _common.forward_reference("sglang_gdn_verify")
_baselines = _common.forward_baselines(
    "sglang_gdn_verify",
    ("torch", "torch", "the same recurrence as a loop of torch kernels over the draft steps, "
     "fp32, all requests at once, the cache written in place", "torch_gdn_verify"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.sglang_gdn_verify.launcher")


TRITON_KNOBS = (
    Knob("block_v", "int", (None, 4, 8, 16, 32, 64, 128), "tile_n",
         "state columns (of dv) per program, each holding all dk rows; None: SGLang's "
         "min(next_pow2(dv), 8)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: SGLang's 1"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the draft-token loop; None: SGLang's 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_gdn_verify",
    description=(
        "SGLang's gated delta rule verify kernel (v0.5.9, from FLA, fused_recurrent_gated_"
        "delta_rule_update_fwd_kernel; Qwen3-Next's GDN layers in a target-verify pass): one "
        "single-warp program per request, value head and 8 state columns walks the draft "
        "tokens, L2-normed q/k, decay, delta-rule rank-1 update and output without tensor "
        "cores, the fp32 state slice stored to the intermediate-state cache after every token"
    ),
    dims=(
        Dim("reqs", "requests in the verify batch", "batch"),
        Dim("step", "draft tokens per request, walked in order", "query_len"),
        Dim("heads", "q/k heads", "num_heads"),
        Dim("vheads", "value heads (each with its own state)"),
        Dim("dk", "q/k head size (the state's rows)", "head_dim"),
        Dim("dv", "value head size (the state's columns)"),
    ),
    trials=(
        Trial(
            "verify_qwen3_next_tp4_64x4",
            {"reqs": 64, "step": 4, "heads": 4, "vheads": 8, "dk": 128, "dv": 128},
            "a verify pass of 64 requests with 4 draft tokens each (NEXTN, 3 steps) through a "
            "Qwen3-Next-80B-A3B GDN layer at TP 4 (4 q/k heads, 8 value heads of 128): 8,192 "
            "one-warp programs (64 requests x 8 heads x 16 slices of 8 columns) walking 4 "
            "tokens each; 169 MB moved, 134 MB of it the cached states",
        ),
        Trial(
            "verify_qwen3_next_tp4_8x4",
            {"reqs": 8, "step": 4, "heads": 4, "vheads": 8, "dk": 128, "dv": 128},
            "a verify pass of 8 requests with 4 draft tokens each through the same layer (a "
            "latency-bound deployment): 1,024 one-warp programs, 21.2 MB moved",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 state and arithmetic; the outputs are rounded once to the dtype, the cached
    # states stay fp32
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-4},
    entry_point="gdn_verify",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
