"""Round trips of the French source's Optimization Applied and Optimization Summary reports."""

from __future__ import annotations

import pytest

from kbopt.contracts.reports import (
    OptimizationApplied,
    OptimizationSummary,
    Outcome,
    StepStatus,
    impact_text,
    pct_change,
)
from kbopt.errors import ProblemList

APPLIED = """\
## Optimization Applied: split-kv-decode

### Prerequisites Checked
- [x] Code compatibility verified
- [ ] Hardware requirements met

### Implementation
- Specialist: kernel-triton-specialist
- Changes: triton_v2 -> triton_v3 (8 KV splits + combine)

### Validation
| Metric | Before | After | Change |
|--------|--------|--------|--------|
| Latency | 412.0 us | 298.3 us | -27.6% |
| SOL% | 13.3% | 18.4% | +5.1 points |

### Result
SUCCESS: Achieved 27.6% improvement
"""

SUMMARY = """\
## Optimization Summary

**Goal**: pct_of_floor >= 50 at decode and spec
**Starting Point**: triton_v1: decode 2100.0 us, spec 9000.0 us
**Result**: triton_v3: decode 300.0 us; goal not achieved

### Optimizations Applied (in order)

1. **64 rows per program**
   - Impact: 2100.0 us --> 412.0 us (-80.4%)
   - Status: Applied
   - Version: triton_v1 -> triton_v2

2. **BLOCK_N 32 -> 128**
   - Impact: Regression detected
   - Status: Rolled back

### Cumulative Results
| Metric | Baseline | Final | Total Change |
|--------|----------|-------|--------------|
| Latency (decode) | 2100.0 us | 300.0 us | -85.7% |
| SOL% | 2.6% | 18.3% | +15.7 points |

### Remaining Opportunities
- split-kv-decode: not tried (run ended at the iteration limit)
"""


def test_applied_round_trip() -> None:
    rep = OptimizationApplied.parse(APPLIED)
    assert rep.outcome is Outcome.SUCCESS
    assert [c.done for c in rep.prerequisites] == [True, False]
    assert rep.specialist == "kernel-triton-specialist"
    assert rep.validation[1].change == "+5.1 points"
    again = OptimizationApplied.parse(rep.render())
    assert again == rep


def test_applied_rolled_back_result_and_errors() -> None:
    text = APPLIED.replace("SUCCESS: Achieved 27.6% improvement", "ROLLED BACK: 7.1% slower")
    assert OptimizationApplied.parse(text).outcome is Outcome.ROLLED_BACK
    with pytest.raises(ProblemList) as err:
        OptimizationApplied.parse(APPLIED.replace("SUCCESS:", "GREAT:"), path="a.md")
    assert "a.md:18:" in str(err.value)


def test_summary_round_trip_is_a_fixed_point() -> None:
    rep = OptimizationSummary.parse(SUMMARY)
    assert [s.status for s in rep.steps] == [StepStatus.APPLIED, StepStatus.ROLLED_BACK]
    assert rep.steps[0].details == ["Version: triton_v1 -> triton_v2"]
    assert rep.cumulative[0].after == "300.0 us"
    assert rep.remaining[0].startswith("split-kv-decode")
    assert rep.render() == SUMMARY
    assert OptimizationSummary.parse(rep.render()) == rep


def test_summary_step_needs_impact_and_status() -> None:
    broken = SUMMARY.replace("   - Status: Rolled back\n", "")
    with pytest.raises(ProblemList) as err:
        OptimizationSummary.parse(broken, path="s.md")
    assert "s.md:14:" in str(err.value)
    with pytest.raises(ProblemList):
        OptimizationSummary.parse(SUMMARY.replace("**Goal**", "Goal"))


def test_change_helpers() -> None:
    assert pct_change(400.0, 300.0) == "-25.0%"
    assert impact_text(400.0, 300.0) == "400.0 us --> 300.0 us (-25.0%)"
