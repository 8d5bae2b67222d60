"""vLLM's sampled-token ranks (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
vllm_logprob_ranks` and never committed.

Why this one as the set's counting reduction against a gathered pivot: whenever a request
asks for logprobs (OpenAI's `logprobs`, and every RL rollout that needs the behaviour
policy's log-probabilities), the v1 GPU worker's sampler reports each sampled token's rank
in its row, the number of vocabulary entries whose logit is at least the sampled one's.  One
program per row loads the sampled token's logit, then walks the row in 8192-column tiles
counting the logits at or above it (a compare and an int32 tl.sum per tile) and writes one
int64.  Memory-bound, one program per row, so the grid is only as large as the batch.  Both
trials are Qwen3-8B (151,936-token vocabulary, the model's bf16 logits, vLLM's default raw
logprobs): a 64-request decode step (64 programs, under half the H200's SMs, 19 MB read) and
an RL rollout step of 1024 sequences (1024 programs, 311 MB read).  The floor is reading the
logits once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_logprob_ranks")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The logits read once; each row's sampled id read (int64) and its rank written
    (int64)."""
    return d["rows"] * (d["vocab"] * ELEMENT_SIZE[dtype] + 16)


def flops(d: Mapping[str, int]) -> int:
    """One comparison per logit (the count's adds are integer)."""
    return d["rows"] * d["vocab"]


_make_inputs = _common.forward_make_inputs("vllm_logprob_ranks", "rows", "vocab")
_reference = _common.forward_reference("vllm_logprob_ranks")
_baselines = _common.forward_baselines(
    "vllm_logprob_ranks",
    (
        "torch",
        "torch",
        "the same by torch ops: the sampled logits gathered, compared with every row "
        "and the hits summed",
        "torch_ranks",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_logprob_ranks.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 1024, 2048, 4096, 8192, 16384, 32768), "tile_n",
         "vocabulary columns counted per loop step; None: vLLM's 8192"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the loop over the row's tiles; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_logprob_ranks",
    description=(
        "vLLM's sampled-token ranks for logprobs (v0.34.0, _ranks_kernel): one program per "
        "row counts, in 8192-column tiles, the logits at or above the sampled token's and "
        "writes the count as an int64"
    ),
    dims=(
        Dim("rows", "rows of logits (requests of the step)", "rows"),
        Dim("vocab", "vocabulary size", "row_len"),
    ),
    trials=(
        Trial(
            "decode_64_qwen3_8b",
            {"rows": 64, "vocab": 151936},
            "a 64-request decode step of Qwen3-8B (151,936-token vocabulary) returning "
            "logprobs: 64 programs (19 tiles each), 19 MB read (bf16)",
        ),
        Trial(
            "rl_rollout_1024_qwen3_8b",
            {"rows": 1024, "vocab": 151936},
            "an RL rollout decode step of 1024 sequences, each reporting its sampled "
            "token's logprob and rank: 1024 programs, 311 MB read (bf16)",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # integer counts: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="ranks",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
