"""SGLang's batch-invariant log-softmax (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_bi_log_softmax` and never committed.

Why this one: a server started with `--enable-deterministic-inference` replaces
aten::_log_softmax by this kernel, and SGLang's RL on-policy sampler (`rl_on_policy_target`,
the trainer-matching logprobs of true on-policy rollouts) takes a torch.log_softmax of the
bf16 temperature-divided logits on every decode step.  One program per row walks the whole
vocabulary three times in 1024-lane masked blocks (the maximum, the sum of exp(x - max) in
the input dtype, then x - max - log(sum) stored), so each row is read three times and
written once, and the grid is only as large as the batch.  Unlike the set's one-pass row
softmaxes (the Triton tutorial's whole row in registers, vLLM's diffusion row statistics
with running sums), nothing is carried between passes but two scalars, and the re-reads hit
L2 only when the rows in flight fit there.  Both trials are Qwen3-8B (151,936-token
vocabulary, 149 blocks a pass, the last masked): an on-policy RL rollout decode step of 512
sequences (512 programs, 311 MB through the floor in bf16) and a 64-request step (64
programs, under half the SMs, 39 MB).  The floor is reading the logits once and writing the
log-probabilities once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_bi_log_softmax")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound")  # one program per row, three passes over it


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The logits read once and the log-probabilities written once, in the input dtype
    (the kernel's second and third reads of each row are above the floor)."""
    return 2 * d["rows"] * d["vocab"] * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """Per logit: a compare (the maximum), a subtract, an exp and an add (the sum), two
    subtracts (the output): six."""
    return 6 * d["rows"] * d["vocab"]


_make_inputs = _common.forward_make_inputs("sglang_bi_log_softmax", "rows", "vocab")
_reference = _common.forward_reference("sglang_bi_log_softmax")
_baselines = _common.forward_baselines(
    "sglang_bi_log_softmax",
    ("torch", "torch", "torch.log_softmax over the last dimension, as SGLang runs it "
     "without deterministic inference", "torch_log_softmax"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.sglang_bi_log_softmax.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 256, 512, 1024, 2048, 4096, 8192, 16384), "tile_n",
         "vocabulary columns loaded per loop step of each of the three passes (the last "
         "masked); None: SGLang's 1024"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the loops over the row's blocks; None: Triton's "
         "default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_bi_log_softmax",
    description=(
        "SGLang's batch-invariant log-softmax (v0.5.9, _log_softmax_kernel): deterministic "
        "inference's aten::_log_softmax, one program per row walks the vocabulary three "
        "times in 1024-lane blocks (max, sum of exp, store x - max - log sum)"
    ),
    dims=(
        Dim("rows", "rows of logits (requests of the decode step)", "rows"),
        # block_size steps through a row (masked past the end), three times.
        Dim("vocab", "vocabulary size (the log-softmax axis)", "row_len"),
    ),
    trials=(
        Trial(
            "rl_on_policy_512_qwen3_8b",
            {"rows": 512, "vocab": 151936},
            "an on-policy RL rollout decode step of 512 sequences of Qwen3-8B (151,936-token "
            "vocabulary) under deterministic inference: 512 programs of 149 blocks a pass, "
            "311 MB read and written once (bf16)",
        ),
        Trial(
            "rl_on_policy_64_qwen3_8b",
            {"rows": 64, "vocab": 151936},
            "the same model at a 64-request decode step: 64 programs, under half the SMs, "
            "39 MB read and written once (bf16)",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the maximum, the sum of exponentials and the output are all in the input dtype
    # (upstream's: a bf16 running sum of 149 block sums), against an fp64 reference
    tolerances={"bfloat16": 2e-2, "float16": 4e-3, "float32": 1e-5},
    entry_point="log_softmax",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
