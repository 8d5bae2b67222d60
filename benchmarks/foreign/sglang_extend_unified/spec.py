"""SGLang's unified extend attention (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
sglang_extend_unified` and never committed.

Why this one: a server started with `--enable-deterministic-inference` on the Triton
attention backend (RL rollouts that must match the trainer's logprobs bit for bit) runs
every prefill with a cached prefix through this kernel instead of `_fwd_kernel`, so that a
token's attention does not depend on how its sequence was chunked.  Nearest in the set is
`sglang_extend_attention` (the same file's two-phase kernel: the prefix gathered from the
pool, then the new tokens' keys and values read contiguously with the loop stopped at the
row block's causal end); here the new tokens' keys are already in the pool and one loop
walks a single index list (prefix slots, then the new tokens' slots) for every key, the
causal mask is a per-tile mask rather than a loop bound, so each row block also walks (and
masks out) every new key past its end, a -inf row guard sits in the online softmax, and the
head's sink logit joins the denominator.  `vllm_unified_attention` is another
single-loop paged attention, over a block table with query heads packed per KV head.
SGLang launches it on Hopper with 128 x 64 tiles, 4 warps for heads of 64 and 1 stage.  Both
trials are GPT-OSS-20B's full-attention layers (64 heads over 8 KV heads of 64, sinks) on one
GPU: a chunked prefill's second 4k chunk of an 8k prompt, and eight 32-token follow-ups on
2k cached prefixes (a launch-sized grid, decode-like in its few queries).  Output: o in the
dtype.  The floor is the larger of reading q, the gathered keys and values, the indices and
sinks once and writing o once, and the two products' flops over the causal pairs (the
masked tiles past each row block's end are work the floor does not count).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_extend_unified")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "online-softmax")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q read and o written once, each sequence's keys and values (prefix and new) gathered
    from the pool once (every kv head once, though its query heads and row blocks reread
    it), the int64 unified indices and kv offsets, the int32 query offsets and prefix
    lengths, and the sinks read once."""
    es = ELEMENT_SIZE[dtype]
    hd = d["headdim"]
    new = d["seqs"] * d["extend"]
    keys = d["seqs"] * (d["prefix"] + d["extend"])
    return (
        2 * new * d["heads"] * hd * es
        + 2 * keys * d["kvheads"] * hd * es
        + 8 * keys
        + 12 * (d["seqs"] + 1)
        + 4 * d["seqs"]
        + d["heads"] * es
    )


def flops(d: Mapping[str, int]) -> int:
    """Q K^T and P V over each query's prefix and its causal part of the new tokens."""
    e = d["extend"]
    pairs = d["seqs"] * (e * d["prefix"] + e * (e + 1) // 2)
    return 4 * d["heads"] * d["headdim"] * pairs


_make_inputs = _common.forward_make_inputs(
    "sglang_extend_unified", "seqs", "prefix", "extend", "heads", "kvheads", "headdim"
)
_reference = _common.forward_reference("sglang_extend_unified")
_baselines = _common.forward_baselines(
    "sglang_extend_unified",
    (
        "torch",
        "torch",
        "the same attention sequence by sequence: keys and values gathered from the pool, "
        "both products in the input dtype, the masked softmax with the sink in fp32",
        "torch_extend_attention_unified",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_extend_unified.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "new tokens (query rows) per program; None: SGLang's 128 on Hopper"),
    Knob("block_n", "int", (None, 16, 32, 64, 128), "tile_n",
         "keys per step of the unified key loop; None: SGLang's 64"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program (one sequence, head and row block); None: SGLang's 4 for heads "
         "of 64"),
    Knob("num_stages", "int", (None, 1, 2, 3), "pipeline_stages",
         "software-pipeline depth of the key loop; None: SGLang's 1"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_extend_unified",
    description=(
        "SGLang's unified extend attention (v0.5.9, _fwd_kernel_unified, the Triton "
        "backend's deterministic prefill with a cached prefix): per sequence, head and 128 "
        "new tokens, one online-softmax loop over a unified index list of prefix and new "
        "keys gathered from the KV pool, the causal mask applied per tile, sinks, 64 keys a "
        "step, GQA"
    ),
    dims=(
        Dim("seqs", "sequences in the batch", "batch"),
        Dim("prefix", "cached tokens per sequence (in the KV pool)"),
        # block_m tiles a sequence's new tokens (one sequence and head per program)
        Dim(
            "extend",
            "new tokens per sequence (the queries; their keys already in the pool)",
            "rows",
        ),
        Dim("heads", "query heads", "num_heads"),
        Dim("kvheads", "KV heads (query heads share them)"),
        Dim("headdim", "channels per head", "head_dim"),
    ),
    trials=(
        Trial(
            "chunked_prefill_gpt_oss_20b",
            {"seqs": 1, "prefix": 4096, "extend": 4096, "heads": 64, "kvheads": 8, "headdim": 64},
            "the second 4k chunk of an 8k prompt through a GPT-OSS-20B full-attention layer "
            "(64 heads over 8 KV heads of 64, sinks): 2048 programs each walking all 8192 "
            "keys, 412 GFLOP over the causal pairs (550 GFLOP of tiles walked), 84 MB moved",
        ),
        Trial(
            "followups_gpt_oss_20b",
            {"seqs": 8, "prefix": 2048, "extend": 32, "heads": 64, "kvheads": 8, "headdim": 64},
            "eight 32-token follow-ups on 2k-token cached prefixes (multi-turn chat, a radix "
            "cache hit) through a GPT-OSS-20B layer: 512 programs of one row block each, "
            "8.7 GFLOP, 38 MB moved (the gathered keys and values 34 MB of it), a "
            "launch-sized grid",
        ),
    ),
    backoff_dim="extend",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 softmax and accumulation, p rounded to the dtype before P V, o stored in it; fp32
    # operands are tf32 on the GPU
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="extend_attention_unified",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
