"""SGLang's chunk-local gate cumsum of the gated delta rule (SGLang v0.5.9, Apache-2.0;
adapted there from flash-linear-attention), as kbopt sees it: a kernel nobody here wrote,
fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
sglang_gdn_cumsum` and never committed.

Why this one as the set's fourth kind of work: it is neither a GEMM nor a norm nor an
attention, but a segmented scan with a strided gather.  The first step of Qwen3-Next's
chunked linear-attention prefill turns the per-token, per-head log decays into running sums
within each 64-token chunk of each packed sequence: one program per (chunk, head) reads 64
fp32 values a whole [tokens, heads] row apart (4 useful bytes per 128-byte row), scans them
with tl.cumsum, and writes them back the same way.  Tiny programs, no reuse, no loop; the
decode path never runs it, so both trials are prefills (a batch of short prompts and one
long one).  Output: the fp32 sums.  The floor is reading the gates and writing the sums
once (the varlen bounds and chunk indices are a few bytes).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_gdn_cumsum")

CONTEXTS = ("reduction", "memory-bound")


def _chunks(d: Mapping[str, int]) -> int:
    return d["seqs"] * -(-d["seqlen"] // d["chunk"])


def bytes_moved(d: Mapping[str, int]) -> int:
    """The fp32 gates read once and the fp32 sums written once (whatever the spec's dtype:
    SGLang's gating writes g in fp32 and the cumsum keeps fp32), the int32 sequence bounds
    and (sequence, chunk) pairs read once."""
    tokens = d["seqs"] * d["seqlen"]
    return 8 * tokens * d["heads"] + 4 * (d["seqs"] + 1) + 8 * _chunks(d)


def flops(d: Mapping[str, int]) -> int:
    """One add per gate."""
    return d["seqs"] * d["seqlen"] * d["heads"]


_make_inputs = _common.forward_make_inputs("sglang_gdn_cumsum", "seqs", "seqlen", "heads", "chunk")
_reference = _common.forward_reference("sglang_gdn_cumsum")
_baselines = _common.forward_baselines(
    "sglang_gdn_cumsum",
    (
        "torch",
        "torch",
        "the same sums by torch's cumsum on the padded [chunks, 64, heads] view",
        "torch_chunk_cumsum",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_gdn_cumsum.launcher")


TRITON_KNOBS = (
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program (one 64-token chunk of one head); None: SGLang's 8"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_gdn_cumsum",
    description=(
        "SGLang's chunk-local cumsum of the gated delta rule's log decays (v0.5.9, from "
        "FLA): one program per (64-token chunk, head) scans 64 fp32 gates read a [tokens, "
        "heads] row apart, packed sequences, fp32 in and out"
    ),
    dims=(
        Dim("seqs", "sequences packed in the prefill (equal lengths)", "batch"),
        Dim("seqlen", "tokens per sequence"),
        Dim("heads", "value heads (one gate per token and head)", "num_heads"),
        Dim("chunk", "tokens per chunk of the chunked recurrence (64)"),
    ),
    trials=(
        Trial(
            "prefill_qwen3_next_8k",
            {"seqs": 1, "seqlen": 8192, "heads": 32, "chunk": 64},
            "an 8k-token prompt through a Qwen3-Next-80B linear-attention layer (32 value "
            "heads): 4096 programs of 64 gates, 2.1 MB moved",
        ),
        Trial(
            "short_prompts_qwen3_next",
            {"seqs": 16, "seqlen": 100, "heads": 32, "chunk": 64},
            "sixteen 100-token prompts packed (two chunks each, the second cut at 36 tokens): "
            "1024 programs, 410 KB moved, a launch-sized grid",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # fp32 sums of at most 64 terms in another order
    tolerances={"bfloat16": 1e-5, "float16": 1e-5, "float32": 1e-5},
    entry_point="chunk_local_cumsum",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
