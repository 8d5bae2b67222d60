"""SGLang's Kimi Delta Attention intra-chunk matrices (SGLang v0.5.9, Apache-2.0; adapted
there from flash-linear-attention), as kbopt sees it: a kernel nobody here wrote, fetched
into the git-ignored third_party/ by `scripts/fetch_third_party.py sglang_kda_kkt` and
never committed.

Why this one: Kimi Linear's KDA is the gated delta rule with a decay per key channel
instead of per head, and that changes the kind of work.  The gated delta rule's K K^T
(`sglang_gdn_kkt`) is one 64 x 64 tl.dot per chunk with a scalar decay applied after it;
here exp(g_i - g_j) differs channel by channel, so it cannot leave the product: SGLang cuts
each 64-token chunk into 16-token sub-chunks, rescales both operands of every block below
the diagonal around the row block's first gate and multiplies them in 16 x 16 tl.dots over
32-deep key slices (one program per chunk, sub-chunk pair and head: 10 of its 16 programs
per chunk and head exit at once), then does the diagonal blocks without tensor cores, one
column token at a time, an exp per element of a [16, 128] tile per column.  Two fp32
outputs per token and head: the beta-scaled K K^T (A, for solve_tril) and the scaled Q K^T
(Aqk, for the chunk's output); exp-bound on the diagonal, launch-bound on many tiny dots,
and the fp32 per-channel gates weigh as much as q and k together.  The decode path never
runs it (decode takes the fused recurrence), so both trials are prefills of
Kimi-Linear-48B-A3B's KDA layers (32 heads of 128, 64-token chunks): one long prompt, and
a batch of short ones packed (a launch-sized grid).  The floor is the larger of reading q,
k, the gates and beta once and writing A and Aqk once, and the products' flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_kda_kkt")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm")  # many 16 x 16 products; fp32 gates and outputs weigh most


def _chunk_lengths(d: Mapping[str, int]) -> list[int]:
    """Tokens in each chunk of one sequence (the last one cut at the sequence's end)."""
    full, rest = divmod(d["seqlen"], d["chunk"])
    return [d["chunk"]] * full + ([rest] if rest else [])


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q and k read once in the dtype, the fp32 per-channel gates and beta read once, the
    fp32 A and Aqk ([tokens, heads, chunk] each, zeros included) written once, the int32
    sequence bounds and (sequence, chunk) pairs read once."""
    tokens = d["seqs"] * d["seqlen"]
    th = tokens * d["heads"]
    chunks = d["seqs"] * len(_chunk_lengths(d))
    return (
        2 * th * d["dk"] * ELEMENT_SIZE[dtype]
        + 4 * th * d["dk"]
        + 4 * th
        + 8 * th * d["chunk"]
        + (4 * (d["seqs"] + 1) + 8 * chunks)
    )


def flops(d: Mapping[str, int]) -> int:
    """Per chunk of n tokens and head, the K K^T and Q K^T products over the lower
    triangle with its diagonal (n (n + 1) / 2 pairs, dk channels, a multiply and an add
    each); the per-element decays not counted."""
    pairs = sum(n * (n + 1) // 2 for n in _chunk_lengths(d))
    return 4 * d["seqs"] * d["heads"] * d["dk"] * pairs


_make_inputs = _common.forward_make_inputs(
    "sglang_kda_kkt", "seqs", "seqlen", "heads", "dk", "chunk"
)
_reference = _common.forward_reference("sglang_kda_kkt")
_baselines = _common.forward_baselines(
    "sglang_kda_kkt",
    (
        "torch",
        "torch",
        "the same matrices by torch on the padded [chunks, 64] view, one head at a time: "
        "the [chunks, 64, 64, dk] per-channel decays formed, multiplied and summed in fp32",
        "torch_kda_kkt",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_kda_kkt.launcher")


TRITON_KNOBS = (
    Knob("sub_chunk", "int", (None, 16, 32, 64), "tile_m",
         "tokens per sub-chunk (BC) of both launches: the off-diagonal tl.dot blocks are "
         "BC x BC, the diagonal ones BC rows walked column by column; None: SGLang's 16"),
    Knob("inter_block_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "key-channel depth per tl.dot step of the off-diagonal blocks; None: 32, the first "
         "of SGLang's autotune list"),
    Knob("inter_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per off-diagonal program; None: 1, the first of SGLang's autotune list"),
    Knob("inter_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the key-channel loop; None: 2, the first of SGLang's "
         "autotune list"),
    Knob("intra_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per diagonal-block program; None: 1, the first of SGLang's autotune list"),
    Knob("intra_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the diagonal blocks' column loop; None: Triton's "
         "default 3 (SGLang's autotune sets none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_kda_kkt",
    description=(
        "SGLang's Kimi Delta Attention intra-chunk matrices (v0.5.9, from FLA): per "
        "64-token chunk and head, the beta-scaled K K^T and the scaled Q K^T decayed per key "
        "channel, the blocks below the diagonal in 16 x 16 tl.dots over 32-deep key slices, "
        "the diagonal blocks column by column without tensor cores; two launches, packed "
        "sequences, fp32 out"
    ),
    dims=(
        Dim("seqs", "sequences packed in the prefill (equal lengths)", "batch"),
        Dim("seqlen", "tokens per sequence"),
        Dim("heads", "KDA heads (q, k and v alike)", "num_heads"),
        Dim("dk", "key head size (the products' depth, one decay per channel)", "head_dim"),
        Dim("chunk", "tokens per chunk of the chunked recurrence (64)"),
    ),
    trials=(
        Trial(
            "prefill_kimi_linear_8k",
            {"seqs": 1, "seqlen": 8192, "heads": 32, "dk": 128, "chunk": 64},
            "an 8k-token prompt through a Kimi-Linear-48B-A3B KDA layer (32 heads of 128, "
            "64-token chunks, one GPU): 128 chunks, 65,536 + 16,384 programs, 4.4 GFLOP, "
            "403 MB moved",
        ),
        Trial(
            "short_prompts_kimi_linear",
            {"seqs": 16, "seqlen": 100, "heads": 32, "dk": 128, "chunk": 64},
            "sixteen 100-token prompts packed through the same layer (two chunks each, the "
            "second cut at 36 tokens): 32 chunks, 20,480 programs, 0.7 GFLOP, 79 MB moved, a "
            "launch-sized grid",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums over dk terms; the off-diagonal blocks' operands are rescaled to fp32 before
    # tl.dot, which goes through tf32 on the GPU whatever the input dtype
    tolerances={"bfloat16": 5e-3, "float16": 5e-3, "float32": 5e-3},
    entry_point="chunk_kda_kkt",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
