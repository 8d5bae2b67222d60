"""Compiling the next configurations of a knob search ahead, in parallel worker processes
(`kbopt.bench.warm_compile`), and how `kbopt ablate` uses it: what is about to be measured
is compiled first, and nothing about what is measured changes."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from kbopt.bench.backend import FakeBackend, Measurement
from kbopt.bench.trials import TrialConfig
from kbopt.bench.warm_compile import CompileWarmer, WarmStats, compile_once
from kbopt.kernel import KernelSpec, clear_cache, load_spec
from kbopt.store import Store
from kbopt.workflow.ablation import next_to_compile, run_ablation

REPO = Path(__file__).resolve().parent.parent
DECODE = TrialConfig.from_dict({"name": "decode", "dims": {"b": 32, "s": 1, "t": 4096}})


def _project(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "docs" / "knowledge", tmp_path / "docs" / "knowledge")
    (tmp_path / "kernels").mkdir()
    shutil.copy(REPO / "kernels" / "__init__.py", tmp_path / "kernels" / "__init__.py")
    shutil.copytree(
        REPO / "kernels" / "mla_decode",
        tmp_path / "kernels" / "mla_decode",
        ignore=shutil.ignore_patterns("results", "__pycache__"),
    )
    clear_cache()
    return tmp_path


class Journal:
    """One ordered record of what was compiled ahead and what was measured."""

    def __init__(self) -> None:
        self.events: list[tuple[str, frozenset]] = []


class JournalBackend(FakeBackend):
    def __init__(self, root: Path, journal: Journal, file_values: Mapping[str, Any]):
        super().__init__(root)
        self.journal, self.file_values = journal, dict(file_values)

    def measure(
        self, spec: KernelSpec, version: str, config: TrialConfig, params: Any = None
    ) -> Measurement:
        values = {**self.file_values, **(params or {})}
        self.journal.events.append(("measure", frozenset(values.items())))
        return super().measure(spec, version, config, params)


class JournalWarmer:
    def __init__(self, journal: Journal, workers: int):
        self.journal, self.stats = journal, WarmStats(workers)
        self.done: set[frozenset] = set()
        self.sure: list[int] = []  # per batch: how many are some arm's next measurement
        self.batches: list[list[dict[str, Any]]] = []

    def warm(
        self,
        configs: Sequence[Mapping[str, Any]],
        deadline: float | None = None,
        sure: Sequence[bool] | None = None,
    ) -> int:
        assert sure is not None and len(sure) == len(configs)
        self.sure.append(sum(sure))
        self.batches.append([dict(c) for c in configs])
        self.journal.events += [("compile", frozenset(c.items())) for c in configs]
        self.done |= {frozenset(c.items()) for c in configs}
        self.stats.batches += 1
        self.stats.configs += len(configs)
        return len(configs)


def _run(root: Path, warmer: Any, journal: Journal) -> dict[str, Any]:
    spec = load_spec("mla_decode", root)
    backend = JournalBackend(root, journal, spec.knob_values("triton_v2"))
    return run_ablation(
        spec=spec,
        backend=backend,
        store=Store(root),
        start="triton_v2",
        config=DECODE,
        arms=["catalog", "random", "grid"],
        trials=10,
        seed=5,
        warmer=warmer,
    )


def test_every_configuration_is_compiled_ahead_before_it_is_measured(tmp_path: Path) -> None:
    root = _project(tmp_path)
    journal = Journal()
    warmer = JournalWarmer(journal, workers=4)
    doc = _run(root, warmer, journal)
    measured = [key for what, key in journal.events if what == "measure"]
    compiled = [key for what, key in journal.events if what == "compile"]
    # the start (first measurement) and its uncached repeat (last) compile in the search
    for key in measured[1:-1]:
        first_measure = journal.events.index(("measure", key))
        assert ("compile", key) in journal.events[:first_measure], dict(key)
    assert len(compiled) == len(set(compiled))  # never the same configuration twice
    assert all(len(b) <= 4 for b in warmer.batches)  # one wave of the workers per round
    # only each arm's next measurement is waited for: one per arm at most (the grid's later
    # points are guesses a round does not wait on)
    assert all(n <= 3 for n in warmer.sure) and any(n > 0 for n in warmer.sure)
    assert measured[0] not in compiled  # the start was measured before any round
    assert doc["compiled_ahead"]["configs"] == len(compiled)
    assert doc["compiled_ahead"]["batches"] == len(warmer.batches)


def test_compiling_ahead_changes_nothing_that_is_measured(tmp_path: Path) -> None:
    root = _project(tmp_path)
    with_warmer = _run(root, JournalWarmer(Journal(), workers=3), Journal())
    without = _run(root, None, Journal())
    assert without["compiled_ahead"] is None
    for a, b in zip(with_warmer["rows"], without["rows"], strict=True):
        assert [(t["values"], t["move"]) for t in a["trajectory"]] == [
            (t["values"], t["move"]) for t in b["trajectory"]
        ]


def test_next_to_compile_takes_each_arms_next_first_and_skips_what_is_known() -> None:
    a, b, c, d = ({"w": i} for i in range(4))
    measured = {frozenset(d.items())}
    queues = [[a, b], [d, c], [a, c, b]]
    # depth 0: a (arm 1), d is measured, a again; depth 1: b and c, guesses
    assert next_to_compile(queues, measured, limit=3) == ([a, b, c], [True, False, False])
    assert next_to_compile(queues, measured, limit=1) == ([a], [True])
    assert next_to_compile([[a], [b, c]], set(), limit=4) == ([a, b, c], [True, True, False])
    assert next_to_compile([[], []], set(), limit=4) == ([], [])


@pytest.fixture
def interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("triton")
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def test_a_worker_runs_the_version_once_with_the_knob_values(interpreter: None) -> None:
    dims = {"rows": 4, "hidden": 256}
    # in a fresh process, as in the warmer (this one's `kernels` package may be a test copy)
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        args = (str(REPO), "add_rmsnorm", "triton_v2", dims)
        good = pool.submit(compile_once, *args, {"num_warps": 2}, "cpu").result()
        bad = pool.submit(compile_once, *args, {"num_warps": 3}, "cpu").result()
    assert good[:2] == (True, "") and good[2] >= 0
    assert not bad[0] and "num_warps" in bad[1]  # a refused value is reported, not raised


def test_the_warmer_compiles_in_worker_processes_and_each_configuration_once(
    interpreter: None,
) -> None:
    dims = {"rows": 4, "hidden": 256}
    with CompileWarmer(str(REPO), "add_rmsnorm", "triton_v2", dims, 2, device="cpu") as warmer:
        assert warmer.warm([{"num_warps": 2}, {"num_warps": 8}, {"num_warps": 2}]) == 2
        assert warmer.warm([{"num_warps": 8}]) == 0  # done already
        assert warmer.warm([{"num_warps": 3}]) == 1  # refused in the worker: counted failed
        # a guess still compiling when its time is up is stopped, workers and all
        assert warmer.warm([{"num_warps": 4}], time.monotonic(), sure=[False]) == 0
        assert warmer._pool is None and "stopped before they compiled" in warmer.stats.skipped[0]
        assert warmer.warm([{"num_warps": 1}]) == 1  # fresh workers for the next round
    stats = warmer.stats.as_dict()
    assert stats["configs"] == 4 and stats["failed_in_worker"] == 1 and stats["batches"] == 4
    assert json.dumps(stats)  # goes into the results file as it is


def test_the_command_refuses_a_negative_or_oversized_worker_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kbopt.cli import main

    root = _project(tmp_path)
    argv = ["--root", str(root), "ablate", "mla_decode", "--backend", "fake", "--trials", "3"]
    assert main([*argv, "--compile-workers", "-1"]) != 0
    assert "--compile-workers must be 0 or more" in capsys.readouterr().err
    assert main([*argv, "--compile-workers", "100000"]) != 0
    assert "use at most one per core" in capsys.readouterr().err
    # the fake backend compiles nothing: no workers, and the results say so
    out = tmp_path / "a.json"
    assert main([*argv, "--from", "triton_v2", "--out", str(out), "--json"]) == 0
    assert json.loads(out.read_text())["compiled_ahead"] is None


def test_a_worker_keeps_the_inputs_it_made_when_they_are_small_enough(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torch

    from kbopt.bench import warm_compile

    made: list[int] = []

    def make() -> tuple[Any, ...]:
        made.append(1)
        return (torch.zeros(256), 3)

    monkeypatch.setattr(warm_compile, "_worker_inputs", {})
    first = warm_compile.kept_inputs(("k", 0), make)
    assert warm_compile.kept_inputs(("k", 0), make) is first and made == [1]
    warm_compile.kept_inputs(("k", 1), make)  # the other input maker: its own inputs
    assert made == [1, 1]
    monkeypatch.setattr(warm_compile, "KEEP_INPUTS_BYTES", 1023)  # 256 fp32 are 1024 bytes
    monkeypatch.setattr(warm_compile, "_worker_inputs", {})
    warm_compile.kept_inputs(("k", 0), make)
    warm_compile.kept_inputs(("k", 0), make)
    assert made == [1, 1, 1, 1]  # over the limit: made anew each time, never kept


def test_stopping_the_workers_stops_the_compilers_they_started(tmp_path: Path) -> None:
    import os

    # A worker busy in a child process (as Triton's ptxas is), stopped by `close`: the child
    # must not outlive it (orphaned assemblers once kept a run's output open for minutes).
    pid_file = tmp_path / "child.pid"
    warmer = CompileWarmer(str(REPO), "add_rmsnorm", "triton_v2", {}, 1, device="cpu")
    pool = warmer._workers()
    pool.apply_async(os.system, (f"sleep 300 & echo $! > {pid_file}; wait",))
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        time.sleep(0.05)
    child = int(pid_file.read_text())
    os.kill(child, 0)  # running
    warmer.close()
    for _ in range(100):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.kill(child, 9)
        pytest.fail("the worker's child process outlived close()")


def _torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


def test_workers_share_the_cores_instead_of_each_taking_them_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Eight workers whose torch each ran a thread per core would run eight times as many
    threads as cores while they make a trial's inputs on the host."""
    from kbopt.bench import warm_compile

    monkeypatch.setattr(warm_compile.os, "cpu_count", lambda: 16)
    assert warm_compile.worker_threads(8) == 2
    assert warm_compile.worker_threads(32) == 1
    assert warm_compile.worker_threads(1) == 16
    ctx = multiprocessing.get_context("spawn")
    # 3: no machine's default here (one per physical core, or the environment's)
    with ctx.Pool(1, initializer=warm_compile._init_worker, initargs=(3,)) as pool:
        assert pool.apply(_torch_threads) == 3
