"""Naming the bottleneck: explicit rules, first match wins.

The profiler contract has three classes (memory / compute / latency).  kbopt decides
with speed-of-light percentages, the same idea as Nsight Compute's top-level rule:
a unit running near its peak is the limit; when no unit is near its peak, the kernel
is waiting (latency-bound: too few warps in flight, too few CTAs, dependent loads,
barriers or launch gaps).

Let `mem = dram_throughput_pct` and `comp = max(tensor_core_util_pct, sm_throughput_pct)`.

| rule | condition                                   | class   |
|------|---------------------------------------------|---------|
| M1   | mem >= BUSY_PCT and mem >= comp             | memory  |
| C1   | comp >= BUSY_PCT and comp > mem             | compute |
| L1   | neither reaches BUSY_PCT                    | latency |

BUSY_PCT is 60: below it, more than a third of the unit's peak is left on the table
and the unit cannot be what stops the kernel.  Without hardware counters, `mem` and
`comp` are timing estimates (minimal bytes / time / measured bandwidth, matmul FLOPs /
time / measured matmul rate); they are lower bounds of the true activity, and the
analysis says so.  The root cause's second sentence comes from the secondary signals
(`ctas_per_sm`, occupancy, registers, local memory, L2 hit rate, re-read ratio).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kbopt.vocab import Bottleneck

BUSY_PCT = 60.0
LOW_OCCUPANCY_PCT = 25.0
LOW_L2_HIT_PCT = 50.0
REREAD_RATIO = 1.5
HIGH_REGISTERS = 168  # above this, fewer than 3 warps x 4 schedulers x 128 threads fit


@dataclass(frozen=True)
class Classification:
    bottleneck: Bottleneck
    rule: str
    mem_pct: float | None
    comp_pct: float | None
    root_cause: str  # two sentences: the class, then the most telling secondary signal
    key_issue: str  # a few words for the Stages table
    from_counters: bool


def _get(metrics: Mapping[str, float], name: str) -> float | None:
    v = metrics.get(name)
    return None if v is None else float(v)


def _secondary(metrics: Mapping[str, float], bottleneck: Bottleneck) -> tuple[str, str]:
    """(sentence, key issue) from the first secondary signal that stands out."""
    ctas = _get(metrics, "ctas_per_sm")
    occ = _get(metrics, "achieved_occupancy_pct")
    regs = _get(metrics, "registers_per_thread")
    local = _get(metrics, "local_memory_bytes")
    l2 = _get(metrics, "l2_hit_rate_pct")
    reread = _get(metrics, "dram_bytes_ratio")
    if local is not None and local > 0:
        return (
            f"Registers spill to local memory ({local:.0f} bytes of local traffic), which adds "
            "dependent memory round-trips.",
            "register spills",
        )
    if ctas is not None and ctas < 1 and bottleneck is not Bottleneck.COMPUTE:
        return (
            f"The grid gives {ctas:.2f} CTAs per SM, so part of the GPU sits idle and cannot "
            "issue loads.",
            "grid smaller than the GPU",
        )
    if reread is not None and reread > REREAD_RATIO:
        return (
            f"DRAM moves {reread:.1f}x the minimal bytes, so data is re-read instead of reused "
            "on chip.",
            "re-reads from DRAM",
        )
    if occ is not None and occ < LOW_OCCUPANCY_PCT:
        extra = f" at {regs:.0f} registers per thread" if regs else ""
        return (
            f"Achieved occupancy is {occ:.0f}%{extra}, too few warps to hide memory latency.",
            "low occupancy",
        )
    if regs is not None and regs > HIGH_REGISTERS:
        return (
            f"Each thread holds {regs:.0f} registers, which caps the warps per SM.",
            "register pressure",
        )
    if l2 is not None and l2 < LOW_L2_HIT_PCT and bottleneck is Bottleneck.MEMORY:
        return (
            f"The L2 hit rate is {l2:.0f}%, so shared data is fetched from DRAM repeatedly.",
            "low L2 reuse",
        )
    generic = {
        Bottleneck.MEMORY: ("Every byte moved is on the critical path.", "bandwidth"),
        Bottleneck.COMPUTE: ("The math pipes are the limit.", "math throughput"),
        Bottleneck.LATENCY: (
            "Warps wait on dependencies rather than on a saturated unit.",
            "stalls",
        ),
    }
    return generic[bottleneck]


def classify(metrics: Mapping[str, float], *, from_counters: bool) -> Classification:
    """Apply rules M1 / C1 / L1 to one kernel's (or one operation's) metrics."""
    mem = _get(metrics, "dram_throughput_pct")
    parts = [
        v
        for v in (_get(metrics, "tensor_core_util_pct"), _get(metrics, "sm_throughput_pct"))
        if v is not None
    ]
    comp = max(parts) if parts else None
    m, c = mem or 0.0, comp or 0.0
    source = "measured" if from_counters else "estimated from timing"
    if m >= BUSY_PCT and m >= c:
        bottleneck, rule = Bottleneck.MEMORY, "M1"
        first = f"DRAM throughput is {m:.0f}% of peak ({source}), above the {BUSY_PCT:.0f}% busy line and above compute ({c:.0f}%)."
    elif c >= BUSY_PCT and c > m:
        bottleneck, rule = Bottleneck.COMPUTE, "C1"
        first = f"Compute throughput is {c:.0f}% of peak ({source}), above the {BUSY_PCT:.0f}% busy line and above DRAM ({m:.0f}%)."
    else:
        bottleneck, rule = Bottleneck.LATENCY, "L1"
        first = f"Neither DRAM ({m:.0f}%) nor compute ({c:.0f}%) reaches {BUSY_PCT:.0f}% of peak ({source})."
    second, key = _secondary(metrics, bottleneck)
    return Classification(
        bottleneck=bottleneck,
        rule=rule,
        mem_pct=mem,
        comp_pct=comp,
        root_cause=f"{first} {second}",
        key_issue=key,
        from_counters=from_counters,
    )
