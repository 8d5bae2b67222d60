"""SGLang's LoRA embedding A lookup (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_embedding_lora_a` and never committed.

Why this one as the set's transposed gather: SGLang serves several LoRA adapters in one
batch, and an adapter that targets the input embedding (`embed_tokens`, as adapters that
add or retrain tokens do) makes its Triton LoRA backend call this kernel before every
forward: each token's A "embedding" is a column of its adapter's A matrix, stored as the
pool holds it, [slots, rank, vocab], so the rank values of one token lie a whole vocabulary
apart (256 KB for Llama 3.1's 128,256 tokens in bf16).  One program per token position and
request gathers them in 128-rank steps and stores the token's row: every element read is a
separate memory sector, every row a strided gather across the 131 MB weight pool, the grid
as wide as the batch's longest segment.  Both trials are Llama 3.1 8B (vocabulary 128,256)
with 8 adapter slots of max rank 64 (ranks 64, 32, 16, 64, 8, 32, 16 and an empty slot
for requests without an adapter): a decode batch of 64 requests (64 programs, launch-sized)
and a prefill of 8 requests of about 1024 new tokens each (8192 tokens, 8 x 1063 programs).
The floor is reading each token's id and its adapter's rank values once and writing its
output row.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from foreign.sglang_embedding_lora_a.reference import request_slots, seg_lens_for, slot_ranks
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_embedding_lora_a")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("memory-bound", "small-grid")  # one strided element per sector, a batch-wide grid
INT64 = 8


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each token's int64 id read, its adapter's rank values read once (the spec's dtype),
    its output row of the pool's max rank written (the zeros past its rank included)."""
    es = ELEMENT_SIZE[dtype]
    ranks = slot_ranks(d["rank"], d["loras"])
    lens = seg_lens_for(d["reqs"], d["tokens"])
    slots = request_slots(d["reqs"], d["loras"])
    gathered = sum(n * ranks[s] for n, s in zip(lens, slots, strict=True))
    return sum(lens) * (INT64 + d["rank"] * es) + gathered * es


def flops(d: Mapping[str, int]) -> int:
    """None: a gather."""
    return 0


_make_inputs = _common.forward_make_inputs(
    "sglang_embedding_lora_a", "reqs", "tokens", "rank", "loras", "vocab"
)
_reference = _common.forward_reference("sglang_embedding_lora_a")
_baselines = _common.forward_baselines(
    "sglang_embedding_lora_a",
    (
        "torch",
        "torch",
        "the same rows by torch ops: each token's slot by repeat_interleave, its A column "
        "by advanced indexing, the ranks past its adapter's zeroed",
        "torch_embedding_lora_a",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_embedding_lora_a.launcher")


TRITON_KNOBS = (
    Knob("block_rank", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "ranks gathered per loop step of a program; None: SGLang's 128"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline stages of the rank loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_embedding_lora_a",
    description=(
        "SGLang's LoRA embedding A lookup (v0.5.9, _embedding_lora_a_kernel): one program "
        "per token position and request gathers its adapter's A column at the token's id, "
        "rank values a vocabulary apart, into the token's row"
    ),
    dims=(
        Dim("reqs", "requests of the batch (one segment and adapter slot each)", "batch"),
        Dim("tokens", "new tokens per request, on average (1: a decode batch)"),
        Dim("rank", "the LoRA pool's max rank (A's middle dimension)"),
        Dim("loras", "adapter slots in the pool (--max-loras-per-batch)"),
        Dim("vocab", "vocabulary size (A's last, contiguous dimension)"),
    ),
    trials=(
        Trial(
            "llama31_8b_lora_decode64",
            {"reqs": 64, "tokens": 1, "rank": 64, "loras": 8, "vocab": 128256},
            "Llama 3.1 8B (vocabulary 128,256) with 8 adapter slots of max rank 64 whose "
            "adapters target embed_tokens, on a decode batch of 64 requests: 64 programs, "
            "launch-sized",
        ),
        Trial(
            "llama31_8b_lora_prefill8x1024",
            {"reqs": 8, "tokens": 1024, "rank": 64, "loras": 8, "vocab": 128256},
            "the same on a prefill of 8 requests of about 1024 new tokens each: 8192 "
            "tokens, 8 x 1063 programs",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # copied values: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="embedding_lora_a",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
