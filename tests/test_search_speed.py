"""Speed guard for the search path on a small catalog (the bundled one).

Absolute times depend on the machine and on what else runs on it, so each check times
a baseline in the same run and bounds the ratio, generously: the bounds are 3-4 times
today's ratios (see results/cli/cli.md), so noise passes and a change that makes the
path several times slower (the quick path declining everything, whoosh or pydantic
imported where they were not, a quadratic loop) fails.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kbopt.search import search
from kbopt.store import Store

# Today: quick path ~2.5x Python's start-up, full path ~14x, warm search ~2.6x the
# baseline work below.
MAX_QUICK_VS_PYTHON = 8.0
MAX_FULL_VS_PYTHON = 45.0
MAX_WARM_VS_BASELINE = 10.0


def _median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times)


def _process(argv: list[str], env: dict[str, str]) -> Callable[[], object]:
    def run() -> object:
        proc = subprocess.run(argv, env=env, capture_output=True, timeout=120)
        assert proc.returncode == 0, proc.stderr.decode()[-500:]
        return proc

    return run


@pytest.fixture
def kb(kb_copy: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("KBOPT_CACHE_DIR", raising=False)
    search("kernel", store=Store(kb_copy))  # the index and its snapshot, built once
    return kb_copy


def test_a_fresh_process_search_costs_a_few_python_start_ups(kb: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("KBOPT_CACHE_DIR", "KBOPT_QUICK")}
    env["KBOPT_ROOT"] = str(kb)
    python = _process([sys.executable, "-c", "import json, re, pathlib"], env)
    cli = [sys.executable, "-m", "kbopt", "search", "split kv", "--json"]
    quick = _process(cli, env)
    full = _process(cli, {**env, "KBOPT_QUICK": "0"})
    quick()  # warm the page cache
    base, q, f = [], [], []
    for _ in range(5):  # interleaved: a burst of load hits all three alike
        base.append(_median_ms(python, 1))
        q.append(_median_ms(quick, 1))
        f.append(_median_ms(full, 1))
    b = statistics.median(base)
    assert statistics.median(q) <= MAX_QUICK_VS_PYTHON * b, (statistics.median(q), b)
    assert statistics.median(f) <= MAX_FULL_VS_PYTHON * b, (statistics.median(f), b)


def test_a_warm_search_costs_little_more_than_sorting_a_list(kb: Path) -> None:
    store = Store(kb)
    queries = ["split kv", "register spill", "bank conflicts shared memory", "occupancy", "tile"]
    for q in queries:
        search(q, store=store)  # first use of each query

    def baseline() -> None:
        rng = random.Random(1)
        xs = [rng.random() for _ in range(20_000)]
        sorted(xs)
        json.dumps(xs[:2000])

    def warm() -> None:
        for q in queries:
            search(q, store=store)

    b, w = [], []
    for _ in range(7):
        b.append(_median_ms(baseline, 1))
        w.append(_median_ms(warm, 1))
    ratio = statistics.median(w) / statistics.median(b)
    assert ratio <= MAX_WARM_VS_BASELINE, (statistics.median(w), statistics.median(b))
