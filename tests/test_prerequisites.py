"""Prerequisites are checks of what ran; the Specialist line names a specialist; reports
carry a Throughput row from the spec's work per call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from workflow_fixtures import (
    FASTER_STEP,
    StandInBackend,
    make_project,
    start_scripted,
    toy,
    toy_configs,
)

from kbopt.bench.backend import Measurement, measure_with_backoff
from kbopt.contracts.reports import OptimizationApplied, OptimizationSummary
from kbopt.store import Store
from kbopt.workflow import cycle
from kbopt.workflow.designers import ScriptedDesigner
from kbopt.workflow.prerequisites import check_prerequisites, device_sm, specialist_line


def _measure(root: Path, version: str, device: str, correct: bool = True) -> Measurement:
    m = measure_with_backoff(StandInBackend(root), toy(root), version, toy_configs(root)[0])
    m.device, m.correct = device, correct
    return m


def test_checks_pass_or_fail_on_what_was_measured(tmp_path: Path) -> None:
    make_project(tmp_path, [])
    h200 = _measure(tmp_path, "toy_v1", "NVIDIA H200")
    args = {"version": "toy_v1", "measurements": {"decode": h200}, "baseline_version": "toy_v1"}
    passed = {
        "ran": True,
        "passed": True,
        "files": ["tests/kernels/test_toy.py"],
        "detail": "3 passed",
    }
    ok = check_prerequisites(language="triton", baseline={"decode": h200}, tests=passed, **args)
    assert [c.done for c in ok] == [True, True, True]
    assert "NVIDIA H200 is SM90, triton needs SM80+" in ok[1].text
    assert "matched the reference at decode" in ok[0].text
    assert "its tests passed (tests/kernels/test_toy.py: 3 passed)" in ok[0].text
    # the kernel's tests decide the code check too
    failed = {**passed, "passed": False, "detail": "1 failed, 2 passed"}
    no_tests = {"ran": False, "passed": False, "detail": "toy has no test files"}
    for tests, words in ((failed, "its tests failed"), (no_tests, "toy has no test files")):
        code = check_prerequisites(
            language="triton", baseline={"decode": h200}, tests=tests, **args
        )[0]
        assert not code.done and words in code.text
    # cuTile / TileIR need Blackwell: an H200 fails the hardware check
    tile = check_prerequisites(language="tileir", baseline={}, **args)
    assert not tile[1].done and "needs SM100+" in tile[1].text
    assert not tile[2].done and "Baseline not measured" in tile[2].text
    wrong = _measure(tmp_path, "toy_v1", "NVIDIA B200", correct=False)
    bad = check_prerequisites(
        language="tileir",
        version="toy_v1",
        measurements={"decode": wrong},
        baseline={"decode": h200},
        baseline_version="toy_v1",
    )
    assert not bad[0].done and "differs from the reference at decode" in bad[0].text
    assert bad[1].done  # B200 is SM100
    unknown = _measure(tmp_path, "toy_v1", "test-gpu")
    assert not check_prerequisites(
        language="triton", baseline={}, **{**args, "measurements": {"d": unknown}}
    )[1].done
    assert (device_sm("NVIDIA GB200"), device_sm("NVIDIA A100-SXM4-80GB")) == (100, 80)


def test_specialist_line_names_the_specialist_and_who_acted() -> None:
    assert specialist_line("cute-dsl", "scripted").startswith("kernel-cute-specialist (")
    assert specialist_line("tileir", "kernel-tileir-specialist") == "kernel-tileir-specialist"


def test_fake_run_reports_unchecked_prerequisites_and_throughput(tmp_path: Path) -> None:
    plan = make_project(tmp_path, [FASTER_STEP])
    c = start_scripted(tmp_path, plan, run_id="pre1")
    c.run()
    report = OptimizationApplied.parse(c.record.attempts[0].report)
    assert [ch.done for ch in report.prerequisites] == [False, False, False]
    assert all(
        "fake backend" in ch.text or "no real device" in ch.text for ch in report.prerequisites
    )
    assert report.specialist.startswith("kernel-triton-specialist")
    rows = {r.metric: r for r in report.validation}
    spec = toy(tmp_path)
    record = json.loads((tmp_path / "runs/pre1/record.json").read_text())
    before = Measurement.from_dict(record["baseline"]["decode"])
    dims, before_us = before.config.dims_dict, before.duration_us  # as measured (after backoff)
    flops, moved = spec.flops(dims), spec.bytes_moved(dims)
    unit = "TFLOP/s" if flops / moved >= cycle.THROUGHPUT_RIDGE else "GB/s"
    expected = (flops / before_us / 1e6) if unit == "TFLOP/s" else (moved / before_us / 1e3)
    assert rows["Throughput (decode)"].before == f"{expected:.3g} {unit}"
    summary = OptimizationSummary.parse(c.record.summary)
    assert any(r.metric.startswith("Throughput") for r in summary.cumulative)


def test_a_report_needs_its_checks() -> None:
    with pytest.raises(ValueError):
        OptimizationApplied(name="x", specialist="s", changes="c", outcome="SUCCESS")  # type: ignore[call-arg]


def test_verify_runs_the_kernels_own_tests(tmp_path: Path) -> None:
    from kbopt.workflow.kernel_tests import kernel_test_files, run_kernel_tests

    make_project(tmp_path, [])
    spec = toy(tmp_path)
    assert run_kernel_tests(spec, tmp_path)["detail"] == "toy has no test files"
    test_file = tmp_path / "tests" / "kernels" / "test_toy.py"
    test_file.parent.mkdir(parents=True)
    test_file.write_text("def test_ok():\n    assert True\n")
    assert kernel_test_files(spec, tmp_path) == [test_file]
    good = run_kernel_tests(spec, tmp_path)
    assert good["ran"] and good["passed"] and "1 passed" in good["detail"]
    test_file.write_text("def test_broken():\n    assert 1 == 2\n")
    bad = run_kernel_tests(spec, tmp_path)
    assert bad["ran"] and not bad["passed"] and "1 failed" in bad["detail"]


def test_import_problems_name_the_file_and_line(tmp_path: Path) -> None:
    from kbopt.workflow.kernel_tests import import_problems

    make_project(tmp_path, [])
    kdir = tmp_path / "kernels" / "toy"
    good, broken, raises, gpu_only = (kdir / f"{n}.py" for n in ("ok", "broken", "raises", "gpu"))
    good.write_text("from kernels.toy import helper\n\nX = helper.KV_SPLITS\n")
    broken.write_text("X = (1,\n")
    raises.write_text("X = 1\nY = undefined_name\n")
    gpu_only.write_text("import no_such_gpu_library\n")
    assert import_problems([good], tmp_path) == []
    problems = import_problems([good, broken, raises, gpu_only], tmp_path)
    assert [p.split(": ")[0] for p in problems] == [
        "kernels/toy/broken.py:1",
        "kernels/toy/raises.py:2",
        "kernels/toy/gpu.py:1",
    ]
    assert "NameError: name 'undefined_name' is not defined" in problems[1]
    # the fake backend runs nothing: a library this machine lacks says nothing of the file
    assert import_problems([gpu_only], tmp_path, allow_missing_packages=True) == []
    assert not list(kdir.rglob("__pycache__"))  # nothing cached in the kernel's folder


def test_a_change_that_breaks_the_kernels_tests_is_rolled_back(tmp_path: Path) -> None:
    plan = make_project(tmp_path, [FASTER_STEP])
    test_file = tmp_path / "tests" / "kernels" / "test_toy.py"
    test_file.parent.mkdir(parents=True)
    test_file.write_text("def test_new_version_breaks_an_invariant():\n    assert False\n")
    c = cycle.start(
        tmp_path,
        kernel="toy",
        target="pct_of_floor>=90",
        start_version="toy_v1",
        backend=StandInBackend(tmp_path),  # runs VERIFY as a real backend would
        designer=ScriptedDesigner.from_file(plan),
        designer_spec=f"scripted:{plan}",
        configs=toy_configs(tmp_path),
        store=Store(tmp_path),
        run_id="tests1",
    )
    c.run()
    attempt = c.record.attempts[0]
    assert attempt.tests["ran"] and not attempt.tests["passed"]
    assert attempt.reason.startswith("correctness: the kernel's tests failed")
    assert attempt.status.value == "rolled_back"
    report = OptimizationApplied.parse(attempt.report)
    assert not report.prerequisites[0].done and "its tests failed" in report.prerequisites[0].text
