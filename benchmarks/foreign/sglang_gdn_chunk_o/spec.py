"""SGLang's chunked output of the gated delta rule (SGLang v0.5.9, Apache-2.0; FLA's code,
MIT), as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored
third_party/ by `scripts/fetch_third_party.py sglang_gdn_chunk_o` and never committed.

Why this one: the last kernel of Qwen3-Next's chunked linear-attention prefill, the one the
set had not scored (`sglang_gdn_cumsum`, `sglang_gdn_kkt`, `sglang_gdn_solve_tril`,
`sglang_gdn_wy` and `sglang_gdn_chunk_h` wrap the others), and the output side of it: where
`sglang_gdn_chunk_h` walks the chunks serially carrying a state, this one is embarrassingly
parallel over chunks, reading the states h wrote.  Nearest in the set is Mamba-2's
`vllm_ssd_chunk_scan` (C times the chunk's state plus a causal C B^T x); here one loop over
the key dimension feeds two tl.dots at once (q h, BT x BV, and q k^T, BT x BT, both fp32),
the decays come as one scalar per token and head (exp(g) on the rows, exp(g_i - g_j) on the
causal square), grouped keys are shared by value heads, and the masked square is cast to
v's dtype for a third tl.dot.  SGLang launches it with BK 128, BV 64, 4 warps and 2 stages
(BT 64): 2 column blocks x chunks x heads programs.  Both trials are Qwen3-Next-80B
linear-attention layers (32 value heads over 16 key heads, 128 x 128 states): an 8k prompt,
and four 100-token prompts packed (a launch-sized grid).  Output: o in the dtype.  The
floor is the larger of reading q, k, v, h and g once and writing o once, and the products'
flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_gdn_chunk_o")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "gemm")  # linear attention's output: three tl.dots per tile


def _block_t(d: Mapping[str, int]) -> int:
    tokens = d["seqs"] * d["seqlen"]
    return min(d["chunk"], max(16, 1 << max(0, (tokens - 1).bit_length())))


def _chunks(d: Mapping[str, int]) -> int:
    return d["seqs"] * -(-d["seqlen"] // _block_t(d))


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q and k read once (each key head once, though its value heads and column blocks
    share it), v read and o written once, h ([chunks, heads, dk, dv]) read once, the fp32
    gates read once, the int32 sequence bounds and chunk indices read once."""
    tokens = d["seqs"] * d["seqlen"]
    es = ELEMENT_SIZE[dtype]
    qk = 2 * tokens * d["kheads"] * d["dk"] * es
    vo = 2 * tokens * d["heads"] * d["dv"] * es
    h = _chunks(d) * d["heads"] * d["dk"] * d["dv"] * es
    return qk + vo + h + 4 * tokens * d["heads"] + 4 * (d["seqs"] + 1 + 2 * _chunks(d))


def flops(d: Mapping[str, int]) -> int:
    """Per token and value head: its query times the chunk's dk x dv state, and its row of
    the chunk's BT x BT square (q k^T, then times v), as the kernel computes them (the
    square in full, its upper triangle masked after)."""
    bt = _block_t(d)
    return 2 * d["seqs"] * d["seqlen"] * d["heads"] * (d["dk"] * d["dv"] + bt * (d["dk"] + d["dv"]))


_make_inputs = _common.forward_make_inputs(
    "sglang_gdn_chunk_o", "seqs", "seqlen", "heads", "kheads", "dk", "dv", "chunk"
)
_reference = _common.forward_reference("sglang_gdn_chunk_o")
_baselines = _common.forward_baselines(
    "sglang_gdn_chunk_o",
    (
        "torch",
        "torch",
        "the same output chunk by chunk: batched products over the heads in the input "
        "dtype, the decays in fp32",
        "torch_chunk_o",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_gdn_chunk_o.launcher")


TRITON_KNOBS = (
    Knob("block_k", "int", (None, 32, 64, 128), "tile_k",
         "key channels per step of the loop feeding q h and q k^T; None: SGLang's 128"),
    Knob("block_v", "int", (None, 32, 64, 128), "tile_n",
         "output columns per program (the grid's first axis is dv / block_v; each block "
         "recomputes q k^T); None: SGLang's 64"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program (one chunk, value head and column block); None: SGLang's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the key loop; None: SGLang's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_gdn_chunk_o",
    description=(
        "SGLang's chunked output of the gated delta rule (v0.5.9, from FLA): per 64-token "
        "chunk, value head and 64 output columns, q h and q k^T accumulated in one 128-deep "
        "key loop of fp32 tl.dots, scaled by the per-token decays, the causal square cast "
        "to v's dtype and multiplied by v, packed sequences through chunk indices"
    ),
    dims=(
        Dim("seqs", "sequences packed into the prefill", "batch"),
        Dim("seqlen", "tokens per sequence"),
        Dim("heads", "value heads", "num_heads"),
        Dim("kheads", "query / key heads (value heads share them)"),
        Dim("dk", "query / key channels per head (the state's rows)", "head_dim"),
        Dim("dv", "value channels per head (the state's columns)"),
        Dim("chunk", "tokens per chunk (SGLang's 64)"),
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
            "heads of 128 over 16 key heads of 128): 8192 programs over 128 chunks, "
            "17.2 GFLOP, 336 MB moved (the bf16 states h 134 MB of it)",
        ),
        Trial(
            "short_prompts_qwen3_next",
            {
                "seqs": 4,
                "seqlen": 100,
                "heads": 32,
                "kheads": 16,
                "dk": 128,
                "dv": 128,
                "chunk": 64,
            },
            "four 100-token prompts packed (two chunks each, the second cut at 36 tokens): "
            "512 programs, 0.84 GFLOP, 18 MB moved, a launch-sized grid",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation, the masked square rounded to the dtype before times v, o stored in
    # it; fp32 operands are tf32 on the GPU
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="chunk_o",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
