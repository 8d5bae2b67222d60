"""Measurement helpers that know nothing about one kernel.

- `kbopt.bench.ncu`: the Nsight Compute runner and its CSV parser (hardware counters).
- `kbopt.bench.classify`: the documented rules that name a bottleneck from counters or timing.
- `kbopt.bench.trials`: trial configurations, the default matrix and out-of-memory backoff.
- `kbopt.bench.tuning`: manual tiles first, then a coarse autotune inside a time budget.
- `kbopt.bench.backend`: the measurement backend interface, the real one (torch + kernels/)
  and a deterministic fake for tests.

Nothing here imports torch at module level: `import kbopt.bench.*` works on any machine.
"""
