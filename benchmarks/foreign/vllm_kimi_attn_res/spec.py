"""vLLM's Kimi K3 block attention residuals (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_kimi_attn_res` and never committed.

Why this one: Kimi K3 replaces the residual stream by block attention residuals, and
vLLM's `attn_res` runs twice in every decoder layer (before the attention and before the
MLP) on the Triton path, which is every GPU but SM100 (the native op there covers hidden
7168 and up to 8 blocks).  One program per token fuses the residual update (prefix +=
delta, stored back in the dtype; at a block-write layer also stored as the next completed
block) with a softmax over depth: the valid completed blocks and the new prefix, each
RMS-normalised into a logit against a learned pseudo-query, walked BLOCK_L sources a step
with an online softmax, then the mix RMS-normalised for the next sublayer.  Both trials are
Kimi K3's text model (hidden 7168, bf16) with an 8-slot block table: a deep layer's
pre-attention step in an 8,192-token chunked prefill (8 earlier blocks and the prefix:
8,192 programs, 1.41 GB moved) and a block-write layer's pre-attention step in a 64-token
decode batch (4 blocks and the prefix, the new block stored: 64 programs, 8.3 MB).  The
floor is reading the prefix, the delta and the valid blocks once and writing the prefix,
the output and any written block once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_kimi_attn_res")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "normalization", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Per token: the prefix and delta rows and the valid blocks read once, the prefix, the
    output and a written block stored once; the three [hidden] weights read once."""
    rows = 2 + d["sources"] + 2 + (d["layer_kind"] == 2)
    return ELEMENT_SIZE[dtype] * (rows * d["tokens"] * d["hidden"] + 3 * d["hidden"])


def flops(d: Mapping[str, int]) -> int:
    """Per token and element: the delta add; per source: the square and logit dots (four)
    and the weighted sum (two); the output norm (four)."""
    return d["tokens"] * d["hidden"] * (1 + 6 * (d["sources"] + 1) + 4)


_make_inputs = _common.forward_make_inputs(
    "vllm_kimi_attn_res", "tokens", "hidden", "slots", "sources", "layer_kind"
)
_reference = _common.forward_reference("vllm_kimi_attn_res")
_baselines = _common.forward_baselines(
    "vllm_kimi_attn_res",
    (
        "torch",
        "torch",
        "the same step by torch ops: the sources stacked into a [tokens, sources + 1, hidden] "
        "fp32 copy, RMS logits, softmax and weighted sum, the output norm (several launches)",
        "torch_attn_res",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_kimi_attn_res.launcher")


TRITON_KNOBS = (
    Knob("block_l", "int", (None, 1, 2, 4, 8), "kv_tile",
         "sources (blocks and the prefix) per online-softmax step; None: vLLM's 1 from 256 "
         "tokens up or with at most one block, else 4"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: vLLM's 4 (with 1 source a step) or 8 (with 4)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software pipeline stages of the source loop; None: vLLM's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_kimi_attn_res",
    description=(
        "vLLM's Kimi K3 block attention residuals (v0.34.0, _attn_res_kernel): one program "
        "per token adds the delta to the prefix in place (and stores it as the next block at "
        "a block-write layer), takes an online softmax over the valid blocks and the prefix "
        "of their RMS-normed pseudo-query logits, and RMS-norms the weighted sum"
    ),
    dims=(
        Dim("tokens", "tokens in the step (one program each)", "batch"),
        Dim("hidden", "the model's hidden size", "row_len"),
        Dim("slots", "the block table's slots (completed blocks the layer may hold)"),
        Dim("sources", "valid completed blocks mixed with the prefix"),
        Dim("layer_kind", "1: an ordinary layer; 2: a block-write layer (prefix stored)"),
    ),
    trials=(
        Trial(
            "kimi_k3_prefill8k_8_blocks",
            {"tokens": 8192, "hidden": 7168, "slots": 8, "sources": 8, "layer_kind": 1},
            "Kimi K3 (hidden 7168), a deep layer's pre-attention step in an 8,192-token "
            "chunked prefill: 8 completed blocks and the prefix mixed, no block written; "
            "vLLM's prefill launch (1 source a step, 4 warps): 8,192 programs, 1.41 GB "
            "moved (bf16)",
        ),
        Trial(
            "kimi_k3_decode64_write_4_blocks",
            {"tokens": 64, "hidden": 7168, "slots": 8, "sources": 4, "layer_kind": 2},
            "the same model's block-write layer in a 64-token decode batch: the new prefix "
            "stored as block 4, 4 blocks and the prefix mixed; vLLM's decode launch (4 "
            "sources a step, 8 warps): 64 programs, 8.3 MB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    shape_metrics=lambda d: {"rows": d["tokens"]},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums in a different order (online softmax, per-tile reductions) and the output
    # rounded once; the prefix and the blocks are stored exactly as the reference rounds them
    tolerances={"bfloat16": 2e-2, "float16": 4e-3, "float32": 1e-5},
    entry_point="attn_res",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
