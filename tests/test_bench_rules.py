"""Bottleneck rules, trial matrix with OOM backoff, and the tuning budget guard."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from kbopt.bench.backend import FakeBackend
from kbopt.bench.classify import BUSY_PCT, classify
from kbopt.bench.trials import (
    TrialConfig,
    default_matrix,
    parse_config,
    run_with_backoff,
    stress_from_devlog,
    trial_matrix,
)
from kbopt.bench.tuning import (
    MAX_CONFIGS,
    PruneRule,
    TuneBudget,
    TuneSpace,
    parse_param,
    plan_autotune,
    tune,
)
from kbopt.cli import main
from kbopt.errors import KbError
from kbopt.kernel import load_spec
from kbopt.vocab import Bottleneck

REPO = __import__("pathlib").Path(__file__).resolve().parent.parent
MLA = load_spec("mla_decode", REPO)
DEFAULT_MATRIX = default_matrix(MLA)


@pytest.mark.parametrize(
    "metrics, expected, rule",
    [
        ({"dram_throughput_pct": 85, "sm_throughput_pct": 30}, Bottleneck.MEMORY, "M1"),
        ({"dram_throughput_pct": 30, "tensor_core_util_pct": 75}, Bottleneck.COMPUTE, "C1"),
        ({"dram_throughput_pct": 30, "sm_throughput_pct": 20}, Bottleneck.LATENCY, "L1"),
        ({"dram_throughput_pct": BUSY_PCT, "sm_throughput_pct": BUSY_PCT}, Bottleneck.MEMORY, "M1"),
        ({}, Bottleneck.LATENCY, "L1"),
    ],
)
def test_rules(metrics: dict[str, float], expected: Bottleneck, rule: str) -> None:
    c = classify(metrics, from_counters=True)
    assert (c.bottleneck, c.rule) == (expected, rule)
    assert c.root_cause.count(". ") >= 1  # two sentences


def test_secondary_signals_and_timing_wording() -> None:
    c = classify({"dram_throughput_pct": 20, "ctas_per_sm": 0.48}, from_counters=False)
    assert "estimated from timing" in c.root_cause
    assert c.key_issue == "grid smaller than the GPU"
    spill = classify({"dram_throughput_pct": 20, "local_memory_bytes": 4096}, from_counters=True)
    assert spill.key_issue == "register spills"
    occ = classify(
        {"dram_throughput_pct": 20, "achieved_occupancy_pct": 10, "registers_per_thread": 200},
        from_counters=True,
    )
    assert occ.key_issue == "low occupancy" and "200 registers" in occ.root_cause


def test_configs_and_stress_evidence() -> None:
    assert [c.shape for c in DEFAULT_MATRIX] == ["b=32, s=1, t=4096", "b=32, s=16, t=4096"]
    assert parse_config("spec", MLA).dim("s") == 16  # an alias of the speculative trial
    assert parse_config("speculative", MLA).name == "speculative"
    assert parse_config("b=8, s=2, t=1024", MLA).shape == "b=8, s=2, t=1024"
    assert parse_config("8,2,1024", MLA).shape == "b=8, s=2, t=1024"
    assert parse_config("t=1024", MLA).shape == "b=32, s=1, t=1024"  # others from the first trial
    for bad, why in (
        ("32x1x4096", "gives 1 value"),
        ("b=8, s=2, t=x", "positive integer"),
        ("8,2", "3 dims"),
        ("b=8, q=2", "not a dimension"),
        ("b=0, s=1, t=1", "at least 1"),
        ("prefill", "not a trial"),
    ):
        with pytest.raises(KbError, match=why):
            parse_config(bad, MLA)
    with pytest.raises(KbError, match="reason"):
        trial_matrix(MLA, TrialConfig.of("stress", {"b": 64, "s": 1, "t": 32768}))
    devlog = "## Performance\n- Stress configuration: b=64, s=1, t=32768 -- ragged long contexts regress\n"
    stress = stress_from_devlog(devlog, MLA)
    assert stress is not None and stress.dim("t") == 32768
    assert len(trial_matrix(MLA, stress)) == 3
    assert stress_from_devlog("no request here", MLA) is None


def test_trial_config_round_trips_and_reads_old_records() -> None:
    cfg = DEFAULT_MATRIX[1]
    assert TrialConfig.from_dict(cfg.as_dict()) == cfg
    old = {"name": "spec", "b": 32, "s": 16, "t": 4096, "why": "speculative"}
    assert TrialConfig.from_dict(old).shape == "b=32, s=16, t=4096"


class FakeOom(RuntimeError):
    pass


def test_oom_backoff_halves_b_until_it_fits() -> None:
    seen: list[int] = []

    def run(cfg: TrialConfig) -> int:
        seen.append(cfg.dim("b"))
        if cfg.dim("b") > 8:
            raise FakeOom("CUDA out of memory. Tried to allocate 2.00 GiB")
        return cfg.dim("b") * 10

    result = run_with_backoff(run, DEFAULT_MATRIX[0], "b")
    assert seen == [32, 16, 8]
    assert result.value == 80 and result.config.dim("b") == 8 and result.reduced
    assert "b=32, b=16" in result.note and "ran at b=8" in result.note
    with pytest.raises(KbError, match="cannot back off"):
        run_with_backoff(run, DEFAULT_MATRIX[0], "rows")


def test_backoff_passes_other_errors_and_gives_up_at_one() -> None:
    with pytest.raises(ValueError):
        run_with_backoff(
            lambda cfg: (_ for _ in ()).throw(ValueError("bad")), DEFAULT_MATRIX[0], "b"
        )

    def always(cfg: TrialConfig) -> None:
        raise FakeOom("out of memory")

    with pytest.raises(KbError, match="even at b=1"):
        run_with_backoff(always, DEFAULT_MATRIX[0], "b")


def test_unbounded_sweeps_are_refused() -> None:
    with pytest.raises(KbError, match="unbounded"):
        parse_param("BLOCK_N=16..256")
    assert parse_param("BLOCK_N=16..128:x2") == ("BLOCK_N", [16, 32, 64, 128])
    huge = TuneSpace({f"p{i}": list(range(10)) for i in range(4)})  # 10,000 configurations
    with pytest.raises(KbError, match="mla_var6_plus_v3"):
        plan_autotune(huge, TuneBudget(), seconds_per_config=0.1)
    small = TuneSpace({"BLOCK_N": [32, 64, 128], "stages": [1, 2, 3]})
    with pytest.raises(KbError, match="exceed the budget"):
        plan_autotune(small, TuneBudget(seconds=60), seconds_per_config=10)
    with pytest.raises(KbError, match="one hour") as refused:
        plan_autotune(small, TuneBudget(seconds=7200), seconds_per_config=1)
    assert "(W3)" not in str(refused.value) and "--promising" in str(refused.value)
    with pytest.raises(KbError, match=r"manual tile configurations first, e\.g\. --manual"):
        tune(lambda params: 1.0, manual=[])
    assert (
        len(plan_autotune(small, TuneBudget(seconds=7200, promising="2x over v2"), 1).configs) == 9
    )
    assert MAX_CONFIGS < 10_000


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("num_warps=8..1:x3", "num_warps: the range 8..1 runs backwards; write 1..8:x3"),
        ("num_warps=a..b:x2", "num_warps: 'a..b:x2' is not a range of integers"),
        ("num_warps=1..8:xx", "num_warps: '1..8:xx' is not a range of integers"),
        (
            "num_warps=1..99999999999999:1",
            "num_warps: the range '1..99999999999999:1' gives 99,999,999,999,999 values, more "
            "than the 256 configurations a sweep may have",
        ),
    ],
)
def test_a_range_that_cannot_give_values_says_why(text: str, message: str) -> None:
    with pytest.raises(KbError) as err:
        parse_param(text)
    assert str(err.value).startswith(message)


def test_pruning_rules_cut_the_space() -> None:
    space = TuneSpace(
        {"BLOCK_N": [32, 64, 128], "stages": [1, 2, 3]},
        rules=[
            PruneRule(
                "big tiles need few stages", lambda p: int(p["BLOCK_N"]) * int(p["stages"]) <= 128
            )
        ],
    )
    assert space.raw_size == 9
    assert len(space.configs()) == 6  # 64x3 and 128x2, 128x3 are cut


def test_tune_runs_manual_first_and_stops_at_the_budget() -> None:
    ticks = itertools.count()
    clock = lambda: float(next(ticks)) * 10.0  # every clock read advances 10 s  # noqa: E731
    calls: list[str] = []

    def measure(p: dict[str, object]) -> float:
        calls.append(f"{p['BLOCK_N']}")
        if p["BLOCK_N"] == 256:
            raise RuntimeError("out of resources: shared memory")
        return 1000.0 / int(p["BLOCK_N"])  # type: ignore[call-overload]

    report = tune(
        measure,
        manual=[{"BLOCK_N": 64}, {"BLOCK_N": 256}],
        space=TuneSpace({"BLOCK_N": [16, 32, 64, 128, 256]}),
        budget=TuneBudget(seconds=100),
        seconds_per_config=1.0,
        clock=clock,
    )
    assert calls[:2] == ["64", "256"]
    assert report.rows[1].error.startswith("RuntimeError")
    assert report.stopped_by_budget
    assert len(report.rows) < 5
    assert report.best is not None
    with pytest.raises(KbError, match="manual"):
        tune(measure, manual=[])


def test_tune_records_a_configuration_that_raises_and_goes_on() -> None:
    """The real backend reports a version that raises when called as VersionFailed (a
    KbError, so the CLI prints one line): for tuning it is a data point, not the end."""
    from kbopt.bench.tuning import tune
    from kbopt.errors import VersionFailed

    def measure(p: dict[str, object]) -> float:
        if p["BLOCK_N"] == 256:
            raise VersionFailed("k v1 at n=1: the version raised OutOfResources: shared memory")
        return 10.0

    report = tune(measure, manual=[{"BLOCK_N": 256}, {"BLOCK_N": 64}])
    assert [r.duration_us for r in report.rows] == [None, 10.0]
    assert "OutOfResources" in report.rows[0].error


def test_tune_compiles_each_configuration_before_it_measures_it() -> None:
    """With a warm step: the manual tiles together first, then the autotune's configurations
    in measuring order, at most `warm_width` at a time, each before its measurement."""
    events: list[tuple[str, str]] = []

    def measure(p: dict[str, object]) -> float:
        events.append(("measure", str(p["BLOCK_N"])))
        return 1000.0 / int(p["BLOCK_N"])  # type: ignore[call-overload]

    batches: list[list[str]] = []

    def warm(configs: object, deadline: float) -> int:
        names = [str(p["BLOCK_N"]) for p in configs]  # type: ignore[attr-defined]
        batches.append(names)
        events.extend(("compile", n) for n in names)
        return len(names)

    report = tune(
        measure,
        manual=[{"BLOCK_N": 64}],
        space=TuneSpace({"BLOCK_N": [16, 32, 64, 128, 256]}),
        budget=TuneBudget(seconds=100),
        seconds_per_config=1.0,
        warm=warm,
        warm_width=2,
    )
    measured = [n for what, n in events if what == "measure"]
    assert measured == ["64", "16", "32", "128", "256"] and len(report.rows) == 5
    for n in measured:
        assert events.index(("compile", n)) < events.index(("measure", n))
    assert batches == [["64"], ["16", "32"], ["128", "256"]]  # 64 measured once only


def test_tune_tells_each_row_as_it_is_measured_and_measures_a_manual_tile_once() -> None:
    heard: list[tuple[str, int, int]] = []
    tune(
        lambda p: 10.0,
        manual=[{"BLOCK_N": 32}, {"BLOCK_N": 64}],
        space=TuneSpace({"BLOCK_N": [32, 64, 128]}),
        seconds_per_config=1.0,
        progress=lambda row, n, total: heard.append((row.phase, n, total)),
    )
    assert heard == [("manual", 1, 2), ("manual", 2, 2), ("autotune", 1, 1)]
    with pytest.raises(KbError, match="--manual BLOCK_N=32 is given twice"):
        tune(lambda p: 10.0, manual=[{"BLOCK_N": 32}, {"BLOCK_N": 64}, {"BLOCK_N": 32}])


def test_cli_tune_merges_a_repeated_param_and_checks_out_before_measuring(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["--root", str(REPO), "tune", "mla_decode", "triton_v7", "--backend", "fake"]
    argv += ["--manual", "block_n=32", "--param", "block_n=64,32", "--param", "block_n=16,64"]
    assert main([*argv, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["params"]["block_n"] for r in rows] == [32, 64, 16]  # both --param lists
    assert main(argv) == 0  # progress: a line per row as it is measured
    assert '[tune] autotune 2/2 {"block_n": 16}' in capsys.readouterr().err
    # --out a folder: refused before the first measurement, not after the last
    measured: list[object] = []
    monkeypatch.setattr(FakeBackend, "measure", lambda *a, **k: measured.append(a))
    assert main([*argv, "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"kbopt: error: --out {tmp_path}: is a folder; give the name of the file to write\n"
    )
    assert measured == []
    monkeypatch.undo()

    def full(self: Path, *args: object, **kwargs: object) -> int:
        raise OSError(28, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", full)
    assert main([*argv, "--out", str(tmp_path / "t.json")]) == 2
    out, err = capsys.readouterr()
    assert [r["params"]["block_n"] for r in json.loads(out)["rows"]] == [32, 64, 16]
    assert err.endswith(
        f"kbopt: error: --out {tmp_path / 't.json'}: cannot write (No space left on device); "
        "the results are on stdout instead\n"
    )
