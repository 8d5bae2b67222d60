"""vLLM's structured-output grammar bitmask (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_grammar_bitmask` and never committed.

Why this one as the set's data-dependent masked store: every request that asks for guided
decoding (a JSON schema, a regex, a tool-call grammar) gets, at every step, a bitmask of the
tokens its grammar allows, computed on the CPU by xgrammar and copied to the GPU; vLLM's v1
GPU worker then sets every disallowed logit to -inf, in place, before the sampler sees the
logits.  The grid is (mask rows, 8192-token blocks): each program reads its mapping and the
request's row range (a trimmed speculative position stores nothing), 256 packed int32
words, unpacks them into 8192 bits and stores -inf through a mask where a bit is clear.
Memory-bound, with stores whose density is the grammar's: a JSON key allows a handful of
tokens (almost the whole row written), free string content most of them.  Both trials are
Llama 3.1 8B Instruct (128,256-token vocabulary, bf16 logits): a decode step of 64 JSON-mode
requests (64 rows, 1024 programs) and a step of 256 grammar requests with EAGLE-3's three
draft tokens (1024 mask rows over 960 logits rows, a quarter of the requests with their
last draft trimmed, 16,384 programs).  Output: the logits (written in place).  The floor is
reading the bitmask once and writing every active logits row once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_grammar_bitmask")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def logits_rows(d: Mapping[str, int]) -> int:
    """Logits rows of the step: every fourth request has one position fewer (at least
    one), as reference.py makes them."""
    short = max(1, d["positions"] - 1)
    return sum(short if r % 4 == 3 else d["positions"] for r in range(d["reqs"]))


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The packed bitmask and the mapping read once (int32), the request offsets, and
    every active logits row written once (the masked stores of a grammar that allows few
    tokens touch nearly every sector)."""
    masks = d["reqs"] * d["positions"]
    words = (d["vocab"] + 31) // 32
    return (
        masks * (words + 1) * 4
        + (d["reqs"] + 1) * 4
        + logits_rows(d) * d["vocab"] * ELEMENT_SIZE[dtype]
    )


def flops(d: Mapping[str, int]) -> int:
    """None counted: shifts, bit tests and stores only."""
    return 0


_make_inputs = _common.forward_make_inputs("vllm_grammar_bitmask", "reqs", "positions", "vocab")
_reference = _common.forward_reference("vllm_grammar_bitmask")
_baselines = _common.forward_baselines(
    "vllm_grammar_bitmask",
    (
        "torch",
        "torch",
        "the same by torch ops: the bits unpacked by shifts, the active rows gathered, "
        "masked_fill with -inf and scattered back",
        "torch_bitmask",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_grammar_bitmask.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 1024, 2048, 4096, 8192, 16384, 32768), "tile_n",
         "vocabulary tokens per program (block_size / 32 packed words unpacked); "
         "None: vLLM's 8192"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_grammar_bitmask",
    description=(
        "vLLM's structured-output grammar bitmask (v0.34.0, _apply_grammar_bitmask_kernel): "
        "one program per mask row and 8192-token block unpacks 256 int32 words of allowed "
        "tokens and stores -inf into the disallowed logits, in place"
    ),
    dims=(
        Dim("reqs", "requests of the step, every one following a grammar", "batch"),
        Dim("positions", "mask rows per request: 1 + the speculative draft tokens",
            "query_len"),
        Dim("vocab", "vocabulary size", "row_len"),
    ),
    trials=(
        Trial(
            "decode_64_json_llama31_8b",
            {"reqs": 64, "positions": 1, "vocab": 128256},
            "a decode step of 64 JSON-mode requests of Llama 3.1 8B Instruct (128,256-token "
            "vocabulary): 64 x 16 programs, 17.4 MB moved (bf16)",
        ),
        Trial(
            "eagle3_256_grammar_llama31_8b",
            {"reqs": 256, "positions": 4, "vocab": 128256},
            "a step of 256 grammar requests with EAGLE-3's 3 draft tokens (1024 mask rows, "
            "960 logits rows, 64 trimmed): 1024 x 16 programs, 263 MB moved (bf16)",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a copy of the logits with -inf in the masked places: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="apply_bitmask",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
