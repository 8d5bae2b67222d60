"""vLLM's M-RoPE position preparation for the GPU model runner (vLLM v0.34.0, Apache-2.0),
as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_mrope_positions` and never committed.

Why this one as the set's per-step varlen position fill: every step of an M-RoPE model
(Qwen2.5-VL, Qwen3-VL: three position channels, temporal, height and width) on vLLM's
GPU model runner starts with `RopeState.prepare_positions`, one program per request of the
batch: it loads the request's slot, prefill length, computed-token count and delta, then
walks its tokens 1024 at a time and, for each channel, either gathers the prompt's
precomputed positions from a [slots x 3, max_model_len] int32 table (a request still in
prefill) or computes offset + token + delta (a decoding one), storing int64 into the
persistent [3, max_tokens + 1] buffer.  No floating point: a branchy, per-request
variable-length copy, the grid as wide as the batch and each program's work as long as its
query.  The large trial is a 16,512-token chunked-prefill step of Qwen2.5-VL (16 prompt
chunks of 1,024 tokens next to 128 decoding requests; a 32K context's table); the small one
a decode step of 64 requests, one a
new prompt's 128-token chunk.  Latency-bound; the floor is reading the prefill chunks'
table slices once and writing the positions once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_mrope_positions")

CONTEXTS = ("memory-bound", "small-grid")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The prefill chunks' int32 table slices read once, the int64 positions written once,
    and five int32 per request of metadata (slot, two query bounds, prefill length,
    computed count, delta: six, the slot's bound shared); the dtype plays no part."""
    del dtype
    reqs = d["prefills"] + d["decodes"]
    tokens = d["prefills"] * d["chunk"] + d["decodes"]
    table = d["prefills"] * d["chunk"] * d["channels"] * 4
    return table + tokens * d["channels"] * 8 + reqs * 5 * 4


def flops(d: Mapping[str, int]) -> int:
    """None counted: integer adds and copies."""
    return 0


_make_inputs = _common.forward_make_inputs(
    "vllm_mrope_positions", "prefills", "chunk", "decodes", "channels", "max_model_len"
)
_reference = _common.forward_reference("vllm_mrope_positions")
_baselines = _common.forward_baselines(
    "vllm_mrope_positions",
    (
        "torch",
        "torch",
        "the same by torch ops: each token's request by a searchsorted of the query start "
        "locations, one gather from the table and the computed branch, selected per token",
        "torch_positions",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_mrope_positions.launcher")


TRITON_KNOBS = (
    Knob("block", "int", (None, 64, 128, 256, 512, 1024, 2048, 4096), "tile_n",
         "tokens of a request per loop step of its program; None: vLLM's 1024"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software pipeline stages of the token loop's table loads; None: Triton's default "
         "3 (vLLM passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_mrope_positions",
    description=(
        "vLLM's M-RoPE position preparation (v0.34.0, _prepare_rope_positions_kernel): one "
        "program per request walks its tokens 1024 at a time and, per position channel, "
        "gathers the prompt's precomputed positions (prefill) or computes offset + delta "
        "(decode) into the runner's int64 positions buffer"
    ),
    dims=(
        Dim("prefills", "requests of the step still in their prompt (chunked prefill)", "batch"),
        Dim("chunk", "tokens of each prefill request this step", "rows"),
        Dim("decodes", "requests of the step decoding one token"),
        Dim("channels", "M-RoPE position channels (Qwen-VL: temporal, height, width)"),
        Dim("max_model_len", "row length of the prefill positions table"),
    ),
    trials=(
        Trial(
            "decode_64_qwen25vl",
            {"prefills": 1, "chunk": 128, "decodes": 63, "channels": 3, "max_model_len": 32768},
            "a decode step of 64 Qwen2.5-VL requests (3 M-RoPE channels, 32K context), one of "
            "them a new prompt's 128-token chunk: 64 programs, 63 of one computed token",
        ),
        Trial(
            "mixed_16512_qwen25vl",
            {"prefills": 16, "chunk": 1024, "decodes": 128, "channels": 3, "max_model_len": 32768},
            "a 16,512-token chunked-prefill step of Qwen2.5-VL: 16 prompt chunks of 1,024 "
            "tokens gathered from the table next to 128 decoding requests, 144 programs",
        ),
    ),
    backoff_dim="decodes",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # integer positions, checked exactly
    tolerances={"bfloat16": 1e-15, "float16": 1e-15, "float32": 1e-15},
    entry_point="prepare_positions",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
