"""SGLang's paged KV allocation for an extend batch (SGLang v0.5.9, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_alloc_extend` and never committed.

Why this one as the set's data-dependent scan: a server run with KV pages of more than one
token (`--page-size 64`, as FlashMLA and the TRT-LLM MLA backends need for DeepSeek) calls
it before every prefill or extend batch to hand each request the KV slots of its new
tokens: the rest of its cached prefix's partly filled last page, then whole pages taken in
order from the free list, then a partial page.  One program per request sums the earlier
requests' token and page counts (a masked load of the whole batch and tl.sum: a prefix sum
done again by every program), then writes its slots through three masked stores, the
middle one as wide as the batch's extend tile (the next power of two of all its new
tokens), so each program spans the whole tile.  Latency-bound and integer-only: little data
moves, and the work grows with requests x tile.  Both trials are DeepSeek-V3 served with
64-token pages, prefixes of up to 4000 cached tokens: a batch of 8 requests extending about
512 tokens each (4096 tokens, 8 programs over a 4096-slot tile) and a chunk of 256 short
turns of about 64 tokens each (16,384 tokens, 256 programs over a 16,384-slot tile).  The
floor is reading the lengths, the last slots and the pages taken once and writing one int64
per new token.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_alloc_extend")

CONTEXTS = ("reduction", "small-grid")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each request's prefix and sequence length and last slot read once (int64), at most
    one free page per page of new tokens plus one per request read, one int64 slot written
    per new token (integers whatever the dtype)."""
    del dtype
    tokens = d["reqs"] * d["extend"]
    pages = tokens // d["page_size"] + d["reqs"]
    return 24 * d["reqs"] + 8 * pages + 8 * tokens


def flops(d: Mapping[str, int]) -> int:
    """None counted: integer index arithmetic only."""
    return 0


_make_inputs = _common.forward_make_inputs("sglang_alloc_extend", "reqs", "extend", "page_size")
_reference = _common.forward_reference("sglang_alloc_extend")
_baselines = _common.forward_baselines(
    "sglang_alloc_extend",
    (
        "torch",
        "torch",
        "the same slots by torch ops over the new tokens: repeat_interleave for each "
        "token's request, a cumsum over page boundaries for its free page",
        "torch_alloc_extend",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_alloc_extend.launcher")


TRITON_KNOBS = (
    Knob("extend_tile", "int", (None, 4096, 8192, 16384, 32768, 65536), "tile_n",
         "slots of the whole-page store that every program spans (at least the batch's new "
         "tokens); None: SGLang's next power of two of them"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_alloc_extend",
    description=(
        "SGLang's paged KV allocation for an extend batch (v0.5.9, alloc_extend_kernel): "
        "one program per request sums the earlier requests' counts and writes its new "
        "tokens' KV slots from its prefix's last page and the free page list"
    ),
    dims=(
        Dim("reqs", "requests of the extend batch", "batch"),
        Dim("extend", "new tokens per request, on average (they sum to reqs x extend)"),
        Dim("page_size", "tokens per KV page (SGLang's --page-size)"),
    ),
    trials=(
        Trial(
            "extend_8x512_deepseek_v3_page64",
            {"reqs": 8, "extend": 512, "page_size": 64},
            "8 requests of DeepSeek-V3 with 64-token pages extending about 512 tokens each "
            "after cached prefixes: 4096 slots, 8 programs over a 4096-slot tile",
        ),
        Trial(
            "extend_256x64_deepseek_v3_page64",
            {"reqs": 256, "extend": 64, "page_size": 64},
            "a chunk of 256 short turns of about 64 tokens each: 16,384 slots, 256 programs "
            "over a 16,384-slot tile",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # integer slots: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="alloc_extend",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
