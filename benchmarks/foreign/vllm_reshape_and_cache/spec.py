"""vLLM's paged KV-cache store (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
vllm_reshape_and_cache` and never committed.

Why this one as the set's scatter kernel: vLLM's Triton attention backend runs it in every
attention layer at every step, before the attention itself, to write the step's new keys
and values into the paged cache (each token to the block and row its slot names).  No
arithmetic and no reuse: one program per token (and per 2048 elements of its kv heads x
head size row) copies a contiguous key row and value row to two scattered cache rows;
vLLM launches it with 16 warps and 10 pipeline stages for a single load and store each.  A
decode step is a launch-sized grid (one program per sequence), a prefill one program per
prompt token.  Both trials are Llama-3.1-8B (8 kv heads of 128, 16-token blocks): a
64-sequence decode step and an 8192-token prompt.  Outputs: the two caches (written in
place).  The floor is reading the new keys and values once and writing them once (the slot
of each token is 8 bytes).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_reshape_and_cache")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The step's keys and values read once and written once to their cache rows, the int64
    slot of each token read once."""
    row = d["heads"] * d["head_size"] * ELEMENT_SIZE[dtype]
    return 4 * d["tokens"] * row + 8 * d["tokens"]


_make_inputs = _common.forward_make_inputs(
    "vllm_reshape_and_cache", "tokens", "seqs", "heads", "head_size", "block_size"
)
_reference = _common.forward_reference("vllm_reshape_and_cache")
_baselines = _common.forward_baselines(
    "vllm_reshape_and_cache",
    (
        "torch",
        "torch",
        "the same store by torch: one index_copy_ per cache on its slot-major view",
        "torch_reshape_and_cache",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_reshape_and_cache.launcher")


TRITON_KNOBS = (
    Knob("tile_size", "int", (None, 128, 256, 512, 1024, 2048), "tile_n",
         "elements of a token's kv heads x head size row per program; None: vLLM's row "
         "width rounded up to a power of two, at most 2048"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: vLLM's 16"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 10), "pipeline_stages",
         "pipeline stages asked of the compiler (the kernel has no loop); None: vLLM's 10"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_reshape_and_cache",
    description=(
        "vLLM's paged KV-cache store (v0.34.0, reshape_and_cache_kernel_flash): one program "
        "per token copies its key and value rows to the cache block and row of its slot, "
        "16 warps, flash layout, no fp8"
    ),
    dims=(
        Dim("tokens", "new tokens in the step (one program each)", "rows"),
        Dim("seqs", "sequences the tokens belong to (equal shares)", "batch"),
        Dim("heads", "kv heads", "num_heads"),
        Dim("head_size", "elements per head", "head_dim"),
        Dim("block_size", "tokens per cache block"),
    ),
    trials=(
        Trial(
            "decode_64_llama8b",
            {"tokens": 64, "seqs": 64, "heads": 8, "head_size": 128, "block_size": 16},
            "a 64-sequence decode step of Llama-3.1-8B (8 kv heads of 128, 16-token blocks): "
            "64 programs of one 1024-wide tile, 0.5 MB moved",
        ),
        Trial(
            "prefill_8k_llama8b",
            {"tokens": 8192, "seqs": 1, "heads": 8, "head_size": 128, "block_size": 16},
            "an 8192-token prompt of the same model into 512 scattered blocks: 8192 programs, "
            "67 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    # A program's tile spans a token's kv heads x head size row (the grid is tokens x its tiles).
    shape_metrics=lambda d: {"row_len": d["heads"] * d["head_size"]},
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a copy: exact
    tolerances={"bfloat16": 1e-9, "float16": 1e-9, "float32": 1e-9},
    entry_point="reshape_and_cache",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
