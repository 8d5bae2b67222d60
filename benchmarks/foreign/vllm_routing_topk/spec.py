"""vLLM's vendored triton_kernels routing top-k (vLLM v0.34.0, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_routing_topk` and never committed.

Why this one as the set's MoE top-k by packed keys: gpt-oss runs its MoE layers through
OpenAI's triton_kernels on Hopper (matmul_ogs over MXFP4 weights), and every MoE layer of
every step starts with `routing`, whose first launch is `topk_forward`: one program per 32
tokens turns each 32-expert tile of router logits into 32-bit unsigned keys (the bf16 value's
bits flipped to sort as integers, shifted over the complement of the expert index, so a tie
goes to the smaller index), keeps a running tl.topk of them across the tiles merged by
tl.bitonic_merge and an element-wise maximum, tl.sorts the k survivors by expert, softmaxes
their values in fp32, stores weights and int16 ids, and packs the ids into a transposed
uint32 bitmatrix word by word with tl.reduce_or; the first programs also zero the routing
scratchpad.  Integer key arithmetic and in-register sorting networks, no tl.dot.  Trials:
gpt-oss-120b (128 experts, top-4) on a 16,384-token prefill step (512 programs, 4.7 MB
moved) and gpt-oss-20b (32 experts, top-4) on a 256-sequence decode step (8 programs,
22 KB moved).  Memory- and latency-bound; the floor is reading the logits once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_routing_topk")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound", "small-grid")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The logits read once; the weights (dtype), int16 ids and uint32 bitmatrix words
    written once."""
    es = ELEMENT_SIZE[dtype]
    words = (d["experts"] + 31) // 32
    return d["tokens"] * (d["experts"] * es + d["topk"] * (es + 2) + words * 4)


def flops(d: Mapping[str, int]) -> int:
    """The softmax over the k selected values (an exp, a sum and a divide each); the key
    compares and sorts are integer work and not counted."""
    return 3 * d["tokens"] * d["topk"]


_make_inputs = _common.forward_make_inputs("vllm_routing_topk", "tokens", "experts", "topk")
_reference = _common.forward_reference("vllm_routing_topk")
_baselines = _common.forward_baselines(
    "vllm_routing_topk",
    (
        "torch",
        "torch",
        "the same by torch ops: torch.topk, a sort of the ids, an fp32 softmax of the k and "
        "a one-hot shifted and summed per 32-expert word",
        "torch_routing_topk",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_routing_topk.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 8, 16, 32, 64, 128), "tile_m",
         "tokens per program (the grid is ceil(tokens / block_m), at least the scratchpad's "
         "blocks); None: triton_kernels' 32"),
    Knob("block_n", "int", (None, 32, 64, 128), "tile_n",
         "experts per tile of the streaming top-k and words packed per bitmatrix step / 32 "
         "(a multiple of 32; the experts are padded to a multiple of it); None: "
         "triton_kernels' 32"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (topk_forward passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_routing_topk",
    description=(
        "vLLM's vendored triton_kernels routing top-k (v0.34.0, _topk_forward): one program "
        "per 32 tokens keeps a running tl.topk of packed value|index keys over 32-expert "
        "tiles, sorts the k by expert, softmaxes them and packs a uint32 bitmatrix"
    ),
    dims=(
        Dim("tokens", "token rows routed (the step's tokens)", "batch"),
        Dim("experts", "routed experts of the model", "row_len"),
        Dim("topk", "experts per token (a power of two)"),
    ),
    trials=(
        Trial(
            "decode_256_gpt_oss_20b",
            {"tokens": 256, "experts": 32, "topk": 4},
            "a decode step of gpt-oss-20b (32 experts, top-4) over 256 sequences: 8 "
            "programs, one 32-expert tile each row, 22 KB moved",
        ),
        Trial(
            "prefill_16384_gpt_oss_120b",
            {"tokens": 16384, "experts": 128, "topk": 4},
            "a prefill step of gpt-oss-120b (128 experts, top-4) with max_num_batched_tokens "
            "= 16384: 512 programs, four 32-expert tiles a row, 4.7 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # ids and words exact (no ties by construction); weights one rounding of an fp32 softmax
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="route",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
