"""SGLang's chunk-wise inverse of I + A for the gated delta rule (SGLang v0.5.9, Apache-2.0;
adapted there from flash-linear-attention), as kbopt sees it: a kernel nobody here wrote,
fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
sglang_gdn_solve_tril` and never committed.

Why this one as the set's fourth kind of work: a triangular inversion, which no earlier set
had.  The step after the scaled K K^T (this set's `sglang_gdn_kkt`) in Qwen3-Next's chunked
linear-attention prefill turns every 64-token chunk's strictly lower triangular A into
(I + A)^-1, in two launches: the four 16 x 16 diagonal blocks by forward substitution (one
1-warp program per 16-token block and head, a 15-step serial loop of row loads and
register updates, no tl.dot), then the 64 x 64 merge (one 4-warp program per chunk and head,
sixteen 16 x 16 x 16 fp32 tl.dot at "ieee" precision, so no tensor-core tf32, dependent on
each other in a chain).  Tiny programs, a serial dependence, fp32 products on the FMA pipe,
an fp32 scratch between the launches.  The decode path never runs it, so both trials are
prefills: one long prompt and a batch of short ones packed (the second chunk of each cut).
Output: the inverses in the spec's dtype (SGLang asks for k's).  The floor is the larger of
reading A's strict lower triangle once and writing the inverses once, and the two launches'
arithmetic.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_gdn_solve_tril")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("multi-kernel", "memory-bound")
BLOCK = 16  # the diagonal blocks the first launch inverts (the algorithm's)


def _chunk_lengths(d: Mapping[str, int]) -> list[int]:
    """Tokens in each chunk of one sequence (the last one cut at the sequence's end)."""
    full, rest = divmod(d["seqlen"], d["chunk"])
    return [d["chunk"]] * full + ([rest] if rest else [])


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """A's strict lower triangle (fp32, the only part the inverse depends on) read once, the
    inverses ([tokens, heads, chunk] in the spec's dtype, zeros above the diagonal included)
    written once, the int32 sequence bounds and the (sequence, block) pairs at 16 and at
    `chunk` tokens read once.  The fp32 scratch between the launches is not counted."""
    lens = _chunk_lengths(d)
    lower = d["seqs"] * sum(n * (n - 1) // 2 for n in lens)
    tokens = d["seqs"] * d["seqlen"]
    blocks = d["seqs"] * sum(-(-n // BLOCK) for n in lens)
    pairs = 8 * (blocks + d["seqs"] * len(lens))
    return d["heads"] * (4 * lower + ELEMENT_SIZE[dtype] * tokens * d["chunk"]) + (
        4 * (d["seqs"] + 1) + pairs
    )


def flops(d: Mapping[str, int]) -> int:
    """Per head: each 16-token block's forward substitution (one 16 x 16 multiply-add and a
    row add per row after the first), and each 64-token chunk's merge (sixteen 16 x 16 x 16
    products, run whole even for a cut chunk)."""
    per_head = 0
    for n in _chunk_lengths(d):
        for b in range(0, n, BLOCK):
            rows = min(BLOCK, n - b)
            per_head += (rows - 1) * (2 * BLOCK * BLOCK + BLOCK)
        per_head += 16 * 2 * BLOCK**3
    return d["seqs"] * d["heads"] * per_head


_make_inputs = _common.forward_make_inputs(
    "sglang_gdn_solve_tril", "seqs", "seqlen", "heads", "chunk"
)
_reference = _common.forward_reference("sglang_gdn_solve_tril")
_baselines = _common.forward_baselines(
    "sglang_gdn_solve_tril",
    (
        "torch",
        "torch",
        "the same inverses by torch's batched fp32 triangular solve on the padded "
        "[chunks, 64, 64] view",
        "torch_solve_tril",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_gdn_solve_tril.launcher")


TRITON_KNOBS = (
    Knob("diag_warps", "int", (None, 1, 2, 4), "warps",
         "warps per program of the diagonal-block launch (one 16 x 16 block of one head); "
         "None: SGLang's 1"),
    Knob("diag_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the diagonal launch's row loop; None: SGLang's 4"),
    Knob("merge_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program of the merge launch (one 64-token chunk of one head); None: "
         "SGLang's 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_gdn_solve_tril",
    description=(
        "SGLang's chunk-wise (I + A)^-1 of the gated delta rule (v0.5.9, from FLA): 16 x 16 "
        "diagonal blocks by forward substitution (one 1-warp program per block and head), "
        "then a 64 x 64 merge in sixteen fp32 16 x 16 x 16 tl.dot per chunk and head; "
        "packed sequences, fp32 in, the spec's dtype out"
    ),
    dims=(
        Dim("seqs", "sequences packed in the prefill (equal lengths)", "batch"),
        Dim("seqlen", "tokens per sequence"),
        Dim("heads", "value heads (one A per token and value head)", "num_heads"),
        Dim("chunk", "tokens per chunk of the chunked recurrence (64, the only one wrapped)"),
    ),
    trials=(
        Trial(
            "prefill_qwen3_next_8k",
            {"seqs": 1, "seqlen": 8192, "heads": 32, "chunk": 64},
            "an 8k-token prompt through a Qwen3-Next-80B linear-attention layer (32 value "
            "heads): 16384 one-warp substitution programs then 4096 merge programs, 67 MB "
            "moved, 0.66 GFLOP of fp32 arithmetic",
        ),
        Trial(
            "short_prompts_qwen3_next",
            {"seqs": 16, "seqlen": 100, "heads": 32, "chunk": 64},
            "sixteen 100-token prompts packed (two chunks each, the second cut at 36 tokens): "
            "3584 substitution programs then 1024 merge programs, 10 MB moved, launch-sized",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the output rounded to the dtype; fp32 substitution and "ieee" products otherwise
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-4},
    entry_point="solve_tril",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
