"""vLLM's split-vocabulary greedy argmax (vLLM v0.34.0, Apache-2.0), as kbopt sees it: two
kernels nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_greedy_argmax` and never committed.

Why this one as the set's two-pass reduction: vLLM's V2 GPU model runner picks greedy draft
tokens with `greedy_argmax` at every drafting step of its draft-model speculators (EAGLE,
MTP and the like without draft sampling), one row per request over the draft head's whole
vocabulary.  Instead of one program walking each row, vLLM splits the vocabulary: a grid of
rows x cdiv(vocab, 4096) programs, each one 4096-column tile (no loop) reduced to a maximum
and its leftmost column in fp32 with NaN as -inf, written to a [rows, splits] scratch, then
a one-warp program per row picks the leftmost best split.  Both trials are a draft step's
logits: DeepSeek-V3's MTP head (129,280 columns, 32 splits) for 512 requests (16,384
partial programs: large) and Qwen3's 151,936-column head for a 16-request decode (38
splits, 608 programs: launch-sized).  The floor is reading the logits once and writing one
int64 per row; the scratch round trip is rows x splits x 8 bytes.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_greedy_argmax")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound", "small-grid")
INT64 = 8
VLLM_BLOCK = 4096


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The logits read once, one int64 column per row written, plus the partial maxima
    (fp32) and columns (int32) written by the first kernel and read by the second at
    vLLM's 4096-column split."""
    splits = -(-d["vocab"] // VLLM_BLOCK)
    scratch = 2 * d["rows"] * splits * (4 + 4)
    return d["rows"] * (d["vocab"] * ELEMENT_SIZE[dtype] + INT64) + scratch


def flops(d: Mapping[str, int]) -> int:
    """One compare per logit (the NaN test and the second pass not counted)."""
    return d["rows"] * d["vocab"]


_make_inputs = _common.forward_make_inputs("vllm_greedy_argmax", "rows", "vocab")
_reference = _common.forward_reference("vllm_greedy_argmax")
_baselines = _common.forward_baselines(
    "vllm_greedy_argmax",
    (
        "torch",
        "torch",
        "vLLM's own fallback: NaN filled with -inf, then torch.argmax",
        "torch_argmax",
    ),
)

_launch_info = _common.triton_launch_info("foreign.vllm_greedy_argmax.launcher")


TRITON_KNOBS = (
    Knob("block", "int", (None, 1024, 2048, 4096, 8192, 16384, 32768), "tile_n",
         "vocabulary columns per partial program, one tile and no loop (sets the splits, "
         "cdiv(vocab, block), and the finish kernel's width); None: vLLM's 4096"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per partial program; None: vLLM's 4"),
    Knob("finish_warps", "int", (None, 1, 2, 4), "warps",
         "warps per row of the finish kernel; None: vLLM's 1"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_greedy_argmax",
    description=(
        "vLLM's split-vocabulary greedy argmax (v0.34.0, _argmax_partial and "
        "_argmax_finish): rows x cdiv(vocab, 4096) one-tile programs store each tile's "
        "fp32 maximum and leftmost column (NaN as -inf), then one program per row picks "
        "the leftmost best split"
    ),
    dims=(
        Dim("rows", "logit rows (one per request at a drafting step)", "batch"),
        Dim("vocab", "the draft head's vocabulary"),
    ),
    trials=(
        Trial(
            "deepseek_v3_mtp_draft512",
            {"rows": 512, "vocab": 129280},
            "DeepSeek-V3's MTP draft step for 512 requests: 512 x 32 partial programs of "
            "one 4096-column tile (the last 2,304 live), 512 one-warp finish programs",
        ),
        Trial(
            "qwen3_draft_decode16",
            {"rows": 16, "vocab": 151936},
            "a Qwen3 draft step for 16 requests: 16 x 38 partial programs (the last tile "
            "384 live), 16 finish programs",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # int64 columns, checked exactly (one wrong row is far above this)
    tolerances={"bfloat16": 1e-15, "float16": 1e-15, "float32": 1e-15},
    entry_point="argmax",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
