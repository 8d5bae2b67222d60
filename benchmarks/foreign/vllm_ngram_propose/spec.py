"""vLLM's GPU n-gram speculator (vLLM v0.34.0, Apache-2.0), as kbopt sees it: kernels nobody
here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_ngram_propose` and never committed.

Why this one as the set's pattern search: prompt-lookup decoding (`method="ngram_gpu"`)
drafts tokens without a draft model by finding the history's last n tokens earlier in the
same request (code editing, summarisation and RAG answers copy long spans of their prompt)
and proposing what followed; vLLM's v1 GPU worker does it on the device at every decode
step, so the drafting stays inside the CUDA-graph step.  The scan's grid is (requests,
blocks of 256 history positions over the whole max_model_len): each program compares, for
each n from min_n to max_n, the n tokens at each of its positions with the suffix (one
gathered int32 load per token, unrolled) and keeps the longest, rightmost match as a packed
int64 score; programs past a history's end store 0 and exit.  A one-program-per-request
finalize reduces the scores and gathers the drafts.  Integer compares and loads that hit
L1 and L2 (each token is read n times by neighbouring positions), and a grid sized by
max_model_len rather than by the histories.  Both trials are Llama 3.1 8B Instruct with
prompt lookup over 2- to 5-token n-grams and 5 drafts: a decode step of 8 code-editing
requests with histories of up to 2048 tokens at max_model_len 8192 (256 scan programs) and
one of 64 requests with histories of up to 8192 tokens at the model's full 131,072-token
context (32,768 scan programs; about 50 GB of bf16 KV cache, what an 80 GB GPU holds
beside the weights).  Output: the drafts [requests, 5] int64.  The floor is reading each drafting
request's history once, the per-request scalars, and writing the drafts.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_ngram_propose")

CONTEXTS = ("reduction", "memory-bound", "multi-kernel")


def history_lengths(reqs: int, seq_len: int) -> list[int]:
    """Each request state's history length, as reference.py makes them: seq_len for state 0,
    falling linearly to about seq_len / 2."""
    return [seq_len - (s * (seq_len // 2)) // max(reqs, 1) for s in range(reqs)]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The histories of the requests that sampled (every state but each eighth) read once
    (int32), the mapping, lengths, sample counts and last tokens (8 + 4 + 4 + 8 bytes per
    request), and the drafts written (int64); the scratch scores, an intermediate of 8
    bytes per program, are not counted.  Integers whatever the dtype."""
    del dtype
    lengths = history_lengths(d["reqs"], d["seq_len"])
    history = sum(n for s, n in enumerate(lengths) if s % 8 != 7) * 4
    return history + d["reqs"] * 24 + d["reqs"] * d["spec_tokens"] * 8


def flops(d: Mapping[str, int]) -> int:
    """None counted: integer compares, loads and a max."""
    return 0


_make_inputs = _common.forward_make_inputs(
    "vllm_ngram_propose", "reqs", "seq_len", "max_model_len", "min_n", "max_n", "spec_tokens"
)
_reference = _common.forward_reference("vllm_ngram_propose")
_baselines = _common.forward_baselines(
    "vllm_ngram_propose",
    (
        "torch",
        "torch",
        "the same by batched torch ops: every window of the padded histories compared with "
        "each suffix per n (unfold), one max of the packed scores, the drafts gathered",
        "torch_ngram",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_ngram_propose.launcher")


TRITON_KNOBS = (
    Knob("block_l", "int", (None, 64, 128, 256, 512, 1024, 2048), "tile_n",
         "history positions per scan program (and max_model_len / block_l scores per "
         "request for the finalize); None: vLLM's rule from max_model_len, 256 from 1024 on"),
    Knob("scan_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per scan program; None: vLLM's 4"),
    Knob("finalize_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per finalize program (one per request, over its block scores); None: "
         "vLLM's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_ngram_propose",
    description=(
        "vLLM's GPU n-gram speculator (v0.34.0, _ngram_scan_kernel + _ngram_finalize_kernel): "
        "prompt-lookup drafting, each 256-position block of a request's history compared "
        "with its last 2..5 tokens, the longest rightmost match's followers gathered"
    ),
    dims=(
        Dim("reqs", "requests of the decode step", "batch"),
        Dim("seq_len", "the longest request's history (prompt and output tokens)", "row_len"),
        Dim(
            "max_model_len",
            "the server's max_model_len: the token buffer's width, and the scan grid's",
        ),
        Dim("min_n", "prompt_lookup_min: the shortest n-gram matched"),
        Dim("max_n", "prompt_lookup_max: the longest n-gram matched"),
        Dim("spec_tokens", "num_speculative_tokens: drafts per request"),
    ),
    trials=(
        Trial(
            "decode_8_codeedit_llama31_8b",
            {
                "reqs": 8,
                "seq_len": 2048,
                "max_model_len": 8192,
                "min_n": 2,
                "max_n": 5,
                "spec_tokens": 5,
            },
            "a decode step of 8 code-editing requests of Llama 3.1 8B Instruct with prompt "
            "lookup (2- to 5-token n-grams, 5 drafts), histories of 1152 to 2048 tokens at "
            "max_model_len 8192: 8 x 32 scan programs, 46 KB moved",
        ),
        Trial(
            "decode_64_ctx128k_llama31_8b",
            {
                "reqs": 64,
                "seq_len": 8192,
                "max_model_len": 131072,
                "min_n": 2,
                "max_n": 5,
                "spec_tokens": 5,
            },
            "a decode step of 64 requests with histories of 4160 to 8192 tokens at Llama 3.1 "
            "8B's full 131,072-token max_model_len (vLLM's default for it): 64 x 512 scan "
            "programs, 1.4 MB moved",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # token ids: any difference is a wrong draft
    tolerances={"bfloat16": 1e-9, "float16": 1e-9, "float32": 1e-9},
    entry_point="propose",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
