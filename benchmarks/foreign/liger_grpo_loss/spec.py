"""Liger-Kernel's GRPO loss forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees it: a
kernel nobody here wrote, imported from the installed `liger_kernel` package (a pure-Triton
wheel, in kbopt's dev extra); nothing of it is copied here.

The reinforcement-learning loss of GRPO/DAPO trainers: per generated token, the policy's
log-probability of the sampled token (an online log-sum-exp over the whole vocabulary row),
its clipped ratio to the old policy's times the completion's advantage, plus beta times the
KL to a reference model.  One single-warp program per token.  Outputs (fp32): the per-token
loss, the KL and the log-sum-exp.  No matmul: the floor is reading the logits once (the
per-token scalars are noise beside them).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "online-softmax", "memory-bound")
# per token: old and reference log-probabilities (fp32), the token id (int64) and the mask
# (int32) read; loss, KL, log-sum-exp and the clipped flag (fp32) written
PER_TOKEN_BYTES = 4 + 4 + 8 + 4 + 4 * 4


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each token's logits row read once, plus the per-token scalars."""
    tokens = d["b"] * d["length"]
    return ELEMENT_SIZE[dtype] * tokens * d["vocab"] + PER_TOKEN_BYTES * tokens + 4 * d["b"]


_make_inputs = _common.forward_make_inputs("liger_grpo_loss", "b", "length", "vocab")
_make_check_inputs = _common.forward_make_inputs(
    "liger_grpo_loss", "b", "length", "vocab", function="make_check_inputs"
)
_reference = _common.forward_reference("liger_grpo_loss")
_baselines = _common.forward_baselines(
    "liger_grpo_loss",
    (
        "torch",
        "torch",
        "the per-token loss in plain torch: logits upcast to fp32, logsumexp, gather, "
        "then element-wise kernels",
        "torch_grpo_loss",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_grpo_loss.launcher")


TRITON_KNOBS = (
    Knob(
        "block_n",
        "int",
        (None, 512, 1024, 2048, 4096, 8192, 16384),
        "tile_n",
        "vocabulary columns per loop step of the log-sum-exp; None: Liger's 2048",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16),
        "warps",
        "warps per program (one generated token); None: Liger's 1",
    ),
    Knob(
        "num_stages",
        "int",
        (None, 1, 2, 3, 4),
        "pipeline_stages",
        "software-pipeline depth of the vocabulary loop; None: Liger's 2",
    ),
)

SPEC = KernelSpec(
    name="liger_grpo_loss",
    description=(
        "Liger-Kernel's GRPO loss forward (0.8.5): clipped policy-gradient loss plus KL per "
        "generated token, an online log-sum-exp over the vocabulary in one warp per token, "
        "bf16 logits"
    ),
    dims=(
        Dim("b", "completions (sequences) in the batch", "batch"),
        Dim("length", "generated tokens per completion"),
        Dim("vocab", "vocabulary size (the log-sum-exp axis)", "row_len"),
    ),
    trials=(
        Trial(
            "qwen_group",
            {"b": 8, "length": 512, "vocab": 151936},
            "a GRPO group of 8 completions of 512 tokens at Qwen2.5's 152k vocabulary: 1.2 GB "
            "of logits read by 4096 one-warp programs",
        ),
        Trial(
            "short_group",
            {"b": 4, "length": 128, "vocab": 151936},
            "4 short completions of 128 tokens: 156 MB read by 512 one-warp programs, under "
            "four warps per SM on 132 SMs",
        ),
    ),
    backoff_dim="length",
    make_inputs=_make_inputs,
    make_check_inputs=_make_check_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 throughout from the same rounded logits: only the log-sum-exp's order differs
    tolerances={"bfloat16": 1e-4, "float16": 1e-4, "float32": 1e-5},
    entry_point="grpo_loss",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
