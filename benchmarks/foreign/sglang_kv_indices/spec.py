"""SGLang's KV index gather (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
sglang_kv_indices` and never committed.

Why this one as the set's launch-sized bookkeeping kernel of the serving path: SGLang's
Triton and FlashInfer attention backends run it before every decode step (over the whole
KV cache of the batch) and every extend (over the cached prefixes), to flatten the batch's
KV cache slots from the req_to_token pool into one list that the attention kernels index
(int32 for FlashInfer, wrapped here).  No arithmetic: one program per request copies a contiguous slice of its pool row,
in 512-wide masked steps, to a contiguous slice of the output; the grid is the batch size,
so a step has a few to a few hundred programs each looping over thousands of slots.  Both
trials are small grids (fewer programs than SMs): a 64-sequence decode step and the extend
of eight requests with long cached prefixes.  Output: the int32 list.  The floor is reading
the slots once and writing them once (the per-request indices, lengths and offsets are a few
bytes).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_kv_indices")

CONTEXTS = ("elementwise", "memory-bound", "small-grid")


def bytes_moved(d: Mapping[str, int]) -> int:
    """The batch's int32 slots read once from the pool and written once to the list, the
    int64 pool row and length and the int32 offset of each request read once (whatever
    the spec's dtype: the tables are integers)."""
    return 8 * d["batch"] * d["kv_len"] + 20 * d["batch"]


_make_inputs = _common.forward_make_inputs("sglang_kv_indices", "batch", "kv_len", "max_context")
_reference = _common.forward_reference("sglang_kv_indices")
_baselines = _common.forward_baselines(
    "sglang_kv_indices",
    (
        "torch",
        "torch",
        "the same list by one torch gather of the batch's pool rows, sliced to the length",
        "torch_kv_indices",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_kv_indices.launcher")


TRITON_KNOBS = (
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program (one request's 512-slot steps); None: Triton's default 4 "
         "(SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the copy loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_kv_indices",
    description=(
        "SGLang's KV index gather before attention (v0.5.9, create_flashinfer_kv_indices_"
        "triton): one program per request copies its KV cache slots from the req_to_token "
        "pool into a flat int32 list, 512 slots per step"
    ),
    dims=(
        Dim("batch", "requests in the batch (one program each)", "batch"),
        Dim("kv_len", "KV cache slots per request (equal lengths)", "kv_len"),
        Dim("max_context", "slots per req_to_token row (the pool's row stride)"),
    ),
    trials=(
        Trial(
            "decode_64x4k",
            {"batch": 64, "kv_len": 4096, "max_context": 32768},
            "a 64-sequence decode step at 4k tokens of context each, 32k-slot pool rows: 64 "
            "programs of eight 512-slot steps, 2.1 MB moved",
        ),
        Trial(
            "extend_prefix_8x16k",
            {"batch": 8, "kv_len": 16384, "max_context": 131072},
            "the extend of eight requests with 16k-token cached prefixes (a long shared "
            "system prompt or document), 128k-slot pool rows: 8 programs of 32 steps, 1 MB "
            "moved",
        ),
    ),
    backoff_dim="kv_len",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=bytes_moved,
    # a copy of integers: exact
    tolerances={"bfloat16": 1e-9, "float16": 1e-9, "float32": 1e-9},
    entry_point="create_kv_indices",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
