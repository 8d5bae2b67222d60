"""Timing a version that writes into its inputs on inputs no earlier call has changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from kbopt.bench import harness, input_writes, suite  # noqa: E402
from kbopt.kernel import Version, load_spec  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def test_a_fingerprint_changes_with_any_write_and_only_with_one(monkeypatch) -> None:
    x = torch.arange(1000, dtype=torch.float32)
    before = input_writes.fingerprint(x)
    assert input_writes.fingerprint(x.clone()) == before
    x[17] = -1.0
    assert input_writes.fingerprint(x) != before
    y = torch.arange(1000, dtype=torch.float32)
    y_before = input_writes.fingerprint(y)
    y.copy_(y.flip(0))  # the same bytes in another order, as an in-place sort leaves them
    assert input_writes.fingerprint(y) != y_before
    monkeypatch.setattr(input_writes, "CHUNK_BYTES", 7)  # chunking does not change the sums
    assert input_writes.fingerprint(torch.arange(1000, dtype=torch.float32)) == y_before
    assert input_writes.fingerprint(torch.ones(5, 3)[:, 1]) == input_writes.fingerprint(
        torch.ones(5)
    )  # a strided view reads as its values
    assert input_writes.fingerprint(torch.empty(0)) == (0, 0)


def test_the_positions_one_call_writes_are_found() -> None:
    a, b = torch.zeros(64), torch.ones(64)

    def scribble() -> None:
        b[3] = 7.0

    assert input_writes.written_positions(scribble, (a, b, 5)) == frozenset({1})
    assert input_writes.written_positions(lambda: a + b, (a, b, 5)) == frozenset()


def test_pristine_sets_put_back_what_a_call_wrote() -> None:
    sets = [(torch.arange(8.0), torch.zeros(4)), (torch.arange(8.0) * 2, torch.zeros(4))]
    pristine = input_writes.PristineSets(sets, {0})
    sets[0][0].fill_(-1.0)
    sets[1][0].fill_(-1.0)
    pristine.restore(0)
    assert torch.equal(sets[0][0], torch.arange(8.0))
    assert torch.equal(sets[1][0], torch.full((8,), -1.0))  # only the set asked for
    pristine.restore_all()
    assert torch.equal(sets[1][0], torch.arange(8.0) * 2)
    assert pristine.covers({0}) and not pristine.covers({0, 1})


def test_the_number_of_timed_calls_holds_the_wall_time_with_restores() -> None:
    assert input_writes.calls_for(100, call_ms=1.0, iteration_ms=1.2) == 100
    assert input_writes.calls_for(100, call_ms=0.01, iteration_ms=0.02) == 1000  # MAX_CALLS
    # restoring a large input costs far more than the call: about 4 x rep_ms of wall time
    assert input_writes.calls_for(100, call_ms=0.05, iteration_ms=10.0) == 40
    assert input_writes.calls_for(100, call_ms=50.0, iteration_ms=500.0) == 5  # MIN_CALLS


def test_a_version_that_writes_its_inputs_is_timed_on_restored_sets(monkeypatch) -> None:
    """Every timed call of a version that writes into its inputs sees them as they were
    made; one that does not write is timed the usual way on the kept sets."""
    spec = load_spec("add_rmsnorm", REPO)
    dims = {"rows": 2, "hidden": 64}
    made: list[int] = []

    def cpu_sets(spec_: Any, dims_: Any, dtype: str) -> list[tuple[Any, ...]]:
        made.append(1)
        return [spec.make_inputs(dims_, dtype=torch.float32, device="cpu") for _ in range(3)]

    monkeypatch.setattr(harness, "input_sets", cpu_sets)
    seen: list[bool] = []

    def in_place(*inputs: Any) -> Any:
        first = inputs[0]
        seen.append(bool(torch.isfinite(first).all()))
        first.fill_(float("nan"))
        return first

    def restoring(launches: Any, pristine: Any, rep_ms: int) -> tuple[float, float, float]:
        for i in range(7):  # as bench_restoring_ms does around each timed call
            pristine.restore(i % len(launches))
            launches[i % len(launches)]()
        pristine.restore_all()
        return 1.0, 0.9, 1.1

    monkeypatch.setattr(input_writes, "bench_restoring_ms", restoring)
    cache = harness.InputCache()
    sets = cache.input_sets(spec, dims, "float32")
    timer, written = suite._timer(spec, Version("v", "triton", "", in_place), dims, sets, 10, cache)
    assert written == frozenset({0})
    assert timer() == (1.0, 0.9, 1.1)
    assert seen and all(seen[1:])  # after the finding call, every timed call saw clean inputs
    assert len(made) == 2  # the kept sets, then new ones once a write was found
    # a second measurement at the same shape keeps the restored sets
    seen.clear()
    suite._timer(spec, Version("v", "triton", "", in_place), dims, cache.sets, 10, cache)[0]()
    assert all(seen[1:]) and len(made) == 2

    timed: list[Any] = []
    monkeypatch.setattr(harness, "bench_ms", lambda fn, rep_ms: timed.append(fn) or (2.0, 2.0, 2.0))
    timer, written = suite._timer(
        spec, Version("v", "triton", "", lambda *x: x[0] + 1), dims, cache.sets, 10, cache
    )
    assert written == frozenset() and timer() == (2.0, 2.0, 2.0) and len(timed) == 1


def test_restoring_bench_restores_before_every_timed_call(monkeypatch) -> None:
    """bench_restoring_ms with a stand-in CUDA clock: every call (warm-up, estimate, timed)
    runs on its set as made, the L2 is flushed before each, and the sets end restored."""
    import types

    from triton import runtime

    flushes: list[int] = []
    fake_driver = types.SimpleNamespace(
        get_empty_cache_for_benchmark=lambda: "flush buffer",
        clear_cache=lambda buffer: flushes.append(1),
    )
    monkeypatch.setattr(runtime, "driver", types.SimpleNamespace(active=fake_driver))
    clock = {"t": 0.0}

    class Event:
        def __init__(self, enable_timing: bool = False) -> None:
            self.at = 0.0

        def record(self) -> None:
            self.at = clock["t"]

        def elapsed_time(self, end: Event) -> float:
            return end.at - self.at

    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    sets = [(torch.arange(4.0),), (torch.arange(4.0) + 10,)]
    pristine = input_writes.PristineSets(sets, {0})
    clean: list[bool] = []

    def launch_for(i: int) -> Any:
        def launch() -> None:
            made = torch.arange(4.0) + 10 * i
            clean.append(bool(torch.equal(sets[i][0], made)))
            sets[i][0].mul_(-1.0)  # writes its input, as an in-place kernel does
            clock["t"] += 0.5 + i  # set 1's calls take longer: 0.5 and 1.5 ms

        return launch

    med, p20, p80 = input_writes.bench_restoring_ms([launch_for(0), launch_for(1)], pristine, 20)
    assert clean and all(clean)
    assert len(flushes) == len(clean)  # one flush before every call
    assert p20 <= med <= p80 and {p20, p80} <= {0.5, 1.5}
    assert torch.equal(sets[0][0], torch.arange(4.0))  # left as made for the next measurement
    assert torch.equal(sets[1][0], torch.arange(4.0) + 10)
