"""SGLang's chunked state recurrence of the gated delta rule (SGLang v0.5.9, Apache-2.0;
adapted there from flash-linear-attention), as kbopt sees it: a kernel nobody here wrote,
fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
sglang_gdn_chunk_h` and never committed.

Why this one: the FLA chunked gated-delta path's fifth kernel, after the WY recompute
(`sglang_gdn_wy`), and the only sequential one: per sequence, value head and 32-column
block of the 128 x 128 fp32 state, one program walks the sequence's 64-token chunks in
order with the state in registers (two 64-row blocks), storing it per chunk (h, 64 KB per
chunk and head in the dtype, the largest write of the prefill), correcting the chunk's
values by the state (v_new = u - w S, tl.dot) and adding k^T v_new to the decayed state
(tl.dot), the state going back to the sequence's slot of the pool at the end.  Each
chunk's two products depend on the previous chunk's, so the grid is only column blocks x
sequences x heads (128 programs for one 8k prompt) and the length of the chain, not the
bandwidth, sets the time of a long prompt.  Close to `sglang_seg_la` (a linear-attention
state walked through the tokens in tl.dot steps), but there every 32 tokens fold into the
state without reading it, here the delta rule's correction needs the state before the
update (a dependent tl.dot pair per step), and h is written per chunk.  Both trials are
prefills (decode takes the fused recurrence): one long prompt and a batch of short ones.
Outputs: (h, v_new, the pool).  The floor is the larger of reading k, w, u, the gates and
the states once and writing h, v_new and the states once, and the chunks' products.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_gdn_chunk_h")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "gemm", "small-grid")  # linear attention: a serial chain of tl.dots


def _chunks(d: Mapping[str, int]) -> int:
    return d["seqs"] * -(-d["seqlen"] // d["chunk"])


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The keys read once (each key head once, though value heads and column blocks share
    it), w and u read once, fp32 gates read once, each sequence's fp32 state read and
    written once, h ([chunks, heads, dk, dv]) and v_new written once, the int32 sequence
    bounds, chunk offsets and slots read once."""
    tokens = d["seqs"] * d["seqlen"]
    es = ELEMENT_SIZE[dtype]
    hd = d["heads"] * d["dk"] * d["dv"]
    keys = tokens * d["kheads"] * d["dk"] * es
    wu = tokens * d["heads"] * (d["dk"] + 2 * d["dv"]) * es  # w, u read; v_new written
    states = 2 * 4 * d["seqs"] * hd
    h = _chunks(d) * hd * es
    return keys + wu + 4 * tokens * d["heads"] + states + h + 4 * (3 * d["seqs"] + 2)


def flops(d: Mapping[str, int]) -> int:
    """Per token and value head, its row of w times the state and its key's outer product
    with its new value (dk x dv each)."""
    return 4 * d["seqs"] * d["seqlen"] * d["heads"] * d["dk"] * d["dv"]


_make_inputs = _common.forward_make_inputs(
    "sglang_gdn_chunk_h", "seqs", "seqlen", "heads", "kheads", "dk", "dv", "chunk"
)
_reference = _common.forward_reference("sglang_gdn_chunk_h")
_baselines = _common.forward_baselines(
    "sglang_gdn_chunk_h",
    (
        "torch",
        "torch",
        "the same recurrence as a loop of torch's batched matmuls over the chunks, in fp32",
        "torch_chunk_h",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_gdn_chunk_h.launcher")


TRITON_KNOBS = (
    Knob("block_v", "int", (None, 16, 32, 64), "tile_n",
         "state columns per program (the grid's first axis is dv / block_v); None: "
         "SGLang's 32"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program (one state column block of one sequence and value head); "
         "None: SGLang's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the chunk loop; None: SGLang's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_gdn_chunk_h",
    description=(
        "SGLang's chunked state recurrence of the gated delta rule (v0.5.9, from FLA): one "
        "program per (32-column block of the dk x dv fp32 state, sequence, value head) walks "
        "the 64-token chunks in order, storing the state per chunk, v_new = u - w S and "
        "S <- decay S + k^T v_new in 64-deep tl.dots, the state read from and written back "
        "to the sequence's pool slot"
    ),
    dims=(
        Dim("seqs", "sequences packed in the prefill (equal lengths)", "batch"),
        Dim("seqlen", "tokens per sequence"),
        Dim("heads", "value heads (one state per sequence and value head)", "num_heads"),
        Dim("kheads", "key heads (each shared by heads / kheads value heads)"),
        Dim("dk", "key head size (the state's rows, at most 256)", "head_dim"),
        Dim("dv", "value head size (the state's columns)"),
        Dim("chunk", "tokens per chunk of the chunked recurrence (64)"),
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
            "heads of 128 over 16 key heads of 128): 128 programs each walking 128 chunks, "
            "17.2 GFLOP, 374 MB moved (h's writes 134 MB)",
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
            "2048 programs of two chunks, 3.4 GFLOP, 147 MB moved (the 16 fp32 states read "
            "and written 67 MB of it), a launch-sized grid",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the state is rounded to the dtype for w S and the scaled new values before k^T v_new,
    # h and v_new stored in it, over a chain of chunks; fp32 operands are tf32 on the GPU
    tolerances={"bfloat16": 3e-2, "float16": 1e-2, "float32": 1e-2},
    entry_point="chunk_h",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
