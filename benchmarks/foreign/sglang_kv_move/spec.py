"""SGLang's all-layer KV-cache slot move (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_kv_move` and never committed.

Why this one as the set's in-place KV compaction: a server running EAGLE speculative
decoding with a draft tree (top-k > 1) and KV pages of more than one token verifies a whole
tree per request, then keeps only the accepted path: `move_kv_cache` copies, in every
layer's K and V buffer, the accepted nodes' rows to the first slots of the request's verify
row, after every verify step.  One launch covers all 2 x layers buffers through a device
table of their addresses: one program per buffer and 128 bytes of a row casts the address
to a uint8 pointer, loads the chunk's source and target slots (up to 256, int64), gathers a
[slots, 128] byte tile and stores it to the target rows, all loads before all stores (safe
in place); more slots than the cap take one launch per chunk.  Memory-bound gather and
scatter of whole rows, with 64-bit addresses for every byte of the tile in registers.  Both
trials are Llama-family GQA models with EAGLE trees (8 KV heads x 128 in bf16: 2048-byte
rows, SGLang's 128-byte tiles): Llama 3.1 8B (32 layers) with 8 requests of 8 draft tokens
(36 accepted slots: one launch of 64 x 16 programs, 4.7 MB read and written) and Llama 3.3
70B in fp8 on one H200 (80 layers) with 64 requests of 16 draft tokens (544 slots: three launches of 160 x 16
programs over chunks of 256, 256 and 32 slots, 178 MB read and written).  The floor is
reading each moved row once and writing it once in every buffer.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_kv_move")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("memory-bound",)


def moved_slots(reqs: int, draft_tokens: int) -> int:
    """The accepted tokens of the batch (reference.accepted, summed): the slots moved."""
    return sum(1 + (3 * r + 2) % draft_tokens for r in range(reqs))


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each moved row read once and written once in each of the 2 x layers buffers, the
    int64 source and target slots and the address and stride tables read once."""
    n = moved_slots(d["reqs"], d["draft_tokens"])
    row = d["kv_heads"] * d["head_dim"] * ELEMENT_SIZE[dtype]
    return 2 * n * row * 2 * d["layers"] + 16 * n + 16 * 2 * d["layers"]


def flops(d: Mapping[str, int]) -> int:
    """None counted: a byte copy."""
    return 0


_make_inputs = _common.forward_make_inputs(
    "sglang_kv_move", "layers", "kv_heads", "head_dim", "reqs", "draft_tokens"
)
_reference = _common.forward_reference("sglang_kv_move")
_baselines = _common.forward_baselines(
    "sglang_kv_move",
    (
        "torch",
        "torch",
        "SGLang's move_kv_cache_native: per layer, an index copy of K and of V (two "
        "launches per layer)",
        "torch_kv_move",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_kv_move.launcher")


TRITON_KNOBS = (
    Knob("bytes_per_tile", "int", (None, 64, 128, 256, 512, 1024, 2048), "tile_n",
         "bytes of a row per program; None: SGLang's choice for the row stride (128 below "
         "4096 bytes)"),
    Knob("locs_cap", "int", (None, 16, 32, 64, 128, 256, 512), "tile_m",
         "slots per launch (more take one launch per chunk; each program gathers the "
         "chunk's next power of two); None: SGLang's 256 (128 with 512-byte tiles)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: SGLang's 4 (8 with 512-byte tiles)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_kv_move",
    description=(
        "SGLang's all-layer KV-cache slot move (v0.5.9, copy_all_layer_kv_cache_tiled), "
        "EAGLE tree verification's accepted-path compaction: one program per K or V buffer "
        "(a device address table) and 128 bytes of a row gathers the source rows of up to "
        "256 slots and stores them to the target rows, in place"
    ),
    dims=(
        Dim("layers", "the model's layers (2 x layers buffers)"),
        Dim("kv_heads", "KV heads per layer on one GPU"),
        Dim("head_dim", "head size"),
        Dim("reqs", "requests of the verified batch", "batch"),
        Dim("draft_tokens", "verify tokens per request (SGLang's speculative_num_draft_tokens)"),
    ),
    trials=(
        Trial(
            "llama31_8b_eagle_8reqs_8drafts",
            {"layers": 32, "kv_heads": 8, "head_dim": 128, "reqs": 8, "draft_tokens": 8},
            "Llama 3.1 8B (32 layers, 8 KV heads x 128, bf16: 2048-byte rows) with an EAGLE "
            "tree of 8 draft tokens, 8 requests: 36 accepted slots, one launch of 64 x 16 "
            "programs, 4.7 MB read and written",
        ),
        Trial(
            "llama33_70b_eagle_64reqs_16drafts",
            {"layers": 80, "kv_heads": 8, "head_dim": 128, "reqs": 64, "draft_tokens": 16},
            "Llama 3.3 70B in fp8 (80 layers, all 8 KV heads x 128 on one H200) with 16 "
            "draft tokens, 64 requests: 544 accepted slots, three launches of 160 x 16 "
            "programs (chunks of 256, 256 and 32), 178 MB read and written",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    # A program's tile is bytes_per_tile bytes of a slot's row (the buffer read as uint8):
    # row_len is that row in bytes, kv heads x head size x the element size.
    shape_metrics=lambda d: {"row_len": d["kv_heads"] * d["head_dim"] * ELEMENT_SIZE[SPEC.dtype]},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a byte copy: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="kv_move",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
