"""FlagGems' multinomial sampling with replacement (FlagGems v5.0.2, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_multinomial` and never committed.

Why this one as the set's binary search: FlagGems replaces `torch.multinomial` with it when
it is enabled, and drawing many samples with replacement from a categorical distribution is
how a sampled-logit distillation picks the teacher's tokens at each position (random-sampling
knowledge distillation draws a few dozen tokens per position from the teacher's softmax) and
how a prioritized replay buffer draws its learner batch from the priorities.  One program
per 128 samples of a distribution: a Philox4x32-10 uniform per lane, then a binary search of
the distribution's normalised CDF, floor(log2(categories)) + 1 dependent steps of one
gathered fp32 load each, and the found category stored as int64.  The CDF is the input
(FlagGems' `normed_cumsum` before the kernel is its own launches, a cumsum's kind) and fp32
whatever the spec's dtype; the reference recomputes the Philox stream in int64 torch ops and
places each draw by torch.searchsorted, so the check is exact.  Trials: an Ape-X-style
prioritized replay's learner batch, 512 draws from one distribution over 2^21 transitions
(4 programs, 22 search steps each), and random-sampling distillation from Llama 3.1 8B's
128,256-token vocabulary, 64 draws at each of 1024 positions (1024 programs of which half
the lanes are masked, 17 steps).  The floor counts one 4-byte CDF read per search step and
the 8-byte store of each sample: latency-bound by the dependent gathers, far from it.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_multinomial")

CONTEXTS = ("memory-bound", "small-grid")
FP32 = 4  # the CDF is fp32 whatever the spec's dtype
INT64 = 8  # one int64 category per sample


def search_steps(categories: int) -> int:
    """The kernel's binary-search steps: floor(log2(categories)) + 1."""
    return categories.bit_length()


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each sample's search reads one fp32 CDF value per step and stores one int64."""
    del dtype
    draws = d["dists"] * d["samples"]
    return draws * (search_steps(d["categories"]) * FP32 + INT64)


def flops(d: Mapping[str, int]) -> int:
    """One compare per search step and sample (the Philox rounds, integer work, not
    counted)."""
    return d["dists"] * d["samples"] * search_steps(d["categories"])


_make_inputs = _common.forward_make_inputs("flaggems_multinomial", "dists", "categories", "samples")
_reference = _common.forward_reference("flaggems_multinomial")
_baselines = _common.forward_baselines(
    "flaggems_multinomial",
    ("torch", "torch", "the same draws by torch ops: Philox4x32-10 over the counters in "
     "int64, the uniforms, then torch.searchsorted over the CDF", "torch_multinomial"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.flaggems_multinomial.launcher")


TRITON_KNOBS = (
    Knob("nblock", "int", (None, 16, 32, 64, 128, 256, 512, 1024), "tile_n",
         "samples of one distribution per program (its lanes; the grid follows); None: the "
         "kernel's default, 128"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default, 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the search loop; None: Triton's default, 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_multinomial",
    description=(
        "FlagGems' multinomial sampling with replacement (v5.0.2, "
        "multinomial_with_replacement): one program per 128 samples of a distribution draws "
        "a Philox uniform per lane and binary-searches the distribution's normalised fp32 "
        "CDF, storing each sample's category as int64"
    ),
    dims=(
        Dim("dists", "distributions sampled (rows of the CDF)", "rows"),
        Dim("categories", "categories per distribution (the CDF's width)"),
        # nblock tiles a distribution's samples (one lane each, binary-searching the CDF).
        Dim("samples", "samples drawn from each distribution, with replacement", "row_len"),
    ),
    trials=(
        Trial(
            "replay_batch512_apex_2m",
            {"dists": 1, "categories": 2097152, "samples": 512},
            "a prioritized replay's learner batch (Ape-X: 512 transitions drawn by "
            "priority from a 2^21-transition buffer): 4 programs, 22 dependent search "
            "steps per sample",
        ),
        Trial(
            "sampled_kd_llama31_8b_1024x64",
            {"dists": 1024, "categories": 128256, "samples": 64},
            "random-sampling distillation from Llama 3.1 8B (128,256-token vocabulary): 64 "
            "teacher tokens drawn at each of 1024 positions, 1024 programs (half their "
            "lanes masked), 17 search steps; the CDF is 525 MB, 4.5 MB of it read",
        ),
    ),
    backoff_dim="dists",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the same Philox draws searched in the same fp32 CDF, but a draw that falls at a CDF
    # step may land one category over (on an H100, one check of 65,536 draws measured
    # 1.06e-6 against the index vector's norm); a wrong row or a wrong search is far above
    tolerances={"bfloat16": 1e-4, "float16": 1e-4, "float32": 1e-4},
    entry_point="multinomial",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
