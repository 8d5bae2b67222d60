"""SGLang's extend attention (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
sglang_extend_attention` and never committed.

Why this one: the Triton attention backend's prefill whenever part of a sequence is already
cached (chunked prefill, multi-turn follow-ups, radix-cache hits), SGLang's default path on
GPUs without FlashInfer.  Nearest in the set is `sglang_prefill_attention` (the same online
softmax over a packed, causal prompt with no cache); here each program first walks its
sequence's cached prefix, gathering every key and value row from the KV pool through
kv_indices (page size 1: one index per token, rows scattered over the pool), unmasked, and
only then the new tokens' own keys and values with the causal mask, so its loads are an
indirect gather for most of the keys and the grid follows the new tokens, not the
sequence.  SGLang launches it on Hopper with 128 x 64 tiles, 8 warps and 1 stage.  Both
trials are Llama-3.1-8B layers (32 heads over 8 KV heads of 128): a chunked prefill's second
4k chunk of an 8k prompt, and eight 32-token follow-ups on 2k cached prefixes (a
launch-sized grid, decode-like in its few queries).  Output: o in the dtype.  The floor is
the larger of reading q, the new and cached keys and values and the indices once and
writing o once, and the two products' flops over the causal pairs.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_extend_attention")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "online-softmax")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q read and o written once, the new keys and values read once, each sequence's cached
    keys and values gathered once (every kv head once, though its query heads and row
    blocks reread it), the int64 kv_indices and int32 offsets read once."""
    es = ELEMENT_SIZE[dtype]
    hd = d["headdim"]
    new = d["seqs"] * d["extend"]
    cached = d["seqs"] * d["prefix"]
    return (
        2 * new * d["heads"] * hd * es
        + 2 * (new + cached) * d["kvheads"] * hd * es
        + 8 * cached
        + 8 * (d["seqs"] + 1)
    )


def flops(d: Mapping[str, int]) -> int:
    """Q K^T and P V over each query's prefix and its causal part of the new tokens."""
    e = d["extend"]
    pairs = d["seqs"] * (e * d["prefix"] + e * (e + 1) // 2)
    return 4 * d["heads"] * d["headdim"] * pairs


_make_inputs = _common.forward_make_inputs(
    "sglang_extend_attention", "seqs", "prefix", "extend", "heads", "kvheads", "headdim"
)
_reference = _common.forward_reference("sglang_extend_attention")
_baselines = _common.forward_baselines(
    "sglang_extend_attention",
    (
        "torch",
        "torch",
        "the same attention sequence by sequence: the prefix gathered from the pool, both "
        "products in the input dtype, the masked softmax in fp32",
        "torch_extend_attention",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_extend_attention.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "new tokens (query rows) per program; None: SGLang's 128 on Hopper"),
    Knob("block_n", "int", (None, 16, 32, 64, 128), "tile_n",
         "keys per step of the prefix and extend loops; None: SGLang's 64"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program (one sequence, head and row block); None: SGLang's 8 for heads "
         "of 128"),
    Knob("num_stages", "int", (None, 1, 2, 3), "pipeline_stages",
         "software-pipeline depth of the key loops; None: SGLang's 1"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_extend_attention",
    description=(
        "SGLang's extend attention (v0.5.9, the Triton backend's prefill with a cached "
        "prefix): per sequence, head and 128 new tokens, an online softmax first over the "
        "prefix's keys and values gathered from the KV pool through per-token indices, then "
        "over the new tokens' own with a causal mask, 64 keys a step, GQA"
    ),
    dims=(
        Dim("seqs", "sequences in the batch", "batch"),
        Dim("prefix", "cached tokens per sequence (in the KV pool)"),
        Dim("extend", "new tokens per sequence (the queries)"),
        Dim("heads", "query heads", "num_heads"),
        Dim("kvheads", "KV heads (query heads share them)"),
        Dim("headdim", "channels per head", "head_dim"),
    ),
    trials=(
        Trial(
            "chunked_prefill_llama3_8b",
            {"seqs": 1, "prefix": 4096, "extend": 4096, "heads": 32, "kvheads": 8, "headdim": 128},
            "the second 4k chunk of an 8k prompt through a Llama-3.1-8B layer (32 heads over "
            "8 KV heads of 128): 1024 programs, 412 GFLOP, 101 MB moved",
        ),
        Trial(
            "followups_llama3_8b",
            {"seqs": 8, "prefix": 2048, "extend": 32, "heads": 32, "kvheads": 8, "headdim": 128},
            "eight 32-token follow-ups on 2k-token cached prefixes (multi-turn chat, a radix "
            "cache hit): 256 programs of one row block each, 8.7 GFLOP, 72 MB moved (the "
            "gathered prefixes 67 MB of it), a launch-sized grid",
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
    entry_point="extend_attention",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
