"""FlagGems' causal scaled-dot-product attention backward (FlagGems v5.0.2, Apache-2.0), as
kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_attention_bwd` and never committed.

Why this one as the set's training backward: FlagGems replaces torch's
`scaled_dot_product_attention` with its own autograd function when it is enabled, and every
training step of a causal LM runs this backward once per layer.  It is Triton tutorial 06's
FlashAttention-2 backward: a preprocess (delta = rowsum(o * do)), then one kernel whose
programs each hold 128 key rows of K and V and sweep the query rows below the diagonal in
tl.dot tiles, recomputing the probabilities from the saved base-2 log-sum-exp, for dK and
dV, then take 128 query rows and sweep the key blocks up to them for dQ (seven tl.dot
products per tile pair, two of them recomputed); dK and dV are written per query head and
summed over each KV group by torch.  Compute-bound.  Both trials are Llama 3.1 8B (32 query
heads, 8 KV heads, head dim 128) in training: a fine-tuning sequence of 2048 tokens (512
programs, 86 GFLOP) and a pre-training sequence of 8192 (2048 programs, 1.37 TFLOP).  The
floor is the larger of the five causal GEMMs of the backward (5 * heads * seq^2 * head_dim
FLOPs) and reading q, k, v, o, do and M once and writing dq, dk and dv once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_attention_bwd")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "compute-bound", "multi-kernel")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q, o, do read and dq written ([batch, heads, seq, head_dim] each), k, v read and dk,
    dv written ([batch, kv_heads, seq, head_dim] each), M read in fp32."""
    q_like = d["batch"] * d["heads"] * d["seq"] * d["head_dim"]
    kv_like = d["batch"] * d["kv_heads"] * d["seq"] * d["head_dim"]
    return (4 * q_like + 4 * kv_like) * ELEMENT_SIZE[dtype] + d["batch"] * d["heads"] * d["seq"] * 4


def flops(d: Mapping[str, int]) -> int:
    """The backward's five GEMMs (q k^T, dO V^T, P^T dO, dS K, dS^T Q), each 2 * seq^2 *
    head_dim per head, halved by the causal mask."""
    return 5 * d["batch"] * d["heads"] * d["seq"] ** 2 * d["head_dim"]


_make_inputs = _common.forward_make_inputs(
    "flaggems_attention_bwd", "batch", "heads", "kv_heads", "seq", "head_dim"
)
_reference = _common.forward_reference("flaggems_attention_bwd")
_baselines = _common.forward_baselines(
    "flaggems_attention_bwd",
    ("torch", "torch", "torch's fused causal SDPA forward and its autograd backward",
     "torch_sdpa_backward"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.flaggems_attention_bwd.launcher")


TRITON_KNOBS = (
    Knob("block_m1", "int", (None, 32, 64), "tile_k",
         "query rows per dK/dV step (half on the diagonal block); None: the YAML's first, 32"),
    Knob("block_n1", "int", (None, 64, 128), "tile_m",
         "key rows per program, and its dQ query rows (BLOCK_M2); None: the YAML's first, 128"),
    Knob("block_n2", "int", (None, 32, 64), "kv_tile",
         "key rows per dQ step (half on the diagonal block); None: the YAML's first, 32"),
    Knob("num_warps", "int", (None, 4, 8), "warps",
         "warps per program (the YAML's two); None: the YAML's first, 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software pipelining stages of the row and column sweeps; None: the YAML's first, 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_attention_bwd",
    description=(
        "FlagGems' causal SDPA backward (v5.0.2, _attn_bwd_preprocess and _attn_bwd, Triton "
        "tutorial 06): delta = rowsum(o * do), then per 128 key rows dK and dV over the query "
        "rows below the diagonal and per 128 query rows dQ over the keys up to them, in "
        "tl.dot tiles with P recomputed from the saved log-sum-exp; dK, dV summed per KV head"
    ),
    dims=(
        Dim("batch", "sequences"),
        Dim("heads", "query heads"),
        Dim("kv_heads", "KV heads (grouped-query attention)"),
        Dim("seq", "tokens per sequence (a multiple of BLOCK_N1)"),
        Dim("head_dim", "head dimension (16 to 256, a power of two)"),
    ),
    trials=(
        Trial(
            "sft_llama31_8b_2k",
            {"batch": 1, "heads": 32, "kv_heads": 8, "seq": 2048, "head_dim": 128},
            "a Llama 3.1 8B fine-tuning step's attention backward, one 2048-token sequence (32 "
            "query heads on 8 KV heads, head dim 128): 512 programs, 86 GFLOP, 84 MB moved "
            "(bf16)",
        ),
        Trial(
            "pretrain_llama31_8b_8k",
            {"batch": 1, "heads": 32, "kv_heads": 8, "seq": 8192, "head_dim": 128},
            "the same for Llama 3.1 8B's 8192-token pre-training sequence: 2048 programs, "
            "1.37 TFLOP, 336 MB moved (bf16)",
        ),
    ),
    backoff_dim="seq",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # bf16: k scaled by scale / ln 2 and dS rounded to the dtype before their tl.dot, dV's
    # fp32 products in TF32 on the GPU; against an fp32 reference
    tolerances={"bfloat16": 3e-2, "float16": 1e-2, "float32": 5e-3},
    entry_point="attention_bwd",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
