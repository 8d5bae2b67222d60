"""Qwen4Exp's per-layer-embedding n-gram hash ids (vLLM v0.34.0, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_ple_ngram_ids` and never committed.

Why this one as the set's n-gram hashing: Qwen4Exp's per-layer embeddings (PLE) look up, for
every token of a step and every PLE layer, one row per (n-gram order, head) in hashed
n-gram tables (Engram-style conditional memory); vLLM's CUDA path computes the row ids with
this kernel before each lookup.  One program per 8 tokens binary-searches the step's
request boundaries, gathers each token's ngram - 1 predecessors (from the step, or at a
request's start from its lookback row), cuts the history at the first EOS walking back,
mixes the tokens by XOR of odd 64-bit multiplier products, and reduces every head's hash
modulo its own prime (int64 remainders, the kernel's real cost) into disjoint table ranges.
Integer-ALU work with a small int32 read and an int64 write per (token, head); nothing in
the catalog hashes n-grams or does int64 modular arithmetic per element.  Qwen4Exp's config
is not public: both trials take Qwen's 151,936-token vocabulary with the Engram paper's
3-grams (2- and 3-grams hashed) over 8 heads per order (16 ids per token), tables of about
a million rows per head: a decode step of 256 requests (256 tokens, 32 programs) and an
8192-token prefill chunk of 16 uneven requests (1024 programs).  Output: the ids, [tokens,
16] int64.  The floor is reading the tokens once and writing the ids once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_ple_ngram_ids")

CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The int32 token ids, request offsets and lookback rows read once, the multipliers,
    primes and offsets once (int64), one int64 id written per token and head (integers
    whatever the dtype)."""
    del dtype
    ids = (d["ngram"] - 1) * d["heads"]
    return (
        4 * d["tokens"]
        + 4 * (d["reqs"] + 1)
        + 4 * d["reqs"] * (d["ngram"] - 1)
        + 8 * (d["ngram"] + 2 * ids)
        + 8 * d["tokens"] * ids
    )


def flops(d: Mapping[str, int]) -> int:
    """None counted: integer multiplies, XORs and remainders only."""
    return 0


_make_inputs = _common.forward_make_inputs("vllm_ple_ngram_ids", "tokens", "reqs", "ngram", "heads")
_reference = _common.forward_reference("vllm_ple_ngram_ids")
_baselines = _common.forward_baselines(
    "vllm_ple_ngram_ids",
    (
        "torch",
        "torch",
        "the same by torch ops over the step: searchsorted for each token's request, the "
        "shifted tokens gathered from the step or the lookback, XOR of products, remainder",
        "torch_ngram_ids",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_ple_ngram_ids.launcher")


TRITON_KNOBS = (
    Knob("block_t", "int", (None, 1, 2, 4, 8, 16, 32, 64, 128), "tile_m",
         "tokens per program (each a row of heads padded to a power of two); None: vLLM's 8"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: vLLM's 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_ple_ngram_ids",
    description=(
        "Qwen4Exp's per-layer-embedding n-gram hash ids (vLLM v0.34.0, "
        "_ple_ngram_ids_kernel): one program per 8 tokens binary-searches their requests, "
        "XORs each token's n-gram of multiplied ids and takes it modulo every head's prime"
    ),
    dims=(
        Dim("tokens", "tokens of the step, all requests packed", "batch"),
        Dim("reqs", "requests of the step (uneven lengths, see reference.py)"),
        Dim("ngram", "largest n-gram order (ngram_size; ngram - 1 orders hashed)"),
        Dim("heads", "hash heads per n-gram order (heads_per_ngram)"),
    ),
    trials=(
        Trial(
            "decode_256_qwen_vocab_3gram_8heads",
            {"tokens": 256, "reqs": 256, "ngram": 3, "heads": 8},
            "a decode step of 256 requests (one token each), Qwen's 151,936-token "
            "vocabulary, the Engram paper's 3-grams over 8 heads per order (Qwen4Exp's "
            "config is not public): 32 programs, 16 ids per token, 37 KB moved",
        ),
        Trial(
            "prefill_8192x16_qwen_vocab_3gram_8heads",
            {"tokens": 8192, "reqs": 16, "ngram": 3, "heads": 8},
            "an 8192-token prefill chunk (vLLM's default max_num_batched_tokens) of 16 "
            "uneven requests, same layout: 1024 programs, 1.08 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # integer table ids: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="ngram_ids",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
