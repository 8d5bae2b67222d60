"""A valid entry text that the tests mutate into broken ones."""

VALID = """---
name: sample-opt
kind: optimization
applies_to: [attention-decode]
bottlenecks: [memory]
impact: high
expected_gain_pct: 30
risk: low
status: proposed
created: 2026-12-01
updated: 2026-12-02
---

# Sample optimization

## When to Apply
- Attention decode against a long KV cache.
- `ctas_per_sm < 1`: SMs idle.

## Mechanism
Splits the work.

## Affected Metrics
- `dram_throughput_pct`: rises.

## Implementation
```python
x = 1
```

## Performance Evidence
Source type: external report
Source: Some paper (2023), A100
| Config | Before | After | Change |
|--------|--------|-------|--------|
| b=1 | 10 us | 5 us | -50% |

## Generalization
Use the whole machine.

## Pitfalls
- Too many splits.

## Interactions
"""

# Line numbers in VALID, for the expectations below.
LINE = {line.strip(): i for i, line in enumerate(VALID.splitlines(), start=1) if line.strip()}
