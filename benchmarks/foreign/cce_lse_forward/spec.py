"""Apple's Cut Cross-Entropy LSE forward (cut-cross-entropy 25.1.1, Apple's AML license), as
kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py cce_lse_forward cce_tl_utils` and never committed.

Why this one: `linear_cross_entropy(e, c, targets)` (CCE's default "cce" implementation, which
its transformers patch and trainers such as Axolotl put in place of the LM head's logits and
cross-entropy) runs it first in every training step's loss: the classifier matmul e c^T over
the whole vocabulary in tl.dot tiles, whose logits never reach global memory; each 256 x 128
tile's row log-sum-exps are merged into the fp32 per-token LSE under a spin lock (one lock per
128 tokens), and its column sums added atomically into the fp32 per-entry logit average the
backward sorts the vocabulary by.  A GEMM whose epilogue is a cross-program reduction: every
row's LSE is the logaddexp merge of one partial per 128-column tile of the vocabulary, through
a lock instead of a second pass.  Its nearest specs are `liger_cross_entropy` and
`torch_cross_entropy` (the same log-sum-exp over materialized logits, no matmul) and the
wrapped GEMMs (`triton_matmul`: the same grouped tile order and K loop, a plain store).  Both
trials are full-vocabulary training steps: Llama 3.1 8B's 8,192 tokens through its 128,256 x
4,096 unembedding (compute-bound: 8.6 TFLOP) and Qwen2.5 0.5B's 4,096 tokens through its
151,936 x 896 (tied) embedding, the regime CCE was made for (a small model whose logits
would outweigh it).  Outputs: the fp32 LSE [tokens] and logit average [vocab].  The floor is
the larger of reading both operands once and writing the two fp32 outputs, and the GEMM's
operations against the spec dtype's matmul rate.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "cce_lse_forward", "cce_tl_utils")

ELEMENT_SIZE = _common.ELEMENT_SIZE
# a GEMM whose epilogue reduces each row across programs (max, exp, sum, logaddexp merge)
CONTEXTS = ("gemm", "reduction")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The hidden states and the classifier read once in the spec's dtype, the fp32 LSE
    (one per token) and logit average (one per vocabulary entry) written once.  The re-reads
    of the classifier by every band of row tiles (and of e by every column tile), the LSE
    loads of each lock-held merge and the atomic adds into the average are not counted."""
    t, h, v = d["tokens"], d["hidden"], d["vocab"]
    return ELEMENT_SIZE[dtype] * (t * h + v * h) + 4 * (t + v)


def flops(d: Mapping[str, int]) -> int:
    """The logits' multiply-adds (2 tokens hidden vocab); the epilogue's exp, sums and
    merges (a few per logit, on the CUDA cores) are not counted."""
    return 2 * d["tokens"] * d["hidden"] * d["vocab"]


_make_inputs = _common.forward_make_inputs("cce_lse_forward", "tokens", "hidden", "vocab")
_reference = _common.forward_reference("cce_lse_forward")
_baselines = _common.forward_baselines(
    "cce_lse_forward",
    (
        "torch",
        "torch",
        "the logits materialized by cuBLAS ([tokens, vocab] in the input dtype), then "
        "torch's log-sum-exp over each row and mean over each column in fp32",
        "torch_lse",
    ),
)


_launch_info = _common.triton_launch_info("foreign.cce_lse_forward.launcher")


TRITON_KNOBS = (
    Knob("block_b", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "tokens (rows of the logits) per program; None: CCE's 256"),
    Knob("block_v", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "vocabulary entries per program (one LSE partial per row each, merged under the "
         "lock); None: CCE's 128"),
    Knob("block_d", "int", (None, 16, 32, 64, 128), "tile_k",
         "depth of one tl.dot step along the hidden size; None: CCE's 32"),
    Knob("group_b", "int", (None, 1, 2, 4, 8, 16), "grouping",
         "row tiles per band that walk every vocabulary tile before the next band; None: "
         "CCE's 8"),
    Knob("num_warps", "int", (None, 2, 4, 8, 16), "warps",
         "warps per program; None: CCE's 8"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the hidden loop; None: CCE's 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="cce_lse_forward",
    description=(
        "Apple's Cut Cross-Entropy LSE forward (cut-cross-entropy 25.1.1, "
        "_cce_lse_forward_kernel as linear_cross_entropy's training forward runs it): the "
        "classifier matmul e c^T in 256 x 128 tl.dot tiles over 32-deep hidden steps (bands "
        "of 8 row tiles), each tile's row log-sum-exps merged into the fp32 per-token LSE "
        "under a spin lock and its column sums added atomically into the fp32 logit "
        "average; the logits never written"
    ),
    dims=(
        Dim("tokens", "tokens in the step (rows of the logits)", "rows"),
        Dim("hidden", "model width (the products' depth)"),
        Dim("vocab", "vocabulary size (the axis each row's LSE reduces)", "row_len"),
    ),
    # A compute-bound full-vocabulary loss of an 8B model first (32 x 1,002 = 32,064 programs
    # of 128 hidden steps), then a small model's, where the classifier is most of the model
    # (16 x 1,187 = 18,992 programs of 28 steps); both one H100's micro-batch in training.
    trials=(
        Trial(
            "llama31_8b_train8192",
            {"tokens": 8192, "hidden": 4096, "vocab": 128256},
            "a training micro-batch of 8,192 tokens (one packed 8k sequence) through "
            "Llama 3.1 8B's unembedding (4096 -> 128,256): CCE's 256 x 128 x 32 tiles, "
            "32 x 1,002 = 32,064 programs of 128 hidden steps, each row's LSE merged from "
            "1,002 partials, 8.6 TFLOP, 1.12 GB moved (bf16; the classifier nearly all of it)",
        ),
        Trial(
            "qwen25_05b_train4096",
            {"tokens": 4096, "hidden": 896, "vocab": 151936},
            "Qwen2.5 0.5B's training micro-batch of 4,096 tokens through its tied embedding "
            "(896 -> 151,936), the small-model, large-vocabulary case CCE targets: 16 x 1,187 "
            "= 18,992 programs of 28 hidden steps, 1,187 partials a row, 1.1 TFLOP, 280 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # an fp32 accumulation over the hidden size from operands in the spec's dtype (the same
    # operands as the reference), then max, exp, log and logaddexp merges in fp32; the
    # average's atomic adds in any order
    tolerances={"bfloat16": 1e-3, "float16": 1e-3, "float32": 1e-4},
    entry_point="cce_lse_forward",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
    dtype="bfloat16",
)
