"""SGLang's Kimi Delta Attention chunk output (SGLang v0.5.9, Apache-2.0; adapted there from
flash-linear-attention), as kbopt sees it: a kernel nobody here wrote, fetched into the
git-ignored third_party/ by `scripts/fetch_third_party.py sglang_kda_chunk_o` and never
committed.

Why this one: the last kernel of Kimi Linear's chunked KDA prefill, after the intra-chunk
matrices (`sglang_kda_kkt`), the triangular solve, the WY recompute and the chunk states,
and a GEMM-shaped kernel unlike the set's others.  One program per (64 output columns,
64-token chunk, head) gates the chunk's queries channel by channel (q * scale * exp(g),
the per-key-channel decay that sets KDA apart from the gated delta rule), multiplies them
by the chunk's entering 128 x 128 state in 32-deep tl.dot steps, then adds the masked
lower triangle of the precomputed Aqk times the chunk's values in one 64 x 64 tl.dot.
`sglang_gdn_chunk_o`, the gated delta rule's output, forms q k^T inside the kernel with a
scalar decay per head applied after the products; here the attention square comes in
precomputed (fp32, 64 values a token) and the decay is an exp per query element before
the product, so the kernel reads more per token and does less tensor-core work.  Both
trials are prefills of Kimi-Linear-48B-A3B's KDA layers (32 heads of 128, 64-token
chunks, one GPU): one 8k-token prompt, and sixteen 100-token prompts packed (a
launch-sized grid).  Output: [1, tokens, heads, dv] in v's dtype.  The floor is the larger
of reading q, the gates, Aqk, v and the chunk states once and writing the output once, and
the products' flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_kda_chunk_o")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "gemm")  # linear attention's output: two tl.dot products per tile


def _chunks(d: Mapping[str, int]) -> int:
    return d["seqs"] * -(-d["seqlen"] // d["chunk"])


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q and v read, the output written (dtype); the gates (fp32, dk a token) and Aqk (fp32,
    chunk a token) read once; one dk x dv state (dtype) per chunk and head read once."""
    es = ELEMENT_SIZE[dtype]
    rows = d["seqs"] * d["seqlen"] * d["heads"]
    return (
        rows * (d["dk"] * (es + 4) + d["chunk"] * 4 + 2 * d["dv"] * es)
        + _chunks(d) * d["heads"] * d["dk"] * d["dv"] * es
    )


def flops(d: Mapping[str, int]) -> int:
    """Per token and head: its gated query row times the state (2 dk dv) and its row of the
    chunk's square times the values (2 chunk dv, the whole square as the kernel does)."""
    rows = d["seqs"] * d["seqlen"] * d["heads"]
    return 2 * rows * d["dv"] * (d["dk"] + d["chunk"])


_make_inputs = _common.forward_make_inputs(
    "sglang_kda_chunk_o", "seqs", "seqlen", "heads", "dk", "dv", "chunk"
)
_reference = _common.forward_reference("sglang_kda_chunk_o")
_baselines = _common.forward_baselines(
    "sglang_kda_chunk_o",
    (
        "torch",
        "torch",
        "the same by torch on the padded [chunks, chunk] view: the gated q times the states "
        "and the masked Aqk times v as two batched einsums in the input dtype",
        "torch_chunk_o",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_kda_chunk_o.launcher")


TRITON_KNOBS = (
    Knob("block_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "key channels per tl.dot step of the inter-chunk product; None: SGLang's first "
         "autotune choice 32"),
    Knob("block_v", "int", (None, 16, 32, 64, 128), "tile_n",
         "output columns per program (the grid's first axis is dv / this); None: 64"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps", "warps per program; None: 2"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "pipelining of the key loop; None: 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_kda_chunk_o",
    description=(
        "SGLang's Kimi Delta Attention chunk output (v0.5.9, from FLA, chunk_gla_fwd_kernel_"
        "o): per 64 output columns, 64-token chunk and head, the per-channel gated queries "
        "times the chunk's entering state in 32-deep tl.dots, plus the masked precomputed "
        "Aqk times the values; packed sequences"
    ),
    dims=(
        Dim("seqs", "sequences packed in the prefill (equal lengths)", "batch"),
        Dim("seqlen", "tokens per sequence"),
        Dim("heads", "KDA heads", "num_heads"),
        Dim("dk", "key channels per head", "head_dim"),
        Dim("dv", "value channels per head"),
        Dim("chunk", "tokens per chunk (SGLang's 64)"),
    ),
    trials=(
        Trial(
            "prefill_kimi_linear_8k",
            {"seqs": 1, "seqlen": 8192, "heads": 32, "dk": 128, "dv": 128, "chunk": 64},
            "an 8k-token prompt through a Kimi-Linear-48B-A3B KDA layer (32 heads of 128, "
            "64-token chunks, one GPU): 128 chunks, 8,192 programs, 13 GFLOP, 537 MB moved "
            "(bf16)",
        ),
        Trial(
            "short_prompts_kimi_linear",
            {"seqs": 16, "seqlen": 100, "heads": 32, "dk": 128, "dv": 128, "chunk": 64},
            "sixteen 100-token prompts packed through the same layer (two chunks each, the "
            "second cut at 36 tokens): 32 chunks, 2,048 programs, 2.5 GFLOP, 112 MB moved, a "
            "launch-sized grid",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # gated q, the states and the square cast to the input dtype before fp32-accumulated
    # tl.dots, the output rounded to the dtype, against fp32 throughout
    tolerances={"bfloat16": 3e-2, "float16": 5e-3, "float32": 1e-4},
    entry_point="kda_chunk_o",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
