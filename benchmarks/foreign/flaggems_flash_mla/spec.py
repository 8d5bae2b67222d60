"""FlagGems' MLA decode kernel over a paged latent KV cache (FlagGems v5.0.2, Apache-2.0), as
kbopt sees it: a kernel nobody here wrote, fetched into third_party/ by
scripts/fetch_third_party.py (`flaggems_flash_mla`); nothing of it is committed.

DeepSeek's MLA at decode: every query head attends over one shared 576-wide latent KV row
per cached position (512 latent columns, the values, then 64 rope columns), the cache paged
through a block table.  One program per (BLOCK_H heads, sequence) walks the whole context:
no split over it, so the grid is cdiv(h, BLOCK_H) x b.  bf16.  The floor is the larger of
the tensor-core time for the score and value products (2 * b * h * n * (576 + 512) flops)
and the time to read q, the cache and the block table once and write the output (every
head block of a sequence rereads its rows; the least that must be read is once).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_flash_mla")

ELEMENT_SIZE = _common.ELEMENT_SIZE
DV = 512
CONTEXTS = ("attention-decode", "mla", "online-softmax", "small-grid")  # small: 8 programs


def flops(d: Mapping[str, int]) -> int:
    return 2 * d["b"] * d["h"] * d["n"] * (d["d"] + DV)


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q, the cache rows and the output once; the int32 block table and lengths once."""
    e = ELEMENT_SIZE[dtype]
    b, h, n = d["b"], d["h"], d["n"]
    return e * (b * h * d["d"] + b * n * d["d"] + b * h * DV) + 4 * (b * n // d["page"] + b)


_make_inputs = _common.forward_make_inputs("flaggems_flash_mla", "b", "h", "n", "d", "page")
_reference = _common.forward_reference("flaggems_flash_mla")
_baselines = _common.forward_baselines(
    "flaggems_flash_mla",
    (
        "torch",
        "torch",
        "each sequence's pages gathered into rows, two einsums around an fp32 softmax",
        "torch_flash_mla",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_flash_mla.launcher")


TRITON_KNOBS = (
    Knob(
        "block_h",
        "int",
        (None, 16, 32, 64, 128),
        "heads_per_program",
        "query heads per program (the tl.dots' M; fewer heads than this are masked); "
        "None: FlagGems' 64 on sm_90 (32 on sm_80)",
    ),
    Knob(
        "block_n",
        "int",
        (None, 16, 32, 64, 128),
        "kv_tile",
        "cache rows per loop step (the score tile's N, the value product's K); None: FlagGems' 64",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 2, 4, 8, 16),
        "warps",
        "warps per program; None: FlagGems' 8",
    ),
    Knob(
        "num_stages",
        "int",
        (None, 1, 2, 3, 4),
        "pipeline_stages",
        "software-pipeline depth of the context loop; None: FlagGems' 3 on sm_90 (2 on sm_80)",
    ),
)

SPEC = KernelSpec(
    name="flaggems_flash_mla",
    description=(
        "FlagGems' MLA decode (v5.0.2): per block of query heads and sequence, the whole "
        "paged latent KV walked in tl.dot steps (nope and rope scores, online softmax, p "
        "times the latent rows), no context split, bf16"
    ),
    dims=(
        Dim("b", "sequences in the decode batch (one query token each)", "rows"),
        Dim("h", "query heads on this GPU", "num_heads"),
        Dim("n", "cached tokens per sequence (a multiple of page)", "kv_len"),
        Dim("d", "latent row width: 512 latent columns then the rope ones (576)"),
        Dim("page", "tokens per cache page (a power of two)"),
    ),
    trials=(
        Trial(
            "decode_dsv3_dp_b64",
            {"b": 64, "h": 128, "n": 4096, "d": 576, "page": 64},
            "DeepSeek-V3's MLA (128 heads, as a data-parallel attention rank holds them, "
            "576-wide latent rows, FlashMLA's 64-token pages) at a 64-sequence decode step "
            "over 4k-token contexts: 128 programs each walking 4096 rows, a 302 MB cache",
        ),
        Trial(
            "decode_dsv3_tp8_b8",
            {"b": 8, "h": 16, "n": 2048, "d": 576, "page": 64},
            "the same layer at TP8 (16 heads, under FlagGems' 64-head block: masked) at an "
            "8-sequence decode step over 2k-token contexts: 8 programs",
        ),
    ),
    backoff_dim="b",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # p is rounded to the KV dtype before the value product
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 2e-3},
    entry_point="flash_mla",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
