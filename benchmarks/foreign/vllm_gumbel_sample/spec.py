"""vLLM's Gumbel-max sampling (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
vllm_gumbel_sample` and never committed.

Why this one as the set's sampling kernel: the v1 GPU worker's sampler ends every decoding
step with it (whenever FlashInfer's fused top-k/top-p sampler is not taken): the token of
each request is the argmax of its fp32 logits plus Gumbel noise, which is a draw from the
softmax without computing one.  The noise is counter-based: each column's uniform is a
MurmurHash3 of (the request's seed, the token's position, the column), so a draw is
reproducible and a speculative draft and its verification can agree.  A two-launch
reduction over the vocabulary: one program per token and 1024 columns hashes, takes two
logs per column and keeps its block's maximum and column; a second launch, one program per
token, picks the row's first maximum.  Integer hashing and transcendentals per element
against one fp32 read per element.  Both trials are Qwen3-8B (a 151,936-token vocabulary):
an 8-request decode step (1,200 programs) and a 512-request one (311 MB of logits), every
eighth request greedy.  Output: the sampled token ids (exact).  The floor is reading the
logits once (and each token's slot, position, temperature and seed).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_gumbel_sample")

CONTEXTS = ("reduction", "multi-kernel", "memory-bound")
# fp32 operations per column of a sampled row, counted in the kernel's code: the uniform
# from the hash's two halves (4), the 8-term series of log(1 - u) (15) and its direct
# form's subtraction and clamp (2), each log counted as one (2), the noise added (1) and
# the running maximum (1); a greedy row's columns cost the maximum only.
SAMPLED_FLOPS = 25


def _greedy(tokens: int) -> int:
    return -(-tokens // 8)  # every eighth request, the first included


def bytes_moved(d: Mapping[str, int]) -> int:
    """The fp32 logits read once; per token its int32 slot, int64 position, fp32
    temperature, int64 seed and int64 output."""
    return 4 * d["tokens"] * d["vocab"] + 32 * d["tokens"]


def flops(d: Mapping[str, int]) -> int:
    greedy = _greedy(d["tokens"])
    return (SAMPLED_FLOPS * (d["tokens"] - greedy) + greedy) * d["vocab"]


_make_inputs = _common.forward_make_inputs("vllm_gumbel_sample", "tokens", "vocab", "slots")
_reference = _common.forward_reference("vllm_gumbel_sample")
_baselines = _common.forward_baselines(
    "vllm_gumbel_sample",
    (
        "torch",
        "torch",
        "the same draw by torch ops: the [tokens, vocab] hash in int64, the noise, one argmax",
        "torch_gumbel_sample",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_gumbel_sample.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 256, 512, 1024, 2048, 4096, 8192), "tile_n",
         "vocabulary columns per sampling program (and blocks per row for the combine); "
         "None: vLLM's 1024"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per sampling program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "pipeline stages asked of the compiler for the sampling launch (it has no loop); "
         "None: Triton's default 3"),
    Knob("combine_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per combining program (one per token, over the row's block maxima); "
         "None: Triton's default 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_gumbel_sample",
    description=(
        "vLLM's Gumbel-max sampling (v0.34.0, _gumbel_sample_kernel + _gumbel_combine_kernel): "
        "per token and 1024 vocabulary columns, MurmurHash3 noise added to the fp32 logits "
        "and the block's argmax kept, then the row's first maximum picked"
    ),
    dims=(
        Dim("tokens", "requests sampled in the step (one token each)", "rows"),
        Dim("vocab", "vocabulary size", "row_len"),
        Dim("slots", "request slots in the sampler's state pool (temperatures, seeds)"),
    ),
    trials=(
        Trial(
            "decode_8_qwen3_8b",
            {"tokens": 8, "vocab": 151936, "slots": 1024},
            "an 8-request decode step of Qwen3-8B (151,936-token vocabulary), one greedy: "
            "8 x 149 sampling programs, 4.9 MB of fp32 logits",
        ),
        Trial(
            "decode_512_qwen3_8b",
            {"tokens": 512, "vocab": 151936, "slots": 1024},
            "a 512-request decode step of the same model, 64 greedy: 76,288 sampling "
            "programs, 311 MB of logits",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # token ids, recomputed from the same hash: exact
    tolerances={"bfloat16": 1e-9, "float16": 1e-9, "float32": 1e-9},
    entry_point="gumbel_sample",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
