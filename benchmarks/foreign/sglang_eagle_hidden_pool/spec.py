"""SGLang's multi-layer EAGLE hidden-state pool store (SGLang v0.5.9, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_eagle_hidden_pool` and never committed.

Why this one as the set's speculative-decoding state copy: a model with several MTP layers
(MiMo-V2-Flash, Step-3.5) is served by SGLang's spec-v2 multi-layer EAGLE worker, which
keeps, per request, the target's last speculative_num_steps - 1 hidden states so that the
draft layers' KV cache can be rebuilt when drafts are rejected; after every draft extend it
launches this kernel, one program per request, each copying its segment's last rows into
its slot of req_to_hidden_states_pool in 64-column steps (two nested loops whose trip
counts are constexprs: the rows kept and the hidden size).  Memory-bound and small: the
floor is reading and writing pool x hidden elements per request.  Both trials are
MiMo-V2-Flash (hidden size 4096, bf16) with its three MTP layers (3 speculative steps: 4
draft tokens extended per request, 2 hidden-state rows kept): a decode batch of 32
requests (32 programs) and one of 512 (512 programs).  Output: the pool (written in
place).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_eagle_hidden_pool")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound", "small-grid")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each request's kept rows read once and written once into its slot, and its slot,
    length and start read (int64, int32, int32)."""
    return 2 * d["reqs"] * d["pool"] * d["hidden"] * ELEMENT_SIZE[dtype] + d["reqs"] * 16


def flops(d: Mapping[str, int]) -> int:
    """None counted: a copy."""
    return 0


_make_inputs = _common.forward_make_inputs(
    "sglang_eagle_hidden_pool", "reqs", "extend", "pool", "hidden"
)
_reference = _common.forward_reference("sglang_eagle_hidden_pool")
_baselines = _common.forward_baselines(
    "sglang_eagle_hidden_pool",
    (
        "torch",
        "torch",
        "the same by torch ops: the kept rows' indices from the segment ends, gathered, "
        "index_copy_ into the slots",
        "torch_pool_store",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_eagle_hidden_pool.launcher")


TRITON_KNOBS = (
    Knob("block_hid", "int", (None, 32, 64, 128, 256, 512, 1024, 2048, 4096), "tile_n",
         "hidden columns per step of the loop over the hidden size; "
         "None: SGLang's 64"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipelining depth of the row loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_eagle_hidden_pool",
    description=(
        "SGLang's multi-layer EAGLE hidden-state pool store (v0.5.9, "
        "assign_hidden_states_pool_kernel): one program per request copies the last "
        "pool rows of its draft-extend segment's hidden states into its slot of the "
        "request pool, 64 columns at a time"
    ),
    dims=(
        Dim("reqs", "requests of the draft-extend batch", "batch"),
        Dim("extend", "tokens extended per request (spec v2's num_draft_tokens)", "query_len"),
        Dim("pool", "hidden-state rows kept per request (speculative_num_steps - 1)", "rows"),
        Dim("hidden", "the target model's hidden size", "row_len"),
    ),
    trials=(
        Trial(
            "decode_32_mimo_v2_flash_mtp3",
            {"reqs": 32, "extend": 4, "pool": 2, "hidden": 4096},
            "a decode batch of 32 MiMo-V2-Flash requests with its 3 MTP layers (4 draft "
            "tokens extended, 2 hidden-state rows kept, hidden 4096): 32 programs, 1.0 MB "
            "moved (bf16)",
        ),
        Trial(
            "decode_512_mimo_v2_flash_mtp3",
            {"reqs": 512, "extend": 4, "pool": 2, "hidden": 4096},
            "a decode batch of 512 MiMo-V2-Flash requests with its 3 MTP layers: 512 "
            "programs, 16.8 MB moved (bf16)",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # an exact copy: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="assign_hidden_pool",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
