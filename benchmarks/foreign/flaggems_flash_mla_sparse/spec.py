"""FlagGems' sparse MLA prefill (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into third_party/ by scripts/fetch_third_party.py
(`flaggems_flash_mla_sparse`); nothing of it is committed.

DeepSeek-V3.2's sparse attention at prefill, FlagGems' drop-in for FlashMLA's
`flash_mla_sparse_fwd`: every query token attends only to the top-k positions its lightning
indexer selected, over one 576-wide latent KV row per position shared by every head (512
latent columns, the values, then 64 rope columns).  One program per (query token, 32
heads) walks the token's whole top-k list 16 entries a step, gathering the rows; no split
over the list, so the grid is sq x cdiv(h, 32).  bf16 in and out, fp32 operands in the
tl.dots (tf32), fp32 max-logits and log-sum-exp.  The floor is the larger of the
tensor-core time for the score and value products over the valid selections (2 * h *
(576 + 512) flops per valid index; the -1 slots of a short prefix are computed masked, not
counted) and the time to read q, the KV pool and the indices once and write the three
outputs (the rows a token gathers are reread by every head block and by neighbouring
tokens; the least that must be read is the pool once).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_flash_mla_sparse")

ELEMENT_SIZE = _common.ELEMENT_SIZE
DV = 512
CONTEXTS = ("attention", "mla", "online-softmax")


def valid_indices(d: Mapping[str, int]) -> int:
    """Valid (non -1) selections over all query tokens: the token at position p (the
    queries are the last sq of skv positions) has min(p + 1, topk)."""
    prefix = d["skv"] - d["sq"]
    return sum(min(prefix + i + 1, d["topk"]) for i in range(d["sq"]))


def visible_keys(d: Mapping[str, int]) -> int:
    """(query, key) pairs the causal mask leaves: the token at position p sees p + 1."""
    prefix = d["skv"] - d["sq"]
    return d["sq"] * prefix + d["sq"] * (d["sq"] + 1) // 2


def flops(d: Mapping[str, int]) -> int:
    """A multiply-add per head, valid selection and column of the score product (all d
    columns) and of the value product (the 512 latent ones)."""
    return 2 * d["h"] * (d["d"] + DV) * valid_indices(d)


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q once, the KV pool once, the int32 indices once, the output once in the dtype and
    the fp32 max-logits and log-sum-exp once; the gathers' rereads not counted."""
    e = ELEMENT_SIZE[dtype]
    sq, h = d["sq"], d["h"]
    return e * (sq * h * d["d"] + d["skv"] * d["d"] + sq * h * DV) + 4 * sq * d["topk"] + 8 * sq * h


_make_inputs = _common.forward_make_inputs(
    "flaggems_flash_mla_sparse", "sq", "skv", "h", "d", "topk"
)
_reference = _common.forward_reference("flaggems_flash_mla_sparse")
_baselines = _common.forward_baselines(
    "flaggems_flash_mla_sparse",
    (
        "torch",
        "torch",
        "the selected rows gathered per query 128 tokens at a time, two einsums in the input "
        "dtype around an fp32 softmax",
        "torch_flash_mla_sparse",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_flash_mla_sparse.launcher")


TRITON_KNOBS = (
    Knob("block_h", "int", (None, 16, 32, 64, 128), "heads_per_program",
         "query heads per program (the score and value tl.dots' M; heads past h masked); "
         "None: FlagGems' max(16, min(32, next_power_of_2(h))), 32 at 64 or 128 heads"),
    Knob("block_k", "int", (None, 16, 32, 64), "kv_tile",
         "top-k entries gathered per step (the score tile's N, the value product's K); "
         "None: FlagGems' 16"),
    Knob("num_warps", "int", (None, 2, 4, 8, 16), "warps",
         "warps per program; None: FlagGems' first autotune entry, 8"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the top-k loop; None: FlagGems' first autotune entry, 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_flash_mla_sparse",
    description=(
        "FlagGems' sparse MLA prefill (v5.0.2, triton_flash_mla_sparse_fwd as "
        "flash_mla_sparse_fwd launches it): per query token and 32 heads, the token's top-k "
        "latent rows gathered 16 a step, nope and rope scores in two fp32 tl.dots, an online "
        "softmax, p times the rows' 512 latent columns in a third, bf16"
    ),
    dims=(
        Dim("sq", "query tokens (the last sq of the skv positions)", "rows"),
        Dim("skv", "KV positions in the latent pool (prefix plus the queries)"),
        Dim("h", "query heads on this rank", "num_heads"),
        Dim("d", "latent row width: 512 latent columns then the rope ones (576)"),
        Dim("topk", "indexer selections per query, each program's loop length", "kv_len"),
    ),
    # A long fresh prompt at all 128 heads first (many programs, the first half of the
    # tokens' lists partly -1), then a short chunk at a TP2 rank's 64 heads after a long
    # prefix (an eighth of the programs, every list full).
    trials=(
        Trial(
            "prefill_dsv32_dp_4k",
            {"sq": 4096, "skv": 4096, "h": 128, "d": 576, "topk": 2048},
            "DeepSeek-V3.2-Exp's sparse MLA (128 heads, as a data-parallel attention rank "
            "holds them, 576-wide latent rows, top-2048 from the lightning indexer) over a "
            "fresh 4,096-token prompt: 16,384 programs of 128 steps, the first 2,048 tokens' "
            "lists partly -1; 1.75 TFLOP over the valid selections, 1.18 GB at the floor (bf16)",
        ),
        Trial(
            "prefill_chunk_dsv32_tp2",
            {"sq": 1024, "skv": 8192, "h": 64, "d": 576, "topk": 2048},
            "the same layer at tensor parallel 2 (128 / 2 = 64 heads a rank) over a 1,024-token "
            "chunk after a 7,168-token prefix: 2,048 programs of 128 steps, every list full; 292 GFLOP, 161 MB at the floor",
        ),
    ),
    backoff_dim="sq",
    make_inputs=_make_inputs,
    # the share of the causally visible (query, key) pairs the indexer's selection keeps
    shape_metrics=lambda d: {"attended_fraction": valid_indices(d) / visible_keys(d)},
    # the three tl.dots take fp32 operands (the bf16 loads converted in registers; tf32 on
    # the tensor cores), whatever the dtype
    fixed_metrics={"matmul_operand_bits": 32},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 operands (tf32 on the GPU) and accumulators; the output rounded once to the dtype
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 2e-3},
    entry_point="flash_mla_sparse",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
