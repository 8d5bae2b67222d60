"""FlagGems' paged MQA logits schedule (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_paged_mqa_metadata` and never committed.

Why this one as the set's on-device work partition: DeepSeek-V3.2's lightning indexer scores
every cached token of every decode request with the paged MQA logits kernel, and before it,
once per decode step, `get_paged_mqa_logits_metadata` (DeepGEMM's, which FlagGems provides
in Triton) splits the batch's KV into 256-token segments and deals them out evenly to the
SMs, so that long and short requests share the GPU.  Every program (one per SM, plus one)
loads the whole batch's context lengths through one power-of-two tile, scans their segment
counts (tl.cumsum), finds its SM's first segment and the request holding it (tl.sum and
tl.max over the tile) and stores two integers: the batch's scan is done num_sms + 1 times
over, in registers.  Latency-bound: a few KB in, about a KB out.  Both trials are
DeepSeek-V3.2 decode steps on an H100 or H200 (132 SMs, so 133 programs), context lengths
up to 32K tokens: a launch-sized batch of 32 requests (a 32-wide tile) and vLLM's default
API-server max_num_seqs on an 80+ GB GPU, 1024 requests (a 1024-wide tile).  The floor is
reading the lengths once and writing the schedule once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_paged_mqa_metadata")

CONTEXTS = ("reduction", "small-grid")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """One int32 context length per request read once, two int32 per SM (and one more)
    written (integers whatever the dtype)."""
    del dtype
    return 4 * d["batch"] + 8 * (d["num_sms"] + 1)


def flops(d: Mapping[str, int]) -> int:
    """None counted: integer index arithmetic only."""
    return 0


_make_inputs = _common.forward_make_inputs("flaggems_paged_mqa_metadata", "batch", "num_sms")
_reference = _common.forward_reference("flaggems_paged_mqa_metadata")
_baselines = _common.forward_baselines(
    "flaggems_paged_mqa_metadata",
    (
        "torch",
        "torch",
        "the same schedule by torch ops: a cumsum of the segment counts and a searchsorted "
        "of every SM's first segment",
        "torch_schedule",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_paged_mqa_metadata.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 64, 128, 256, 512, 1024, 2048, 4096, 8192), "tile_n",
         "requests per masked tile, every program's whole scan (at least the batch); None: "
         "FlagGems' next power of two of the batch, at least 16"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (FlagGems passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_paged_mqa_metadata",
    description=(
        "FlagGems' paged MQA logits schedule for DeepSeek-V3.2's indexer (v5.0.2, "
        "_paged_mqa_logits_metadata_kernel): one program per SM scans the batch's 256-token "
        "segment counts and stores its SM's first request and segment"
    ),
    dims=(
        Dim("batch", "decode requests of the step", "batch"),
        Dim("num_sms", "SMs the paged MQA logits kernel spreads over (132 on H100 and H200)"),
    ),
    trials=(
        Trial(
            "decode_32_deepseek_v32_132sms",
            {"batch": 32, "num_sms": 132},
            "a DeepSeek-V3.2 decode step of 32 requests with up to 32K cached tokens, "
            "scheduled over an H100's or H200's 132 SMs: 133 programs over a 32-wide tile",
        ),
        Trial(
            "decode_1024_deepseek_v32_132sms",
            {"batch": 1024, "num_sms": 132},
            "the same at vLLM's default API-server max_num_seqs on an 80+ GB GPU, 1024 "
            "requests: 133 programs over a 1024-wide tile",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # integer indices: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="paged_mqa_metadata",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
