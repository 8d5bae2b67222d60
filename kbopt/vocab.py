"""Every closed vocabulary of kbopt, in one place.

The lint, the store, the search index, strategy selection and the site's facets all
import their allowed values from here, so a new value is added once and is known
everywhere.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Kind(StrEnum):
    OPTIMIZATION = "optimization"
    ANTI_PATTERN = "anti-pattern"

    @property
    def folder(self) -> str:
        """The folder name of this kind under the knowledge root."""
        return "optimizations" if self is Kind.OPTIMIZATION else "anti-patterns"


class Scope(StrEnum):
    SHARED = "shared"  # algorithm / hardware knowledge, any language
    LANGUAGE = "language"  # implementation knowledge of one kernel language


class Language(StrEnum):
    TRITON = "triton"
    CUTE_DSL = "cute-dsl"  # CUTLASS 4.x Python DSL
    CUTILE_DSL = "cutile-dsl"  # cuTile
    TILEIR = "tileir"  # Triton's TileIR backend (nvtriton) for Blackwell


# A kernel version named after its family (`triton_v3`, `cute_v7`) says its language.
VERSION_FAMILY_LANGUAGE = {
    "triton": Language.TRITON,
    "cute": Language.CUTE_DSL,
    "cutile": Language.CUTILE_DSL,
    "tileir": Language.TILEIR,
}


def language_of_version(version: str) -> Language | None:
    """The language of a version named ``<family>_v<n>...`` (``triton_v3``: triton,
    ``cute_v7``: cute-dsl); None for baselines (``torch``) and other names."""
    head, sep, rest = version.strip().partition("_v")
    if not sep or not rest[:1].isdigit():
        return None
    return VERSION_FAMILY_LANGUAGE.get(head)


class Bottleneck(StrEnum):
    """The profiler contract's three classes."""

    MEMORY = "memory"
    COMPUTE = "compute"
    LATENCY = "latency"


