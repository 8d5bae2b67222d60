"""SGLang's Kimi Delta Attention WY recompute (SGLang v0.5.9, Apache-2.0; adapted there
from flash-linear-attention), as kbopt sees it: a kernel nobody here wrote, fetched into the
git-ignored third_party/ by `scripts/fetch_third_party.py sglang_kda_wy` and never
committed.

Why this one: the one kernel of Kimi Linear's chunked KDA prefill (`chunk_kda_fwd`) that
the set lacked, between the intra-chunk matrices and their inverse (`sglang_kda_cumsum`,
`sglang_kda_kkt`, solve_tril) and the state recurrence and output (`sglang_kda_chunk_o`),
run on every prefill or extend batch of Kimi-Linear-48B-A3B's KDA layers.  One program per
(64-token chunk, head) loads the chunk's 64 x 64 inverse A once and multiplies it by the
beta-scaled values (u) and by the keys scaled by beta and by exp(g) channel by channel (w)
in 64-wide tl.dot tiles, and writes a third output, the keys decayed to the chunk's end
(kg = k * exp(g_last - g)), from the same key tiles.  `sglang_gdn_wy`, the gated delta
rule's recompute, has one fp32 decay per token and head and two outputs; here the gate is
an fp32 [tokens, heads, dk] tensor, twice the bf16 keys' bytes, read once for w's scaling
and kg's decay (plus the chunk's last gate row per key tile), an exp per key element twice,
and kg makes the writes half as large again: at the same heads and head sizes it moves
about two thirds more bytes for the same products, further below the tensor cores' ridge.  Both trials are prefills of
Kimi-Linear-48B-A3B's KDA layers on one GPU (32 heads of 128, 64-token chunks): one 8k
prompt and sixteen 100-token prompts packed (a launch-sized grid, the second chunk of each
cut).  Output: (w, u, kg) in the inputs' dtype.  The floor is the larger of reading k, v,
the gates, A and beta once and writing w, u and kg once, and the chunks' products.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_kda_wy")

ELEMENT_SIZE = _common.ELEMENT_SIZE
# many 64 x 64 by 64 x 64 products per chunk, their operands scaled element-wise first;
# the fp32 gates make the floor the bytes
CONTEXTS = ("gemm", "grouped-gemm", "memory-bound")


def _chunk_lengths(d: Mapping[str, int]) -> list[int]:
    """Tokens in each chunk of one sequence (the last one cut at the sequence's end)."""
    full, rest = divmod(d["seqlen"], d["chunk"])
    return [d["chunk"]] * full + ([rest] if rest else [])


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """k and v read once, A ([tokens, heads, chunk]) read once, all in the dtype; the fp32
    gates ([tokens, heads, dk]) and beta read once (the chunk's last gate row, which every
    key tile loads again, not counted); w, u and kg written once in the dtype; the int32
    sequence bounds and (sequence, chunk) pairs read once."""
    rows = d["seqs"] * d["seqlen"] * d["heads"]
    es = ELEMENT_SIZE[dtype]
    reads = rows * ((d["dk"] + d["dv"] + d["chunk"]) * es + 4 * d["dk"] + 4)
    writes = rows * (2 * d["dk"] + d["dv"]) * es
    chunks = d["seqs"] * len(_chunk_lengths(d))
    return reads + writes + 4 * (d["seqs"] + 1) + 8 * chunks


def flops(d: Mapping[str, int]) -> int:
    """Per chunk and head, the n x n A times the n x dk scaled keys and the n x dv scaled
    values (the element-wise scalings and exps not counted)."""
    per = sum(n * n for n in _chunk_lengths(d))
    return 2 * d["seqs"] * d["heads"] * (d["dk"] + d["dv"]) * per


_make_inputs = _common.forward_make_inputs(
    "sglang_kda_wy", "seqs", "seqlen", "heads", "dk", "dv", "chunk"
)
_reference = _common.forward_reference("sglang_kda_wy")
_baselines = _common.forward_baselines(
    "sglang_kda_wy",
    (
        "torch",
        "torch",
        "the same by torch on the padded [chunks, 64] view: the scaled keys and values "
        "rounded to the dtype, two batched matmuls, kg from the gathered chunk-end gates",
        "torch_kda_wy",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_kda_wy.launcher")


TRITON_KNOBS = (
    Knob("block_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "key columns of w and kg per tile (A times the scaled keys); None: SGLang's 64"),
    Knob("block_v", "int", (None, 16, 32, 64, 128), "tile_n",
         "value columns of u per tl.dot tile (A times the scaled values); None: SGLang's 64"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program (one 64-token chunk of one head); None: the autotune list's "
         "first, 2"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the value and key tile loops; None: the autotune "
         "list's first, 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_kda_wy",
    description=(
        "SGLang's Kimi Delta Attention WY recompute (v0.5.9, from FLA, recompute_w_u_fwd_"
        "kernel with the gate): one program per (64-token chunk, head) loads the chunk's "
        "64 x 64 inverse A once, multiplies it by the beta-scaled values (u) and the beta- "
        "and per-channel-decay-scaled keys (w) in 64-wide tl.dot tiles, and stores the keys "
        "decayed to the chunk's end (kg); packed sequences, outputs in the dtype"
    ),
    dims=(
        Dim("seqs", "sequences packed in the prefill (equal lengths)", "batch"),
        Dim("seqlen", "tokens per sequence"),
        Dim("heads", "KDA heads (as many key heads as value heads)", "num_heads"),
        Dim("dk", "key channels per head (w's and kg's columns)", "head_dim"),
        Dim("dv", "value channels per head (u's columns)"),
        Dim("chunk", "tokens per chunk of the chunked recurrence (SGLang's 64; A's order)"),
    ),
    trials=(
        Trial(
            "prefill_kimi_linear_8k",
            {"seqs": 1, "seqlen": 8192, "heads": 32, "dk": 128, "dv": 128, "chunk": 64},
            "an 8k-token prompt through a Kimi-Linear-48B-A3B KDA layer (32 heads of 128, "
            "64-token chunks, one GPU): 128 chunks, 4,096 programs of two 64 x 64 x 128 "
            "products, 8.6 GFLOP, 504 MB moved (bf16, 134 MB of it the fp32 gates)",
        ),
        Trial(
            "short_prompts_kimi_linear",
            {"seqs": 16, "seqlen": 100, "heads": 32, "dk": 128, "dv": 128, "chunk": 64},
            "sixteen 100-token prompts packed through the same layer (two chunks each, the "
            "second cut at 36 tokens): 32 chunks, 1,024 programs, 1.4 GFLOP, 98.5 MB "
            "moved, a launch-sized grid",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the scaled operands are rounded to the dtype before each tl.dot and all three outputs
    # stored in it; sums of 64 fp32 terms; fp32 keys go through tf32 tl.dot on the GPU
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="kda_recompute_w_u",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
