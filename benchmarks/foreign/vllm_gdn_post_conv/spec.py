"""vLLM's fused GDN prefill post-conv preparation (vLLM v0.34.0, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_gdn_post_conv` and never committed.

Why this one as the set's fan-out prologue: every gated-delta-net layer of Qwen3-Next and
Qwen3.5 (three of every four layers) runs it on each prefill, between the causal conv1d and
the chunked gated delta rule, in place of a chain of splits, rearranges, contiguous copies,
two L2 norms and the gating.  One launch, two kinds of program over BLOCK_T-token slabs:
a key head's programs read its q and k rows from the conv output, L2-normalize each row in
fp32 and write them to contiguous q and k; a value head's programs copy its v rows and
compute the per-token gate g = -exp(A_log) softplus(a + dt_bias) and beta = sigmoid(b) in
fp32.  No loop and no reuse: one masked tile load, a row reduction and stores per program,
the q/k programs doing reductions and the v programs a strided copy of the same width plus
two transcendental scalars per token.  The large trial is an 8192-token prefill chunk of
Qwen3-Next-80B-A3B on one GPU (16 key heads and 32 value heads of 128: 24,576 programs,
270 MB moved); the small one a 300-token prompt at tensor parallel 4 (4 key and 8 value
heads: 228 programs, 2.5 MB moved).  Memory-bound; the floor is reading the conv output and
the gate projections once and writing q, k, v, g and beta once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_gdn_post_conv")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("memory-bound", "elementwise")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The conv output and the a and b projections read once in the dtype, the two fp32
    parameters once, q, k and v written once in the dtype and g and beta once in fp32."""
    es = ELEMENT_SIZE[dtype]
    width = 2 * d["k_heads"] * d["head_k"] + d["v_heads"] * d["head_v"]
    return (
        2 * es * d["tokens"] * width
        + 2 * es * d["tokens"] * d["v_heads"]
        + 2 * 4 * d["v_heads"]
        + 2 * 4 * d["tokens"] * d["v_heads"]
    )


def flops(d: Mapping[str, int]) -> int:
    """The L2 norms: a square-and-add and a scale per q and k element (the per-row sqrt and
    the gating's few scalar ops per token and value head not counted)."""
    return 3 * 2 * d["tokens"] * d["k_heads"] * d["head_k"]


_make_inputs = _common.forward_make_inputs(
    "vllm_gdn_post_conv", "tokens", "k_heads", "v_heads", "head_k", "head_v"
)
_reference = _common.forward_reference("vllm_gdn_post_conv")
_baselines = _common.forward_baselines(
    "vllm_gdn_post_conv",
    (
        "torch",
        "torch",
        "the chain the kernel replaces, by torch ops: split, reshape and contiguous per "
        "tensor, F.normalize of q and k in fp32, the gating in fp32",
        "torch_post_conv",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_gdn_post_conv.launcher")


TRITON_KNOBS = (
    Knob("block_t", "int", (None, 1, 2, 4, 8, 16, 32, 64, 128), "rows_per_program",
         "tokens per program (each program takes one head's whole row for them); None: "
         "vLLM's 16"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: vLLM's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software pipeline stages (the kernel has no loop to pipeline); None: vLLM's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_gdn_post_conv",
    description=(
        "vLLM's fused GDN prefill post-conv preparation (v0.34.0, _fused_post_conv_kernel): "
        "per 16 tokens, a key head's program L2-normalizes its q and k rows from the causal "
        "conv1d output into contiguous q and k, a value head's program copies its v rows and "
        "computes the gate -exp(A_log) softplus(a + dt_bias) and beta = sigmoid(b) in fp32"
    ),
    dims=(
        Dim("tokens", "prefill tokens in the step (all sequences packed)", "rows"),
        Dim("k_heads", "key heads on this rank (linear_num_key_heads / tensor parallel)"),
        Dim("v_heads", "value heads on this rank (a multiple of k_heads)"),
        Dim("head_k", "key head size (q and k)", "row_len"),
        Dim("head_v", "value head size"),
    ),
    trials=(
        Trial(
            "prompt300_qwen3_next_80b_tp4",
            {"tokens": 300, "k_heads": 4, "v_heads": 8, "head_k": 128, "head_v": 128},
            "a 300-token prompt through a GDN layer of Qwen3-Next-80B-A3B (16 key and 32 "
            "value heads of 128) at tensor parallel 4: 19 x 12 = 228 programs, 2.5 MB moved "
            "(bf16)",
        ),
        Trial(
            "prefill8k_qwen3_next_80b_tp1",
            {"tokens": 8192, "k_heads": 16, "v_heads": 32, "head_k": 128, "head_v": 128},
            "an 8192-token prefill chunk through the same layer on one GPU: 512 x 48 = "
            "24,576 programs, 270 MB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # q and k: fp32 norms of the same rounded inputs, rounded once to the dtype (1/sqrt vs
    # torch's division may differ by an ulp); v a copy; g and beta fp32 transcendentals
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="post_conv_prep",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
