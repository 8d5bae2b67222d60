"""SGLang's per-channel chunk-local cumsum of Kimi Delta Attention's gates (SGLang v0.5.9,
Apache-2.0; adapted there from flash-linear-attention), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
sglang_kda_cumsum` and never committed.

Why this one: the first kernel of Kimi Linear's chunked KDA prefill after the gate
(`sglang_kda_gate`): KDA decays every key channel separately, so its log decays are a
[tokens, heads, head_dim] fp32 tensor, and their running sums within each 64-token chunk of
each packed sequence are taken not by a scan but as a product: one program per (32-channel
slice, chunk, head) loads a [64, 32] fp32 tile (64 rows a [heads, head_dim] row apart, 128
contiguous bytes each) and multiplies the 64 x 64 lower-triangular ones mask by it in one
fp32 tl.dot (tf32 off), a 64-fold redundant product that keeps the whole chunk in one
instruction stream.  Nearest is `sglang_gdn_cumsum`, the same file's scalar kernel for the
gated delta rule's one gate per head: a tl.cumsum over 64 values 4 bytes wide a row apart,
one program per (chunk, head), no tl.dot, 128x less data; here the tile is a channel slice
wide, the scan is a masked matmul and the channel tile and warps are the knobs (SGLang's
autotune list).  The decode path never runs it (decode takes the fused recurrence), so both
trials are prefills: one long prompt and a batch of short ones packed.  Output: the fp32
sums.  The floor is reading the gates and writing the sums once (the varlen bounds and
chunk indices are a few bytes).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_kda_cumsum")

CONTEXTS = ("reduction", "memory-bound")


def _chunks(d: Mapping[str, int]) -> int:
    return d["seqs"] * -(-d["seqlen"] // d["chunk"])


def bytes_moved(d: Mapping[str, int]) -> int:
    """The fp32 gates read once and the fp32 sums written once (whatever the spec's dtype:
    SGLang's KDA gate writes g in fp32 and the cumsum keeps fp32), the int32 sequence bounds
    and (sequence, chunk) pairs read once."""
    elems = d["seqs"] * d["seqlen"] * d["heads"] * d["head_dim"]
    return 8 * elems + 4 * (d["seqs"] + 1) + 8 * _chunks(d)


def flops(d: Mapping[str, int]) -> int:
    """One add per gate (the useful work; the kernel's masked 64 x 64 tl.dot spends 128
    multiply-adds per gate on it)."""
    return d["seqs"] * d["seqlen"] * d["heads"] * d["head_dim"]


_make_inputs = _common.forward_make_inputs(
    "sglang_kda_cumsum", "seqs", "seqlen", "heads", "head_dim", "chunk"
)
_reference = _common.forward_reference("sglang_kda_cumsum")
_baselines = _common.forward_baselines(
    "sglang_kda_cumsum",
    (
        "torch",
        "torch",
        "the same sums by torch's cumsum on the padded [chunks, 64, heads, head_dim] view",
        "torch_kda_cumsum",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_kda_cumsum.launcher")


TRITON_KNOBS = (
    Knob("block_s", "int", (None, 16, 32, 64, 128), "tile_n",
         "channels per program (the [64, BS] tile the triangular mask multiplies); "
         "None: SGLang's 32 (first of its autotune list's 32, 64)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program (one channel slice of one 64-token chunk of one head); "
         "None: SGLang's 2 (first of its autotune list's 2, 4, 8)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_kda_cumsum",
    description=(
        "SGLang's per-channel chunk-local cumsum of Kimi Delta Attention's log decays "
        "(v0.5.9, from FLA): one program per (32-channel slice, 64-token chunk, head) "
        "multiplies the 64 x 64 lower-triangular ones mask by the chunk's [64, 32] fp32 "
        "gate tile in one tl.dot, packed sequences, fp32 in and out"
    ),
    dims=(
        Dim("seqs", "sequences packed in the prefill (equal lengths)", "batch"),
        Dim("seqlen", "tokens per sequence"),
        Dim("heads", "KDA heads (one gate vector per token and head)", "num_heads"),
        Dim("head_dim", "key channels per head (one gate each)", "head_dim"),
        Dim("chunk", "tokens per chunk of the chunked recurrence (64)"),
    ),
    trials=(
        Trial(
            "prefill_kimi_linear_8k",
            {"seqs": 1, "seqlen": 8192, "heads": 32, "head_dim": 128, "chunk": 64},
            "an 8k-token prompt through a Kimi-Linear-48B-A3B KDA layer (32 heads of 128 "
            "channels): 16384 programs of one 64 x 64 x 32 product, 268 MB moved",
        ),
        Trial(
            "short_prompts_kimi_linear",
            {"seqs": 16, "seqlen": 100, "heads": 32, "head_dim": 128, "chunk": 64},
            "sixteen 100-token prompts packed (two chunks each, the second cut at 36 tokens): "
            "4096 programs, 52 MB moved",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # fp32 sums of at most 64 terms in another order (the tl.dot is fp32, tf32 off)
    tolerances={"bfloat16": 1e-5, "float16": 1e-5, "float32": 1e-5},
    entry_point="kda_chunk_cumsum",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
