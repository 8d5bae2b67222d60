"""SGLang's WY recompute of the gated delta rule (SGLang v0.5.9, Apache-2.0; adapted there
from flash-linear-attention), as kbopt sees it: a kernel nobody here wrote, fetched into the
git-ignored third_party/ by `scripts/fetch_third_party.py sglang_gdn_wy` and never
committed.

Why this one: the FLA chunked gated-delta path's fourth kernel, after the gate cumsum, the
scaled K K^T and its triangular inverse (`sglang_gdn_cumsum`, `sglang_gdn_kkt`,
`sglang_gdn_solve_tril`): for every 64-token chunk of every packed sequence and every value
head of Qwen3-Next's linear attention, the chunk's 64 x 64 inverse A times the beta-scaled
values (u, the new values) and times the beta- and decay-scaled keys (w), in 64-wide tl.dot
tiles over the value and key dimensions.  A square-by-tall product per chunk whose output
is as large as its input (w and u written in the dtype, as many bytes as k per value head
and v), the square loaded once per program and reused by every tile, the row scaling fused
into the operand before each tl.dot.  The decode path never runs it (decode takes the fused
recurrence), so both trials are prefills: one long prompt and a batch of short ones packed
(a launch-sized grid, the second chunk of each cut).  Output: (w, u).  The floor is the
larger of reading k, v, A, beta and the gates once and writing w and u once, and the
chunks' products.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_gdn_wy")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm")  # many 64 x 64 by 64 x 128 products, memory-bound floor


def _chunk_lengths(d: Mapping[str, int]) -> list[int]:
    """Tokens in each chunk of one sequence (the last one cut at the sequence's end)."""
    full, rest = divmod(d["seqlen"], d["chunk"])
    return [d["chunk"]] * full + ([rest] if rest else [])


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The keys read once (each key head once, though value heads share it), v and A read
    once, fp32 beta and gates read once, w ([tokens, heads, dk]) and u written once, the
    int32 sequence bounds and (sequence, chunk) pairs read once."""
    tokens = d["seqs"] * d["seqlen"]
    es = ELEMENT_SIZE[dtype]
    keys = tokens * d["kheads"] * d["dk"] * es
    values = tokens * d["heads"] * d["dv"] * es
    a = tokens * d["heads"] * d["chunk"] * es
    outs = tokens * d["heads"] * (d["dk"] + d["dv"]) * es
    chunks = d["seqs"] * len(_chunk_lengths(d))
    return keys + values + a + 8 * tokens * d["heads"] + outs + 4 * (d["seqs"] + 1) + 8 * chunks


def flops(d: Mapping[str, int]) -> int:
    """Per chunk and value head, the n x n A times the n x dk scaled keys and the n x dv
    scaled values."""
    per = sum(n * n for n in _chunk_lengths(d))
    return 2 * d["seqs"] * d["heads"] * (d["dk"] + d["dv"]) * per


_make_inputs = _common.forward_make_inputs(
    "sglang_gdn_wy", "seqs", "seqlen", "heads", "kheads", "dk", "dv", "chunk"
)
_reference = _common.forward_reference("sglang_gdn_wy")
_baselines = _common.forward_baselines(
    "sglang_gdn_wy",
    (
        "torch",
        "torch",
        "the same products by torch's batched matmul on the padded [chunks, 64] view, "
        "after the scaling of k and v",
        "torch_wy",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_gdn_wy.launcher")


TRITON_KNOBS = (
    Knob("block_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "key columns of w per tl.dot tile (A times the scaled keys); None: SGLang's 64"),
    Knob("block_v", "int", (None, 16, 32, 64, 128), "tile_n",
         "value columns of u per tl.dot tile (A times the scaled values); None: SGLang's 64"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program (one 64-token chunk of one value head); None: SGLang's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the value and key tile loops; None: SGLang's 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_gdn_wy",
    description=(
        "SGLang's WY recompute of the gated delta rule (v0.5.9, from FLA): one program per "
        "(64-token chunk, value head) loads the chunk's 64 x 64 inverse A once and "
        "multiplies it by the beta-scaled values (u) and the beta- and decay-scaled keys (w) "
        "in 64-wide tl.dot tiles; packed sequences, outputs in the dtype"
    ),
    dims=(
        Dim("seqs", "sequences packed in the prefill (equal lengths)", "batch"),
        Dim("seqlen", "tokens per sequence"),
        Dim("heads", "value heads (one A, w and u per token and value head)", "num_heads"),
        Dim("kheads", "key heads (each shared by heads / kheads value heads)"),
        Dim("dk", "key head size (w's columns)", "head_dim"),
        Dim("dv", "value head size (u's columns)"),
        Dim("chunk", "tokens per chunk of the chunked recurrence (64; A's order)"),
    ),
    trials=(
        Trial(
            "prefill_qwen3_next_8k",
            {
                "seqs": 1,
                "seqlen": 8192,
                "heads": 32,
                "kheads": 16,
                "dk": 128,
                "dv": 128,
                "chunk": 64,
            },
            "an 8k-token prompt through a Qwen3-Next-80B linear-attention layer (32 value "
            "heads of 128 over 16 key heads of 128): 4096 programs of two 64 x 64 x 128 "
            "products, 8.6 GFLOP, 271 MB moved",
        ),
        Trial(
            "short_prompts_qwen3_next",
            {
                "seqs": 16,
                "seqlen": 100,
                "heads": 32,
                "kheads": 16,
                "dk": 128,
                "dv": 128,
                "chunk": 64,
            },
            "sixteen 100-token prompts packed (two chunks each, the second cut at 36 tokens): "
            "1024 programs, 1.4 GFLOP, 53 MB moved, a launch-sized grid",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the scaled operands are rounded to the dtype before each tl.dot and the outputs
    # stored in it; sums of 64 fp32 terms; fp32 keys go through tf32 tl.dot on the GPU
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="recompute_w_u",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
