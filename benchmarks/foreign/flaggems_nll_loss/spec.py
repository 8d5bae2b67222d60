"""FlagGems' NLL loss forward with a mean reduction (FlagGems v5.0.2, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_nll_loss` and never committed.

Why this one as the set's scattered gather with an atomic finish: FlagGems replaces torch's
`nll_loss` with it when it is enabled, and every causal LM trained with torch's
`cross_entropy` (log_softmax, then nll_loss, mean, ignore index -100) runs it once a step
over the log-probabilities of all the batch's tokens.  One program per 128 tokens loads
their targets, gathers each kept token's log-probability at its target (one element per
row, rows a vocabulary apart: a 32-byte sector per token), sums the negatives and the kept
count in fp32 and adds both atomically into an fp32 [4] buffer, bumping a program counter;
the last program divides.  The buffer is zero-filled before and cast after: three launches
(two in fp32).  Both trials are Llama 3.1 8B's training loss (vocabulary 128,256, a quarter
of the positions ignored as an SFT prompt mask would): one 4096-token sequence (32
programs, launch-sized) and a micro-batch of 2 x 8192 tokens (128 programs, large; the
4.2 GB log-probability matrix of which it reads one element per token).  The floor is
reading the targets and one log-probability per token once.

The kernel addresses a token's row as `offsets_n * C + tgt` in 32-bit integers, so a batch
of 2**31 or more log-probabilities (16,744 tokens at this vocabulary) overflows it: the 4 x
8192-token micro-batch first planned here stopped with an illegal memory access on an H100
(`kbopt ablate`, 2026-12-05).  The large trial stays just under that bound.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_nll_loss")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound", "multi-kernel")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The int64 targets read once and one log-probability per token (the buffer is
    negligible; the hardware reads a 32-byte sector for each gathered element)."""
    return d["tokens"] * (8 + ELEMENT_SIZE[dtype])


def flops(d: Mapping[str, int]) -> int:
    """About three per token (the negation, the two sums), the atomics not counted."""
    return 3 * d["tokens"]


_make_inputs = _common.forward_make_inputs("flaggems_nll_loss", "tokens", "vocab")
_reference = _common.forward_reference("flaggems_nll_loss")
_baselines = _common.forward_baselines(
    "flaggems_nll_loss",
    ("torch", "torch", "the same loss by torch's F.nll_loss in the input dtype", "torch_nll_loss"),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_nll_loss.launcher")


TRITON_KNOBS = (
    Knob("block_n", "int", (None, 32, 64, 128, 256, 512, 1024, 2048), "tile_n",
         "tokens per program (one gathered element each, one set of atomics per "
         "program); None: the kernel's default 128"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (FlagGems passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_nll_loss",
    description=(
        "FlagGems' NLL loss forward, mean, ignore index -100 (v5.0.2, "
        "nll_loss_forward_kernel), a causal LM's training loss after log_softmax: one "
        "program per 128 tokens gathers each kept token's log-probability at its target, "
        "adds the fp32 sum and count atomically into a buffer, the last program divides "
        "(zero-filled before, cast after)"
    ),
    dims=(
        Dim("tokens", "tokens of the batch (rows of log-probabilities)", "rows"),
        Dim("vocab", "vocabulary size (the row length, the gather's stride)"),
    ),
    trials=(
        Trial(
            "llama31_8b_seq4096",
            {"tokens": 4096, "vocab": 128256},
            "Llama 3.1 8B's training loss over one 4096-token sequence (vocabulary "
            "128,256): 32 programs, one element gathered per token of a 1.05 GB matrix "
            "(bf16)",
        ),
        Trial(
            "llama31_8b_batch2x8192",
            {"tokens": 16384, "vocab": 128256},
            "the same over a micro-batch of 2 x 8192 tokens: 128 programs, one element "
            "gathered per token of a 4.2 GB matrix (bf16); 4 x 8192 tokens overflow the "
            "kernel's 32-bit row offsets",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    # block_n tiles the tokens (one gathered element each), not a row of the vocabulary.
    shape_metrics=lambda d: {"row_len": d["tokens"]},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # an fp32 sum in atomic order against fp64, rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-4},
    entry_point="nll_loss",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
