"""SGLang's per-chunk scaled K K^T of the gated delta rule (SGLang v0.5.9, Apache-2.0;
adapted there from flash-linear-attention), as kbopt sees it: a kernel nobody here wrote,
fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py sglang_gdn_kkt`
and never committed.

Why this one as the set's tensor-core kind of work: the FLA chunked gated-delta path's first
tl.dot kernel, right after the gate cumsum (wrapped in the twelfth set, `sglang_gdn_cumsum`):
for every 64-token chunk of every packed sequence and every value head of Qwen3-Next's
linear attention, the chunk's l2-normalized keys times their own transpose (64 x 64 over a
128-deep key head, in 64-deep tl.dot steps), scaled by beta per row and by the decay
exp(g_i - g_j) between the two tokens, strictly lower triangle kept, written as fp32 for
`solve_tril` (this set's `sglang_gdn_solve_tril`).  Many tiny GEMMs whose output (64 fp32
per token and head) outweighs their input, with a gate epilogue; a key head is read again
by each of the value heads that share it.  The decode path never runs it (decode takes the
fused recurrence), so both trials are prefills: one long prompt and a batch of short ones
packed (a launch-sized grid, the second chunk of each cut).  Output: A (fp32).  The floor
is the larger of reading the keys, beta and the gates once and writing A once, and the
chunks' K K^T flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_gdn_kkt")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm")  # many 64 x 64 products; A's fp32 writes set the floor


def _chunk_lengths(d: Mapping[str, int]) -> list[int]:
    """Tokens in each chunk of one sequence (the last one cut at the sequence's end)."""
    full, rest = divmod(d["seqlen"], d["chunk"])
    return [d["chunk"]] * full + ([rest] if rest else [])


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The keys read once (each key head once, though value heads share it), fp32 beta and
    gates read once, the fp32 A ([tokens, heads, chunk], zeros included) written once, the
    int32 sequence bounds and (sequence, chunk) pairs read once."""
    tokens = d["seqs"] * d["seqlen"]
    keys = tokens * d["kheads"] * d["dk"] * ELEMENT_SIZE[dtype]
    chunks = d["seqs"] * len(_chunk_lengths(d))
    return (
        keys
        + 8 * tokens * d["heads"]
        + 4 * tokens * d["heads"] * d["chunk"]
        + (4 * (d["seqs"] + 1) + 8 * chunks)
    )


def flops(d: Mapping[str, int]) -> int:
    """Per chunk and value head, the n x n x dk product of its n keys with themselves (the
    kernel computes the whole square and keeps the strict lower triangle)."""
    return 2 * d["seqs"] * d["heads"] * d["dk"] * sum(n * n for n in _chunk_lengths(d))


_make_inputs = _common.forward_make_inputs(
    "sglang_gdn_kkt", "seqs", "seqlen", "heads", "kheads", "dk", "chunk"
)
_reference = _common.forward_reference("sglang_gdn_kkt")
_baselines = _common.forward_baselines(
    "sglang_gdn_kkt",
    (
        "torch",
        "torch",
        "the same matrices by torch's batched matmul on the padded [chunks, 64] view, "
        "then the decay, beta and the mask",
        "torch_kkt",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_gdn_kkt.launcher")


TRITON_KNOBS = (
    Knob("block_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "key-dimension depth per tl.dot step (of a 64 x 64 chunk product); None: SGLang's 64"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program (one 64-token chunk of one value head); None: SGLang's 8"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the key-dimension loop; None: SGLang's 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_gdn_kkt",
    description=(
        "SGLang's per-chunk scaled K K^T of the gated delta rule (v0.5.9, from FLA): one "
        "program per (64-token chunk, value head) multiplies the chunk's keys by their "
        "transpose in 64-deep tl.dot steps, scales by beta and the gate decay, keeps the "
        "strict lower triangle; packed sequences, fp32 out"
    ),
    dims=(
        Dim("seqs", "sequences packed in the prefill (equal lengths)", "batch"),
        Dim("seqlen", "tokens per sequence"),
        Dim("heads", "value heads (one A per token and value head)", "num_heads"),
        Dim("kheads", "key heads (each shared by heads / kheads value heads)"),
        Dim("dk", "key head size (the products' depth)", "head_dim"),
        Dim("chunk", "tokens per chunk of the chunked recurrence (64)"),
    ),
    trials=(
        Trial(
            "prefill_qwen3_next_8k",
            {"seqs": 1, "seqlen": 8192, "heads": 32, "kheads": 16, "dk": 128, "chunk": 64},
            "an 8k-token prompt through a Qwen3-Next-80B linear-attention layer (32 value "
            "heads over 16 key heads of 128): 4096 programs of one 64 x 64 x 128 product, "
            "4.3 GFLOP, 103 MB moved (A's fp32 writes two thirds of it)",
        ),
        Trial(
            "short_prompts_qwen3_next",
            {"seqs": 16, "seqlen": 100, "heads": 32, "kheads": 16, "dk": 128, "chunk": 64},
            "sixteen 100-token prompts packed (two chunks each, the second cut at 36 tokens): "
            "1024 programs, 0.7 GFLOP, 20 MB moved, a launch-sized grid",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation over dk terms of the same rounded keys; fp32 keys go through tf32
    # tl.dot on the GPU
    tolerances={"bfloat16": 1e-3, "float16": 1e-3, "float32": 5e-3},
    entry_point="chunk_scaled_dot_kkt",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
