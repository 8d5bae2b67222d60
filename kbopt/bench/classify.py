"""Naming the bottleneck: Nsight Compute's guided analysis, as explicit rules.

Three steps, in the order Nsight Compute's own rules read a kernel:

1. **Speed of light** picks the class.  Let `mem = dram_throughput_pct` and
   `comp = max(tensor_core_util_pct, sm_throughput_pct)`:

   | rule | condition                                 | class   |
   |------|-------------------------------------------|---------|
   | M1   | mem >= BUSY_PCT and mem >= comp           | memory  |
   | C1   | comp >= BUSY_PCT and comp > mem           | compute |
   | L1   | neither reaches BUSY_PCT                  | latency |

   BUSY_PCT = 60 is Nsight Compute's "GPU Speed Of Light" rule: throughput below 60% of
   peak on both sides "typically indicates latency issues" (Nsight Compute Profiling
   Guide, section rules `SOLBottleneck`).  Without counters, `mem` and `comp` are timing
   estimates (lower bounds) and the analysis says so.

2. **Why the warps wait** (the cause, for every class; the first that holds, in the table's
   order, wins):

   | rule | condition                                                     | source |
   |------|---------------------------------------------------------------|--------|
   | X1   | launch_overhead_pct >= 30: the GPU idles a third of each call  | kbopt: a third of the wall time is not kernel time |
   | X2   | local_memory_bytes > 0 (or, without counters, spill_bytes_per_thread > 0): register spills; not when the compiled kernel spills nothing and declares local arrays, whose traffic it is | Nsight Compute "Memory Workload" local-memory rule; the compiled kernel's local-memory reservation less its PTX's local arrays |
   | X3   | ctas_per_sm < 1: fewer CTAs than SMs                           | Nsight Compute "Launch Statistics" small-grid rule |
   | X4   | 1 <= waves_per_sm < 4 and tail_wave_pct >= 50                 | Nsight Compute "Launch Statistics" tail-effect rule |
   | X8   | pipeline_stages <= 1 and arithmetic_intensity >= MATMUL_REUSE (50 FLOP/B): a loop of matrix products compiled with one stage, so each tile's loads are waited on in full before the products that use them | Triton's software pipeliner (`num_stages`, documented in `triton.language.range`); elementwise, normalisation and quantisation kernels do under 10 FLOPs a byte, matrix products reuse each loaded byte across a tile |
   | X5   | a stall reason >= STALL_PCT (30%) of the cycles between issued instructions, with issue_slot_util_pct < 80 | Nsight Compute `CPIStall*` rules (warp-state statistics) |
   | X6   | achieved occupancy < 25% of the warps, naming the occupancy limiter (registers, shared memory, block size or the block-slot limit: the smallest `occupancy_limit_*`), or the grid where it gives fewer CTAs per SM (at least one) than that limit lets in | Nsight Compute "Occupancy" rule (theoretical limiters) |
   | X7   | registers_per_thread > 168                                    | kbopt: above this, fewer than 3 CTAs of 128 threads fit per SM |

3. **The memory path**, when the class is memory or the dominant stall is a memory wait:

   | rule | condition                                            | source |
   |------|------------------------------------------------------|--------|
   | P1   | dram_bytes_ratio > 1.5: DRAM traffic above the minimal bytes | kbopt: re-reads instead of on-chip reuse |
   | P2   | sectors_per_request > 16: one warp's load touches more than 512 B, or global_load_efficiency_pct < 50: the loads use under half of each sector they fetch | a warp of 32 threads reading 16 B each needs 16 sectors of 32 B; more means scattered addresses; requested over fetched bytes is nvbench's "LoadEff" (Nsight Compute "Uncoalesced Global Accesses" rule, without its ideal-sector counter) |
   | P2s  | global_store_efficiency_pct < 50: the stores fill under half of each sector they write (measured only where the stores are at least 5% of the DRAM traffic) | nvbench's "StoreEff", the stores' side of the same Nsight Compute rule |
   | P3   | shared_bank_conflicts > 0 with stall_short_scoreboard_pct or stall_mio_throttle_pct >= 20 | Nsight Compute "Shared Memory bank conflicts" rule |
   | P4   | l2_hit_rate_pct < 50 on a memory-bound kernel        | kbopt: shared data fetched from DRAM repeatedly |

The root cause is two sentences: the speed-of-light verdict, then the first cause
(step 2) or memory-path finding (step 3) that holds.  `findings` keeps every rule that
held, for the profile's `### Findings` and the JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kbopt.vocab import STALL_REASONS, Bottleneck, local_traffic_is_spills

BUSY_PCT = 60.0
LAUNCH_BOUND_PCT = 30.0
STALL_PCT = 30.0
ISSUE_BUSY_PCT = 80.0
LOW_OCCUPANCY_PCT = 25.0
HIGH_REGISTERS = 168
TAIL_IDLE_PCT = 50.0
TAIL_MAX_WAVES = 4.0
REREAD_RATIO = 1.5
SCATTERED_SECTORS = 16.0
LOAD_EFFICIENCY_PCT = 50.0
SMEM_STALL_PCT = 20.0
LOW_L2_HIT_PCT = 50.0
MATMUL_REUSE = 50.0  # FLOPs per byte above which a kernel's loads feed matrix products
_MEMORY_STALLS = {"long_scoreboard", "lg_throttle", "short_scoreboard", "mio_throttle"}
_LIMITERS = {
    "occupancy_limit_registers": "registers per thread",
    "occupancy_limit_shared_mem": "shared memory per CTA",
    "occupancy_limit_warps": "the block size (warp slots)",
    "occupancy_limit_blocks": "the CTA-slot limit per SM",
}


@dataclass(frozen=True)
class Finding:
    rule: str
    sentence: str
    key_issue: str


@dataclass(frozen=True)
class Classification:
    bottleneck: Bottleneck
    rule: str
    mem_pct: float | None
    comp_pct: float | None
    root_cause: str  # two sentences: the class, then the most telling cause
    key_issue: str  # a few words for the Stages table
    from_counters: bool
    findings: tuple[Finding, ...] = field(default=())


def _get(metrics: Mapping[str, float], name: str) -> float | None:
    v = metrics.get(name)
    return None if v is None else float(v)


def dominant_stall(metrics: Mapping[str, float]) -> tuple[str, float] | None:
    """(reason, % of the cycles between issues) of the largest stall reason measured."""
    stalls = [
        (reason, float(metrics[f"stall_{reason}_pct"]))
        for reason in STALL_REASONS
        if reason != "not_selected" and f"stall_{reason}_pct" in metrics
    ]
    return max(stalls, key=lambda rv: rv[1]) if stalls else None


def occupancy_limiter(metrics: Mapping[str, float]) -> tuple[str, float] | None:
    """(what limits resident CTAs per SM, how many it allows), the smallest limit."""
    limits = [(_LIMITERS[k], float(metrics[k])) for k in _LIMITERS if k in metrics]
    return min(limits, key=lambda lv: lv[1]) if limits else None


def _causes(metrics: Mapping[str, float], bottleneck: Bottleneck) -> list[Finding]:
    out: list[Finding] = []
    launch = _get(metrics, "launch_overhead_pct")
    if launch is not None and launch >= LAUNCH_BOUND_PCT:
        out.append(
            Finding(
                "X1",
                f"The GPU is idle for {launch:.0f}% of each call (launch latency, gaps between "
                "kernels or host work), so the kernels are not what limits it.",
                "launch / host overhead",
            )
        )
    local = _get(metrics, "local_memory_bytes")
    reserved = _get(metrics, "spill_bytes_per_thread")
    spilled = ""
    if local is not None and local > 0 and local_traffic_is_spills(metrics):
        spilled = f"{local:.0f} bytes of local traffic"
    elif local is None and reserved is not None and reserved > 0:
        # Without counters the compiled kernel still says it spilled: it reserves local
        # memory per thread for the registers it could not hold.
        spilled = f"the compiled kernel reserves {reserved:.0f} bytes per thread for them"
    if spilled:
        out.append(
            Finding(
                "X2",
                f"Registers spill to local memory ({spilled}), which adds dependent memory "
                "round-trips.",
                "register spills",
            )
        )
    ctas = _get(metrics, "ctas_per_sm")
    if ctas is not None and ctas < 1 and bottleneck is not Bottleneck.COMPUTE:
        out.append(
            Finding(
                "X3",
                f"The grid gives {ctas:.2f} CTAs per SM, so part of the GPU sits idle and "
                "cannot issue loads.",
                "grid smaller than the GPU",
            )
        )
    waves, tail = _get(metrics, "waves_per_sm"), _get(metrics, "tail_wave_pct")
    if (
        waves is not None
        and tail is not None
        and 1 <= waves < TAIL_MAX_WAVES
        and tail >= TAIL_IDLE_PCT
    ):
        out.append(
            Finding(
                "X4",
                f"The launch runs {waves:.2f} waves and leaves {tail:.0f}% of the last "
                "wave's slots idle (tail effect).",
                "partial last wave",
            )
        )
    stages, reuse = _get(metrics, "pipeline_stages"), _get(metrics, "arithmetic_intensity")
    if stages is not None and stages <= 1 and reuse is not None and reuse >= MATMUL_REUSE:
        # A structural cause, like the grid's: the compiler was told not to load ahead.
        out.append(
            Finding(
                "X8",
                "The main loop was compiled with one pipeline stage "
                f"({reuse:.0f} FLOPs a byte: matrix products), so each tile's loads are waited "
                "on in full before the products that use them.",
                "one pipeline stage",
            )
        )
    stall = dominant_stall(metrics)
    issue = _get(metrics, "issue_slot_util_pct")
    if stall is not None and stall[1] >= STALL_PCT and (issue is None or issue < ISSUE_BUSY_PCT):
        reason, pct = stall
        out.append(
            Finding(
                "X5",
                f"Warps spend {pct:.0f}% of the cycles between two issued instructions waiting "
                f"for {STALL_REASONS[reason]} ({reason.replace('_', ' ')} stalls)"
                + (f", and the schedulers issue in only {issue:.0f}% of cycles." if issue else ".")
                + "",
                f"{reason.replace('_', ' ')} stalls",
            )
        )
    occ = _get(metrics, "achieved_occupancy_pct")
    regs = _get(metrics, "registers_per_thread")
    if occ is not None and occ < LOW_OCCUPANCY_PCT:
        limiter = occupancy_limiter(metrics)
        if limiter is not None and ctas is not None and ctas >= 1 and ctas < limiter[1]:
            # The resources would let more CTAs in than the grid has: the grid is the limit
            # (a few one-warp programs per SM), not the registers or shared memory.
            sentence = (
                f"Achieved occupancy is {occ:.0f}% of the warps: the grid gives only "
                f"{ctas:.1f} CTAs per SM where {limiter[1]:.0f} could be resident, too few "
                "warps to hide latency."
            )
            key = "low occupancy (grid too small to fill the SMs)"
        else:
            why = (
                f"; {limiter[0]} allow only {limiter[1]:.0f} CTA(s) per SM"
                if limiter is not None
                else (f" at {regs:.0f} registers per thread" if regs else "")
            )
            sentence = (
                f"Achieved occupancy is {occ:.0f}% of the warps{why}, too few to hide latency."
            )
            key = "low occupancy" + (f" ({limiter[0]})" if limiter else "")
        out.append(Finding("X6", sentence, key))
    if regs is not None and regs > HIGH_REGISTERS:
        out.append(
            Finding(
                "X7",
                f"Each thread holds {regs:.0f} registers, which caps the warps per SM.",
                "register pressure",
            )
        )
    return out


def _memory_path(metrics: Mapping[str, float], bottleneck: Bottleneck) -> list[Finding]:
    stall = dominant_stall(metrics)
    memory_wait = stall is not None and stall[0] in _MEMORY_STALLS and stall[1] >= STALL_PCT
    if bottleneck is not Bottleneck.MEMORY and not memory_wait:
        return []
    out: list[Finding] = []
    ratio = _get(metrics, "dram_bytes_ratio")
    if ratio is not None and ratio > REREAD_RATIO:
        out.append(
            Finding(
                "P1",
                f"DRAM moves {ratio:.1f}x the minimal bytes, so data is re-read instead of "
                "reused on chip.",
                "re-reads from DRAM",
            )
        )
    spr = _get(metrics, "sectors_per_request")
    efficiency = _get(metrics, "global_load_efficiency_pct")
    if spr is not None and spr > SCATTERED_SECTORS:
        out.append(
            Finding(
                "P2",
                f"Each warp-wide global load touches {spr:.1f} sectors of 32 B, more than "
                "contiguous 16-byte accesses need: the addresses are scattered.",
                "uncoalesced loads",
            )
        )
    elif efficiency is not None and efficiency < LOAD_EFFICIENCY_PCT:
        out.append(
            Finding(
                "P2",
                f"Global loads use {efficiency:.0f}% of the bytes of the sectors they fetch: "
                "strided or scattered addresses leave most of each 32-byte sector unread.",
                "uncoalesced loads",
            )
        )
    stores = _get(metrics, "global_store_efficiency_pct")
    if stores is not None and stores < LOAD_EFFICIENCY_PCT:
        out.append(
            Finding(
                "P2s",
                f"Global stores fill {stores:.0f}% of the bytes of the sectors they write: "
                "consecutive threads store a stride apart (a transposed or column-major "
                "write), so each 32-byte sector carries a few useful bytes.",
                "uncoalesced stores",
            )
        )
    conflicts = _get(metrics, "shared_bank_conflicts")
    smem_stall = max(
        _get(metrics, "stall_short_scoreboard_pct") or 0.0,
        _get(metrics, "stall_mio_throttle_pct") or 0.0,
    )
    if conflicts and conflicts > 0 and smem_stall >= SMEM_STALL_PCT:
        out.append(
            Finding(
                "P3",
                f"Shared-memory accesses hit {conflicts:.0f} bank conflicts while warps wait "
                f"{smem_stall:.0f}% of the time on shared-memory results.",
                "shared-memory bank conflicts",
            )
        )
    l2 = _get(metrics, "l2_hit_rate_pct")
    if l2 is not None and l2 < LOW_L2_HIT_PCT and bottleneck is Bottleneck.MEMORY:
        out.append(
            Finding(
                "P4",
                f"The L2 hit rate is {l2:.0f}%, so shared data is fetched from DRAM repeatedly.",
                "low L2 reuse",
            )
        )
    return out


_GENERIC = {
    Bottleneck.MEMORY: Finding("M1", "Every byte moved is on the critical path.", "bandwidth"),
    Bottleneck.COMPUTE: Finding("C1", "The math pipes are the limit.", "math throughput"),
    Bottleneck.LATENCY: Finding(
        "L1", "Warps wait on dependencies rather than on a saturated unit.", "stalls"
    ),
}


def _pct(value: float | None) -> str:
    """A percentage as read, or 'not measured': an absent figure is never shown as 0%."""
    return f"{value:.0f}%" if value is not None else "not measured"


def classify(
    metrics: Mapping[str, float], *, from_counters: bool, source: str | None = None
) -> Classification:
    """Speed of light, then the causes, then the memory path (see the module doc).

    `source` names where the figures came from when it is neither a counter read nor a
    timing estimate (the fake backend's stand-in figures say so).
    """
    mem = _get(metrics, "dram_throughput_pct")
    parts = [
        v
        for v in (_get(metrics, "tensor_core_util_pct"), _get(metrics, "sm_throughput_pct"))
        if v is not None
    ]
    comp = max(parts) if parts else None
    m, c = mem or 0.0, comp or 0.0
    if source is None:
        source = "measured" if from_counters else "estimated from timing"
    if m >= BUSY_PCT and m >= c:
        bottleneck, rule = Bottleneck.MEMORY, "M1"
        first = (
            f"DRAM throughput is {m:.0f}% of peak ({source}), above the {BUSY_PCT:.0f}% busy "
            f"line and above compute ({_pct(comp)})."
        )
    elif c >= BUSY_PCT and c > m:
        bottleneck, rule = Bottleneck.COMPUTE, "C1"
        first = (
            f"Compute throughput is {c:.0f}% of peak ({source}), above the {BUSY_PCT:.0f}% "
            f"busy line and above DRAM ({_pct(mem)})."
        )
    else:
        bottleneck, rule = Bottleneck.LATENCY, "L1"
        first = (
            f"Neither DRAM ({_pct(mem)}) nor compute ({_pct(comp)}) reaches {BUSY_PCT:.0f}% "
            f"of peak ({source})."
        )
    findings = _causes(metrics, bottleneck) + _memory_path(metrics, bottleneck)
    # A launch-bound call is explained by the launches; otherwise the memory path explains
    # a memory-bound kernel better than a generic cause that also holds.
    lead = findings[0] if findings else _GENERIC[bottleneck]
    if bottleneck is Bottleneck.MEMORY and lead.rule != "X1":
        path = [f for f in findings if f.rule.startswith("P")]
        spills = [f for f in findings if f.rule == "X2"]
        lead = (spills or path or [lead])[0]
    return Classification(
        bottleneck=bottleneck,
        rule=rule,
        mem_pct=mem,
        comp_pct=comp,
        root_cause=f"{first} {lead.sentence}",
        key_issue=lead.key_issue,
        from_counters=from_counters,
        findings=tuple(findings),
    )
