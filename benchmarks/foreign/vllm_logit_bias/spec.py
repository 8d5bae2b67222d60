"""vLLM's logit-bias processor (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
vllm_logit_bias` and never committed.

Why this one as the set's sparse gather-scatter kernel: OpenAI's `logit_bias` (up to 300
token ids), vLLM's `allowed_token_ids` and `min_tokens` with stop ids are request
parameters of vLLM's OpenAI-compatible server, and whenever a request of a step sets one
the v1 GPU worker's sampler runs this kernel over every logits row of the step, in place on
the fp32 logits.  One program per row: an allowed list gathered in one 1024-entry tile, the
whole row filled with -inf in 8192-column steps and the saved logits scattered back; the
biases gathered, added and scattered in one tile; the stop ids scattered as -inf.  Unlike
the grammar bitmask (a dense, coalesced pass over a packed mask) its reads and writes are
scattered single words at random columns, plus a pure store stream for whitelisting rows;
the grid is only as large as the rows.  Both trials are steps of Qwen3-8B (151,936-token
vocabulary) whose requests mix the three (see reference.py): a 16-request step with
300-token allowed lists and 300-token biases, and a 512-request step with 1024-token
allowed lists (vLLM's maximum) and 300-token biases.
Output: the logits (written in place).  The floor is the whitelisting rows' full-row store
plus one read and write per listed id.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_logit_bias")

CONTEXTS = ("memory-bound", "elementwise")


def _counts(d: Mapping[str, int]) -> tuple[int, int, int]:
    """Requests with an allowed list, with biases, with stops (reference.py's pattern)."""
    r = d["reqs"]
    kinds = [i % 4 for i in range(r - 1)] if r > 1 else [0]
    return (
        sum(k in (0, 3) for k in kinds),
        sum(k in (1, 3) for k in kinds),
        sum(k in (2, 3) for k in kinds),
    )


def bytes_moved(d: Mapping[str, int]) -> int:
    """Each whitelisting row stored once whole; per listed id its id read and its logit
    read and written (biases: the fp32 bias too); each row's slot, position and counts."""
    a, b, s = _counts(d)
    return (
        4 * a * d["vocab"] + 12 * a * d["allowed"] + 16 * b * d["biased"] + 12 * s * 3
        + 28 * d["reqs"]
    )  # fmt: skip


def flops(d: Mapping[str, int]) -> int:
    """One add per biased id."""
    return _counts(d)[1] * d["biased"]


_make_inputs = _common.forward_make_inputs("vllm_logit_bias", "reqs", "vocab", "allowed", "biased")
_reference = _common.forward_reference("vllm_logit_bias")
_baselines = _common.forward_baselines(
    "vllm_logit_bias",
    (
        "torch",
        "torch",
        "the same by batched torch ops, in place: a scattered keep mask and one masked_fill "
        "for the allowed lists, scatter_add for the biases, index_put for the stops",
        "torch_logit_bias",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_logit_bias.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 1024, 2048), "tile_k",
         "list entries per program in one tile (at least the longest list in use); None: "
         "vLLM's 1024, the next power of two of its tables' widths"),
    Knob("logits_block_size", "int", (None, 1024, 2048, 4096, 8192, 16384, 32768), "tile_n",
         "vocabulary columns per step of the -inf fill; None: vLLM's 8192"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the fill loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_logit_bias",
    description=(
        "vLLM's logit-bias processor (v0.34.0, _bias_kernel): one program per logits row "
        "applies its request's allowed-token list (row filled with -inf, saved logits "
        "scattered back), logit_bias (gather, add, scatter) and min-tokens stop ids (-inf), "
        "in place on fp32 logits"
    ),
    dims=(
        Dim("reqs", "requests in the step (one logits row each)", "batch"),
        Dim("vocab", "vocabulary size", "row_len"),
        Dim("allowed", "allowed token ids per whitelisting request"),
        Dim("biased", "logit_bias entries per biasing request"),
    ),
    trials=(
        Trial(
            "decode_16_qwen3_8b",
            {"reqs": 16, "vocab": 151936, "allowed": 300, "biased": 300},
            "a 16-request decode step of Qwen3-8B (151,936-token vocabulary) through the "
            "OpenAI server: 7 requests restricted to 300 allowed ids, 7 with OpenAI's "
            "maximum of 300 logit_bias entries, 7 with min_tokens pending (3 with all three, "
            "the last request none; reference.py's mix): 16 programs",
        ),
        Trial(
            "decode_512_qwen3_8b",
            {"reqs": 512, "vocab": 151936, "allowed": 1024, "biased": 300},
            "a 512-request decode step of Qwen3-8B as a classification / constrained-choice "
            "workload: 255 requests restricted to vLLM's maximum of 1024 allowed ids, 255 "
            "with 300 logit_bias entries, 255 with min_tokens pending (127 with all three): "
            "512 programs, about 155 MB stored",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # fp32 adds of the same operands and -inf stores: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="logit_bias",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
