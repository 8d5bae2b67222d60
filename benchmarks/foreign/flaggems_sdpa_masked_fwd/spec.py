"""FlagGems' masked scaled-dot-product attention forward (FlagGems v5.0.2, Apache-2.0), as
kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_sdpa_masked_fwd` and never committed.

Why this one: FlagGems replaces torch's `scaled_dot_product_attention` when it is enabled,
and a bidirectional encoder served through torch SDPA (an embedding or reranking model in
Hugging Face transformers) calls it once per layer with the batch's padding mask.  It is
Triton tutorial 06's FlashAttention-2 forward with two additions: grouped-query heads and an
additive mask tile loaded per [BLOCK_M, BLOCK_N] step through the mask's four strides (here
a padding mask broadcast by stride 0 over heads and query rows).  Non-causal, so every
program walks every key.  Compute-bound at the large trial.  Both trials are
gte-Qwen2-7B-instruct (a bidirectional Qwen2 embedding model: 28 query heads on 4 KV heads,
head dim 128): a batch of 8 right-padded 2048-token documents (3,584 programs, 481 GFLOP)
and a batch of 32 64-token search queries (896 programs, 1.9 GFLOP).  The floor is the two
GEMMs (4 * batch * heads * seq^2 * head_dim FLOPs, padding included: the kernel does not
skip it) and reading q, k, v and the mask row once and writing o and M once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_sdpa_masked_fwd")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "compute-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q read and o written ([batch, heads, seq, head_dim]), k and v read ([batch,
    kv_heads, seq, head_dim]), the mask's one row per sequence read in the dtype, M written
    in fp32."""
    q_like = d["batch"] * d["heads"] * d["seq"] * d["head_dim"]
    kv_like = d["batch"] * d["kv_heads"] * d["seq"] * d["head_dim"]
    size = ELEMENT_SIZE[dtype]
    return (2 * q_like + 2 * kv_like + d["batch"] * d["seq"]) * size + (
        d["batch"] * d["heads"] * d["seq"] * 4
    )


def flops(d: Mapping[str, int]) -> int:
    """q k^T and p v, each 2 * seq^2 * head_dim per head, over the padded length."""
    return 4 * d["batch"] * d["heads"] * d["seq"] ** 2 * d["head_dim"]


_make_inputs = _common.forward_make_inputs(
    "flaggems_sdpa_masked_fwd", "batch", "heads", "kv_heads", "seq", "head_dim"
)
_reference = _common.forward_reference("flaggems_sdpa_masked_fwd")
_baselines = _common.forward_baselines(
    "flaggems_sdpa_masked_fwd",
    ("torch", "torch", "torch's SDPA with the same mask and GQA (M recomputed unfused)",
     "torch_sdpa"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.flaggems_sdpa_masked_fwd.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 32, 64, 128), "tile_m",
         "query rows per program; None: the tuned list's first, 128"),
    Knob("block_n", "int", (None, 16, 32, 64, 128), "kv_tile",
         "keys per step (at most the head dim); None: the tuned list's first, 128"),
    Knob("num_warps", "int", (None, 4, 8), "warps",
         "warps per program (the YAML's two); None: the tuned list's first, 8"),
    Knob("num_stages", "int", (None, 2, 3, 4), "pipeline_stages",
         "software pipelining stages of the key loop; None: the tuned list's first, 4 (3 or 2 "
         "where 4 do not fit in shared memory)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_sdpa_masked_fwd",
    description=(
        "FlagGems' SDPA forward with an additive mask (v5.0.2, _attn_fwd, Triton tutorial "
        "06, non-causal): per BLOCK_M query rows of a head, every key of its KV head BLOCK_N "
        "at a time in two tl.dots under a base-2 online softmax, the mask tile added to the "
        "scores; o and the base-2 log-sum-exp stored"
    ),
    dims=(
        Dim("batch", "sequences", "batch"),
        Dim("heads", "query heads", "num_heads"),
        Dim("kv_heads", "KV heads (grouped-query attention)"),
        Dim("seq", "padded tokens per sequence (queries and keys)", "kv_len"),
        Dim("head_dim", "head dimension (16 to 256, a power of two)", "head_dim"),
    ),
    trials=(
        Trial(
            "embed_gte_qwen2_7b_docs_2k",
            {"batch": 8, "heads": 28, "kv_heads": 4, "seq": 2048, "head_dim": 128},
            "gte-Qwen2-7B-instruct embedding a batch of 8 right-padded 2048-token documents "
            "(28 query heads on 4 KV heads, head dim 128): 3,584 programs, 481 GFLOP, 270 MB "
            "moved (bf16)",
        ),
        Trial(
            "embed_gte_qwen2_7b_queries_64",
            {"batch": 32, "heads": 28, "kv_heads": 4, "seq": 64, "head_dim": 128},
            "the same model embedding a batch of 32 search queries padded to 64 tokens: 896 "
            "programs (one 64-row tile each but 128-row programs), 1.9 GFLOP, 33 MB moved",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # bf16: p rounded to the dtype before the second tl.dot; against an fp32 reference
    tolerances={"bfloat16": 3e-2, "float16": 1e-2, "float32": 5e-3},
    entry_point="sdpa_masked_fwd",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