class Level(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    @property
    def rank(self) -> int:
        return {"high": 3, "medium": 2, "low": 1}[self.value]


# The impact an optimization's expected gain stands for once measurements have refined that
# gain: high from 20%, medium from 5%, low below. An author sets the label of a new entry;
# LEARN re-derives it with the gain, so a label never says more than the evidence does.
IMPACT_FROM_PCT = ((20.0, Level.HIGH), (5.0, Level.MEDIUM))


def impact_for_gain(gain_pct: float) -> Level:
    """The impact label of an expected gain (see ``IMPACT_FROM_PCT``)."""
    return next((level for floor, level in IMPACT_FROM_PCT if gain_pct >= floor), Level.LOW)


class Status(StrEnum):
    PROPOSED = "proposed"
    VALIDATED = "validated"
    REFUTED = "refuted"


class Relation(StrEnum):
    """Typed edges of the interaction graph between entries."""

    REQUIRES = "requires"  # the target must be in place first
    ENABLES = "enables"  # applying this makes the target possible or worthwhile
    CONFLICTS = "conflicts"  # the two fight over the same resource; pick one
    COMPOSES = "composes"  # independent gains that stack
    SUPERSEDES = "supersedes"  # this replaces the target in the situations it covers


class SourceType(StrEnum):
    LOCAL_EXPERIMENT = "local experiment"
    EXTERNAL_REPORT = "external report"


# Kernel contexts an entry applies to (front matter `applies_to`).  Free-text detail
# goes in the When to Apply bullets; these tags are what search filters on.
CONTEXTS: dict[str, str] = {
    "any-kernel": "any GPU kernel",
    "attention": "attention (prefill or training)",
    "attention-decode": "attention decode: few query rows against a long KV cache",
    "mla": "multi-head latent attention (DeepSeek-style shared latent KV)",
    "online-softmax": "kernels that carry a running max / sum softmax across tiles",
    "gemm": "dense matrix multiply",
    "grouped-gemm": "batched or grouped matrix multiply (MoE experts)",
    "reduction": "row or column reductions",
    "normalization": "layer / RMS norm and similar row-wise kernels",
    "elementwise": "element-wise and broadcast kernels",
    "memory-bound": "kernels whose floor is set by bytes moved",
    "compute-bound": "kernels whose floor is set by math throughput",
    "small-grid": "launches with fewer CTAs than SMs (decode, small batch)",
    "multi-kernel": "operations made of several kernel launches",
    "inference-step": "a whole model step (graph of many kernels)",
    "autotuning": "the tuning process itself",
}


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    description: str
    ncu: str | None = None  # Nsight Compute metric it is read from, when one exists


def _m(name: str, unit: str, description: str, ncu: str | None = None) -> Metric:
    return Metric(name, unit, description, ncu)


# Warp-stall reasons Nsight Compute reports (smsp__average_warps_issue_stalled_<reason>_
# per_issue_active.ratio), as kbopt metric suffix -> what the warp waits for.
STALL_REASONS: dict[str, str] = {
    "long_scoreboard": "global/local memory (an L1TEX result)",
    "short_scoreboard": "shared memory or a special-function result (an MIO result)",
    "barrier": "a CTA barrier (bar.sync / __syncthreads)",
    "mio_throttle": "a full MIO queue (shared-memory and special instructions)",
    "lg_throttle": "a full local/global memory queue",
    "math_pipe_throttle": "a busy math pipe",
    "wait": "a fixed-latency dependency",
    "not_selected": "nothing: it was eligible but another warp was picked",
    "no_instruction": "the instruction cache or a branch target",
    "branch_resolving": "a branch target to be computed",
    "dispatch_stall": "the dispatcher",
    "drain": "its memory stores to drain at exit",
    "membar": "a memory barrier",
    "sleeping": "nanosleep",
    "tex_throttle": "a full texture queue",
    "imc_miss": "the immediate-constant cache",
    "misc": "an uncommon reason",
}


def _stall_metrics() -> list[Metric]:
    return [
        Metric(
            f"stall_{reason}_pct",
            "%",
            f"share of the cycles between two issued instructions that a warp waits for {what}",
            f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio",
        )
        for reason, what in STALL_REASONS.items()
    ]


# The closed metric vocabulary: triggers, Affected Metrics and profiles use these
# names only.  `ncu` names are the Nsight Compute metrics the profiler reads.
METRICS: dict[str, Metric] = {
    m.name: m
    for m in [
        _m("duration_us", "us", "kernel or stage duration", "gpu__time_duration.sum"),
        _m("pct_of_floor", "%", "roofline floor time / measured time (speed of light)"),
        _m(
            "dram_throughput_pct",
            "%",
            "DRAM throughput as % of peak",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        ),
        _m(
            "tensor_core_util_pct",
            "%",
            "tensor-core pipe activity as % of peak",
            "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
        ),
        _m(
            "sm_throughput_pct",
            "%",
            "SM (compute) throughput as % of peak",
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        ),
        _m(
            "achieved_occupancy_pct",
            "%",
            "achieved warps per SM as % of the maximum",
            "sm__warps_active.avg.pct_of_peak_sustained_active",
        ),
        _m(
            "theoretical_occupancy_pct",
            "%",
            "occupancy the launch allows (registers, shared memory, block size)",
            "sm__maximum_warps_per_active_cycle_pct",
        ),
        _m(
            "registers_per_thread",
            "count",
            "registers allocated per thread",
            "launch__registers_per_thread",
        ),
        _m(
            "spill_bytes_per_thread",
            "bytes",
            "local memory per thread the compiled kernel reserves for registers it spilled: "
            "its whole local reservation less the local arrays its PTX declares (known at "
            "load time, no profiler needed)",
        ),
        _m(
            "local_array_bytes_per_thread",
            "bytes",
            "local arrays per thread the kernel's PTX declares itself (a libdevice sin or "
            "cos keeps its argument reduction in one): local memory, but not spills",
        ),
        _m(
            "libdevice_math_calls",
            "count",
            "slow transcendental routines (logf, tanhf, erff, sinf...) that libdevice inlines "
            "into the compiled kernel, each tens of instructions per element (read from the "
            "PTX at launch, no profiler needed)",
        ),
        _m(
            "shared_mem_per_block_kb",
            "KiB",
            "shared memory per CTA (static + dynamic)",
            "launch__shared_mem_per_block",
        ),
        _m(
            "local_memory_bytes",
            "bytes",
            "local-memory traffic (spilled registers, and local arrays where the kernel "
            "declares any)",
            "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
        ),
        _m("l2_hit_rate_pct", "%", "L2 sector hit rate", "lts__t_sector_hit_rate.pct"),
        _m("l1_hit_rate_pct", "%", "L1/TEX sector hit rate", "l1tex__t_sector_hit_rate.pct"),
        _m(
            "sectors_per_request",
            "ratio",
            "global-load sectors per request (4 = fully coalesced 32-bit)",
            "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio",
        ),
        _m(
            "global_load_efficiency_pct",
            "%",
            "bytes the global-load instructions asked for per byte of the 32-byte sectors "
            "they fetched, x100 (100: every fetched byte used; 25: a warp reading 2 bytes "
            "every 8)",
            "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
        ),
        _m(
            "global_store_efficiency_pct",
            "%",
            "bytes the global-store instructions wrote per byte of the 32-byte sectors they "
            "filled, x100 (100: whole sectors written; 12.5: a warp writing 4 bytes to each "
            "of 32 rows of a column); unmeasured where the stores are under 5% of the "
            "kernel's DRAM traffic",
            "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct",
        ),
        _m(
            "shared_bank_conflicts",
            "count",
            "shared-memory bank conflicts (loads and stores)",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        ),
        _m(
            "shared_bank_conflict_pct",
            "%",
            "shared-memory bank conflicts per shared-memory wavefront (extra replays), x100",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
        ),
        _m(
            "global_reduction_sectors",
            "count",
            "L2 sectors touched by global reductions and atomics (atomicAdd, tl.atomic_add)",
            "lts__t_sectors_op_red.sum",
        ),
        *_stall_metrics(),
        _m(
            "issue_slot_util_pct",
            "%",
            "share of cycles in which a warp scheduler issued an instruction",
            "smsp__issue_active.avg.pct_of_peak_sustained_active",
        ),
        _m(
            "occupancy_limit_registers",
            "CTAs",
            "CTAs per SM that the register file allows",
            "launch__occupancy_limit_registers",
        ),
        _m(
            "occupancy_limit_shared_mem",
            "CTAs",
            "CTAs per SM that shared memory allows",
            "launch__occupancy_limit_shared_mem",
        ),
        _m(
            "occupancy_limit_warps",
            "CTAs",
            "CTAs per SM that the warp slots allow (block size)",
            "launch__occupancy_limit_warps",
        ),
        _m(
            "occupancy_limit_blocks",
            "CTAs",
            "CTAs per SM that the hardware block-slot limit allows",
            "launch__occupancy_limit_blocks",
        ),
        _m("dram_bytes", "bytes", "bytes read from and written to DRAM", "dram__bytes_read.sum"),
        _m("host_overhead_us", "us", "time per call not covered by the kernels' GPU time"),
        _m("grid_size", "CTAs", "CTAs in the launch grid", "launch__grid_size"),
        _m("block_size", "threads", "threads per CTA", "launch__block_size"),
        _m(
            "pipeline_stages",
            "count",
            "software-pipeline depth the compiled Triton kernel was built with (num_stages; "
            "1 = each tile's load waits in full before it is used)",
        ),
        _m(
            "waves_per_sm",
            "waves",
            "grid size / (SMs x CTAs resident per SM)",
            "launch__waves_per_multiprocessor",
        ),
        _m("ctas_per_sm", "ratio", "grid size / SM count (below 1 leaves SMs idle)"),
        _m("tail_wave_pct", "%", "share of the last wave's slots left idle"),
        _m(
            "wave_idle_pct",
            "%",
            "share of the launch's SM time its grid leaves idle: the empty part of the "
            "last of several waves, or under one wave the SMs short of the busiest one's CTAs",
        ),
        _m("arithmetic_intensity", "FLOP/B", "FLOPs per DRAM byte of the kernel"),
        _m(
            "dram_bytes_ratio",
            "ratio",
            "DRAM bytes moved / minimal bytes (above 1 means re-reads)",
        ),
        _m("kernel_count", "count", "kernel launches per operation or step"),
        _m(
            "narrow_launch_pct",
            "%",
            "share of the call's GPU time in launches whose grid covers under a quarter of "
            "the SMs, beside a launch that fills every SM (a second pass that merges partials)",
        ),
        _m(
            "elementwise_launches",
            "count",
            "launches of torch's element-wise kernels (fills, copies, casts, arithmetic) in "
            "one call",
        ),
        _m(
            "launch_overhead_pct",
            "%",
            "share of wall time spent launching or idle between kernels",
        ),
        _m("batch", "count", "sequences (or independent problems) in the batch"),
        _m("query_len", "count", "query positions per sequence (1 = plain decode)"),
        _m("kv_len", "count", "KV-cache length per sequence"),
        _m("rows", "count", "independent rows of a row-wise operation (tokens of a norm)"),
        _m("row_len", "count", "elements per row of a row-wise operation (hidden size)"),
        _m(
            "row_elements_per_thread",
            "ratio",
            "elements of a row per thread of the program that holds it (row length / threads "
            "per CTA)",
        ),
        _m("num_heads", "count", "query heads"),
        _m("heads_per_program", "count", "query heads handled by one CTA"),
        _m("head_dim", "count", "head dimension of Q.K"),
        _m(
            "matmul_operand_bits",
            "count",
            "bits per element of the matrix product's operands, where the kernel spec "
            "declares the matmul's precision (8 for fp8 or int8 operands, 16 for bf16)",
        ),
        _m(
            "attended_fraction",
            "ratio",
            "share of the (query, key) pairs an attention mask keeps (1 = dense; a causal "
            "mask about 0.5; a sliding window of w keys over s, w / s)",
        ),
        _m(
            "live_program_fraction",
            "ratio",
            "share of a launch's programs (CTAs) that find work; the rest return at once "
            "(1 = every program works; a grid sized for the worst case, as a multi-adapter "
            "LoRA launch giving every adapter every token block, far less)",
        ),
        _m("num_splits", "count", "KV splits per (batch, head group)"),
        _m("autotune_configs", "count", "configurations an autotuner tries"),
        _m("speedup_vs_previous", "x", "speed-up of this version over the last one"),
    ]
}


def local_traffic_is_spills(metrics: Mapping[str, float]) -> bool:
    """Whether a profile's local-memory traffic (`local_memory_bytes`) can be read as
    spilled registers: not when the compiled kernel is known to spill nothing and declares
    local arrays, which then carry that traffic (a `tl.sin`'s argument reduction)."""
    return not (
        metrics.get("spill_bytes_per_thread") == 0
        and (metrics.get("local_array_bytes_per_thread") or 0) > 0
    )


# Trigger comparison operators, longest first so parsing is unambiguous.
OPERATORS: tuple[str, ...] = ("<=", ">=", "==", "!=", "<", ">")
# The comparison behind each trigger operator; strategy selection evaluates with these too.
COMPARATORS: dict[str, Callable[[Any, Any], Any]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}

# The range a value can take, by the metric's unit; a trigger or a profile outside it is
# a typing mistake (a 150% occupancy), not a measurement.  Other units: finite and >= 0.
UNIT_RANGES: dict[str, tuple[float, float]] = {"%": (0.0, 100.0)}
# Percentages that can pass 100 (a measured time below an estimated floor).
UNBOUNDED_PCT = frozenset({"pct_of_floor"})
VALUE_MAX = 1e15  # above any count, byte total or duration a profiler reports


def metric_value_problem(metric: str, value: object) -> str | None:
    """Why `value` cannot be a value of `metric` (not a finite number, outside its unit's
    range), or None.  Used by triggers and by every profile reader."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{metric}: {value!r} is not a number"
    if not math.isfinite(value):
        return f"{metric}: {value!r} is not a finite number"
    known = METRICS.get(metric)
    lo, hi = UNIT_RANGES.get(known.unit if known else "", (0.0, VALUE_MAX))
    if metric in UNBOUNDED_PCT:
        hi = VALUE_MAX
    if not lo <= value <= hi:
        unit = f" {known.unit}" if known else ""
        return f"{metric}: {value:g} is outside {lo:g}..{hi:g}{unit}"
    return None


# Section headings of the detail-file template, in order (Japanese source).
SECTIONS: tuple[str, ...] = (
    "When to Apply",
    "Mechanism",
    "Affected Metrics",
    "Implementation",
    "Performance Evidence",
    "Generalization",
    "Pitfalls",
    "Interactions",
)

EVIDENCE_COLUMNS: tuple[str, ...] = ("Config", "Before", "After", "Change")


def closed_vocabularies() -> dict[str, list[str]]:
    """All vocabularies as plain lists, for `kbopt vocab --json`, docs and the site."""
    return {
        "kind": [k.value for k in Kind],
        "scope": [s.value for s in Scope],
        "language": [lang.value for lang in Language],
        "bottleneck": [b.value for b in Bottleneck],
        "level": [lv.value for lv in Level],
        "status": [s.value for s in Status],
        "relation": [r.value for r in Relation],
        "source_type": [s.value for s in SourceType],
        "context": list(CONTEXTS),
        "metric": list(METRICS),
        "operator": list(OPERATORS),
    }
