"""Lightning attention's diagonal blocks in vLLM (vLLM v0.34.0, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_lightning_attn_diag` and never committed.

Why this one as the set's tl.dot kernel: MiniMax-Text-01 and MiniMax-M1 replace softmax
attention in seven of every eight layers by lightning attention, a linear attention whose
weights decay exponentially with distance at a fixed rate per head.  On a prefill vLLM cuts
the sequence into 256-token blocks and launches this kernel first: the attention inside
each block, o_i = sum over j <= i of exp(-s (i - j)) (q_i . k_j) v_j, with no softmax and no
running maximum.  One program per (head, block, 32 queries) walks the block's key
sub-blocks up to the diagonal: a decay mask, an fp32 tl.dot of queries and keys, another
with the values (tf32 on the tensor cores), accumulated in fp32.  Each block's keys and
values are read by all 8 of its query programs (from L2).  Both trials are MiniMax-Text-01
at tensor parallelism 8 (8 of its 64 heads per GPU, d = e = 128, bf16): a 512-token prompt
(128 programs, under one wave of the H200's 132 SMs) and a 32768-token prompt (8,192
programs, 17 GFLOP of causal intra-block work, 268 MB moved).  Output: the intra-block part
of the attention, [batch, heads, seqlen, e].  The floor is reading q, k and v once and
writing the output once, or the causal intra-block products at the matmul rate.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_lightning_attn_diag")

ELEMENT_SIZE = _common.ELEMENT_SIZE
BLOCK = 256
# causal attention inside 256-token blocks: fp32 (tf32) tl.dot tiles; at 32k tokens the
# bytes and the tensor-core flops are of one order on the H200
CONTEXTS = ("attention", "gemm")


def _pairs(n: int) -> int:
    """(query, key) pairs with the key at or before the query in the same block."""
    whole, rest = divmod(n, BLOCK)
    return whole * BLOCK * (BLOCK + 1) // 2 + rest * (rest + 1) // 2


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q, k and v read once, the output written once, the fp32 decay rates read once."""
    bh = d["batch"] * d["heads"]
    return ELEMENT_SIZE[dtype] * bh * d["seqlen"] * 2 * (d["d"] + d["e"]) + 4 * d["heads"]


def flops(d: Mapping[str, int]) -> int:
    """A multiply and an add per element of q . k and of the weighted v, for every causal
    (query, key) pair inside a block (the decay mask not counted)."""
    return 2 * (d["d"] + d["e"]) * d["batch"] * d["heads"] * _pairs(d["seqlen"])


_make_inputs = _common.forward_make_inputs(
    "vllm_lightning_attn_diag", "batch", "heads", "seqlen", "d", "e"
)
_reference = _common.forward_reference("vllm_lightning_attn_diag")
_baselines = _common.forward_baselines(
    "vllm_lightning_attn_diag",
    (
        "torch",
        "torch",
        "the same by torch in fp32: the blocks batched, Q K^T times the decay mask, times V",
        "torch_lightning_diag",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_lightning_attn_diag.launcher")


TRITON_KNOBS = (
    Knob("cblock", "int", (None, 16, 32, 64, 128), "tile_m",
         "queries per program, and keys per step of its walk to the diagonal (a divisor "
         "of the 256-token block); None: vLLM's 32"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the key sub-block loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_lightning_attn_diag",
    description=(
        "vLLM's lightning attention, diagonal blocks (v0.34.0, _fwd_diag_kernel): causal "
        "linear attention with per-head exponential decay inside 256-token blocks, 32 "
        "queries per program, fp32 tl.dot"
    ),
    dims=(
        Dim("batch", "sequences (vLLM passes one prompt at a time)", "batch"),
        Dim("heads", "heads on this GPU", "num_heads"),
        Dim("seqlen", "prompt tokens", "query_len"),
        Dim("d", "query and key head size (a power of two)", "head_dim"),
        Dim("e", "value head size (a power of two)"),
    ),
    trials=(
        Trial(
            "prompt_512_minimax_tp8",
            {"batch": 1, "heads": 8, "seqlen": 512, "d": 128, "e": 128},
            "a 512-token prompt through a MiniMax-Text-01 lightning layer at tensor "
            "parallelism 8 (8 heads of 128): two blocks, 128 programs, 4.2 MB moved",
        ),
        Trial(
            "prompt_32k_minimax_tp8",
            {"batch": 1, "heads": 8, "seqlen": 32768, "d": 128, "e": 128},
            "a 32768-token prompt through the same layer: 128 blocks, 8,192 programs, "
            "17 GFLOP, 268 MB moved",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 tl.dot is tf32 on the GPU (10-bit mantissas), sums of up to 256 terms
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="lightning_diag",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
