"""The cycle on the fake backend: keep, restore on regression / correctness, OOM backoff, LEARN."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from workflow_fixtures import (
    FASTER_STEP,
    StandInBackend,
    make_project,
    slower_copy_step,
    toy_configs,
    version_source,
)

from kbopt.bench.backend import FakeBackend
from kbopt.cli import main
from kbopt.contracts.new_version import NewVersion
from kbopt.contracts.reports import OptimizationApplied, OptimizationSummary, Outcome, StepStatus
from kbopt.contracts.task import OptimizationTask
from kbopt.devlog import Devlog
from kbopt.lint import lint
from kbopt.store import Store
from kbopt.workflow import cycle
from kbopt.workflow.designers import HumanDesigner, ScriptedDesigner
from kbopt.workflow.record import AttemptStatus, State, load

REPO_DRAFT = Path(__file__).resolve().parent / "data" / "draft-wider-kv-tiles.md"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _run(root: Path, plan: Path, **kw: object) -> cycle.Cycle:
    backend = kw.pop("backend", None) or FakeBackend(root)
    c = cycle.start(
        root,
        kernel="toy",
        target=str(kw.pop("target", "pct_of_floor>=90")),
        start_version="toy_v1",
        backend=backend,  # type: ignore[arg-type]
        designer=ScriptedDesigner.from_file(plan),
        designer_spec=f"scripted:{plan}",
        configs=toy_configs(root),
        store=Store(root),
        run_id="t1",
        **kw,  # type: ignore[arg-type]
    )
    c.run()
    return c


def test_success_is_kept_and_oom_reduces_b(tmp_path: Path) -> None:
    plan = make_project(tmp_path, [FASTER_STEP])
    before_lint = {str(p) for p in lint(Store(tmp_path))}
    c = _run(tmp_path, plan)
    r = c.record
    assert r.state is State.DONE
    assert r.current_version == "toy_v2"
    (a,) = r.attempts
    assert a.status is AttemptStatus.APPLIED
    assert a.changes_pct == {"decode": -50.0, "spec": -50.0}
    # b=32 is out of memory for the toy (FAKE_MAX_BACKOFF = 16): measured at b=16
    assert r.baseline["decode"]["config"]["dims"]["b"] == 16
    assert "out of memory at b=32" in r.baseline["decode"]["note"]
    # contracts written along the way parse back
    assert (
        OptimizationTask.parse(a.task)
        .optimizations[0]
        .link.endswith("mla-pack-query-heads-per-cta.md")
    )
    assert NewVersion.parse(a.new_version_summary).correct
    assert OptimizationApplied.parse(a.report).outcome is Outcome.SUCCESS
    summary = OptimizationSummary.parse((c.folder / "summary.md").read_text())
    assert [s.status for s in summary.steps] == [StepStatus.APPLIED]
    assert "goal not achieved" in summary.result
    # devlog: person's text kept, tool blocks and one entry added
    devlog = Devlog.load(tmp_path / "docs" / "kernels" / "toy.md")
    assert "Notes a person wrote." in devlog.render()
    assert [e.heading.split(" -- ")[0] for e in devlog.entries()] == ["toy_v2"]
    assert "toy_v2" in devlog.current_best
    assert {p.version for p in devlog.performance_profiles()} == {"toy_v2"}
    # LEARN says what it would append, and writes nothing: fake figures are not evidence
    assert [(x.action, x.entry) for x in r.learned] == [("skipped", "mla-pack-query-heads-per-cta")]
    assert r.learned[0].detail.startswith("fake backend: append_evidence not written")
    entry = Store(tmp_path).get("mla-pack-query-heads-per-cta")
    assert not any("kbopt cycle run t1" in b.source for b in entry.evidence)
    assert {str(p) for p in lint(Store(tmp_path))} == before_lint
    assert r.lint_ok is (not before_lint)


def test_regression_restores_every_byte(tmp_path: Path) -> None:
    in_place = {
        "optimization": "split-kv-decode",
        "new_version": "toy_v2",
        "changes": ["splits 8 -> 64"],
        "edits": [
            {
                "path": "kernels/toy/toy_v2.py",
                "old": "FAKE_DURATION_US = {",
                "new": "# tuned\nFAKE_DURATION_US = {",
            },
            {
                "path": "kernels/toy/toy_v2.py",
                "old": '"decode": 200.0',
                "new": '"decode": 260.0',
            },
        ],
    }
    plan = make_project(tmp_path, [FASTER_STEP, in_place, slower_copy_step()])
    v2 = tmp_path / "kernels" / "toy" / "toy_v2.py"
    devlog = tmp_path / "docs" / "kernels" / "toy.md"
    c = _run(tmp_path, plan)
    r = c.record
    statuses = [a.status for a in r.attempts]
    assert statuses == [AttemptStatus.APPLIED, AttemptStatus.ROLLED_BACK, AttemptStatus.ROLLED_BACK]
    assert r.attempts[1].reason.startswith("regression: +30.0% at decode")
    assert r.attempts[1].restored == ["kernels/toy/toy_v2.py"]
    assert v2.read_text() == version_source("toy_v2", 200.0, 1600.0)  # byte-identical
    assert not (tmp_path / "kernels" / "toy" / "toy_v3.py").exists()  # created file removed
    assert r.current_version == "toy_v2"
    report = OptimizationApplied.parse(r.attempts[2].report)
    assert report.outcome is Outcome.ROLLED_BACK
    summary = OptimizationSummary.parse(r.summary)
    assert summary.steps[2].impact.startswith("Regression detected")
    assert summary.steps[2].status is StepStatus.ROLLED_BACK
    # the rollbacks are documented in the devlog after the restore
    headings = [e.heading for e in Devlog.load(devlog).entries()]
    assert [h.split(" -- ")[2].split(" (run")[0] for h in headings] == [
        "applied",
        "rolled back",
        "rolled back",
    ]
    # LEARN would record the slowdown on the optimization that caused it (not from fakes)
    assert any(
        x.entry == "split-kv-decode" and "append_evidence not written" in x.detail
        for x in r.learned
    )


def test_correctness_failure_restores(tmp_path: Path) -> None:
    wrong = {
        "optimization": "split-kv-decode",
        "new_version": "toy_v2",
        "changes": ["drop the rescale"],
        "edits": [
            {
                "path": "kernels/toy/toy_v2.py",
                "old": "FAKE_CORRECT = True",
                "new": "FAKE_CORRECT = False",
            },
            {"path": "kernels/toy/toy_v2.py", "old": '"decode": 200.0', "new": '"decode": 20.0'},
        ],
    }
    plan = make_project(tmp_path, [wrong])
    v2 = tmp_path / "kernels" / "toy" / "toy_v2.py"
    digest = _digest(v2)
    c = _run(tmp_path, plan)
    (a,) = c.record.attempts
    assert a.status is AttemptStatus.ROLLED_BACK
    assert a.reason.startswith("correctness")
    assert _digest(v2) == digest
    assert c.record.current_version == "toy_v1"
    assert [x.action for x in c.record.learned] == ["skipped"]  # a bug is not catalog knowledge


def test_target_met_stops_early(tmp_path: Path) -> None:
    plan = make_project(tmp_path, [FASTER_STEP, slower_copy_step()])
    c = _run(tmp_path, plan, target="duration_us<=1000")
    assert c.record.target_met and c.record.stop_reason == "target met"
    assert len(c.record.attempts) == 1


def test_human_designer_pauses_and_resumes(tmp_path: Path) -> None:
    make_project(tmp_path, [])
    store = Store(tmp_path)
    c = cycle.start(
        tmp_path,
        kernel="toy",
        target="pct_of_floor>=90",
        start_version="toy_v1",
        backend=FakeBackend(tmp_path),
        designer=HumanDesigner("triton"),
        designer_spec="human:triton",
        configs=toy_configs(tmp_path),
        store=store,
        run_id="h1",
        max_iterations=1,
    )
    rec = c.run()
    assert rec.state is State.DESIGN and rec.attempts[0].status is AttemptStatus.WAITING
    task = OptimizationTask.parse((c.folder / "task-1.md").read_text().split("<!--")[0])
    # the person implements the change as a new file and answers with the contract
    (tmp_path / "kernels" / "toy" / f"{task.new_version}.py").write_text(
        version_source(task.new_version, 300.0, 2400.0)
    )
    answer = NewVersion(
        kernel="toy",
        version=task.new_version,
        changes=["by hand"],
        created=[f"kernels/toy/{task.new_version}.py"],
        correct=True,
        devlog_entry="docs/kernels/toy.md",
    )
    (c.folder / "new-version-1.md").write_text(answer.render())
    again = cycle.resume(
        tmp_path, "h1", backend=FakeBackend(tmp_path), designer=HumanDesigner("triton"), store=store
    ).run()
    assert again.state is State.DONE
    assert again.current_version == task.new_version
    assert load(c.folder).attempts[0].status is AttemptStatus.APPLIED


def test_cli_cycle_and_profile_on_the_fake(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = make_project(tmp_path, [FASTER_STEP])
    code = main(
        [
            "--root",
            str(tmp_path),
            "cycle",
            "toy",
            "--target",
            "pct_of_floor>=90",
            "--from",
            "toy_v1",
            "--designer",
            f"scripted:{plan}",
            "--backend",
            "fake",
            "--run-id",
            "cli1",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("## Optimization Summary")
    code = main(
        [
            "--root",
            str(tmp_path),
            "profile",
            "toy",
            "toy_v2",
            "--config",
            "spec",
            "--backend",
            "fake",
            "--json",
        ]
    )
    assert code == 0
    assert '"rule": "L1"' in capsys.readouterr().out
    # an unbounded sweep is refused before anything runs (exit 2, clean message)
    code = main(
        [
            "--root",
            str(tmp_path),
            "tune",
            "toy",
            "toy_v2",
            "--backend",
            "fake",
            "--manual",
            "BLOCK_N=64",
            "--param",
            "BLOCK_N=16..256",
        ]
    )
    assert code == 2
    assert "unbounded" in capsys.readouterr().err


def test_learn_files_a_confirmed_draft_and_skips_an_unconfirmed_one(tmp_path: Path) -> None:
    draft = REPO_DRAFT.read_text()
    (tmp_path / "drafts").mkdir(parents=True)
    (tmp_path / "drafts" / "good.md").write_text(draft)
    (tmp_path / "drafts" / "bad.md").write_text(
        draft.replace("name: wider-kv-tiles-fewer-rescales", "name: unconfirmed-idea")
    )
    slower = {**slower_copy_step("some-free-name"), "learn_draft": "drafts/bad.md"}
    plan = make_project(tmp_path, [{**FASTER_STEP, "learn_draft": "drafts/good.md"}, slower])
    before_lint = {str(p) for p in lint(Store(tmp_path))}
    r = _run(tmp_path, plan, backend=StandInBackend(tmp_path)).record
    assert [(x.action, x.entry) for x in r.learned] == [
        ("add_optimization", "wider-kv-tiles-fewer-rescales"),
        ("skipped", "unconfirmed-idea"),
    ]
    store = Store(tmp_path)
    entry = store.get("wider-kv-tiles-fewer-rescales")
    assert (
        store.find(entry.name)
        == tmp_path / "docs/knowledge/optimizations/wider-kv-tiles-fewer-rescales.md"
    )
    (block,) = entry.evidence
    assert block.source_type.value == "local experiment" and block.device == "test-gpu"
    assert [row.change for row in block.rows] == ["-50.0%", "-50.0%"]
    assert (
        "wider-kv-tiles-fewer-rescales"
        in (tmp_path / "catalog" / "optimization-catalog.md").read_text()
    )
    assert {str(p) for p in lint(store)} == before_lint


def test_the_cpu_demo_runs_every_outcome(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kbopt.workflow.demo import main as demo

    assert demo([str(tmp_path / "demo")]) == 0
    summary = OptimizationSummary.parse(capsys.readouterr().out)
    assert [s.status for s in summary.steps] == [
        StepStatus.APPLIED,
        StepStatus.ROLLED_BACK,
        StepStatus.ROLLED_BACK,
        StepStatus.ROLLED_BACK,
    ]
    assert summary.steps[3].impact.startswith("Correctness failure")
    assert demo([str(tmp_path / "demo")]) == 2  # refuses a non-empty folder


def test_learn_appends_real_figures_once_and_never_fake_ones(tmp_path: Path) -> None:
    from kbopt.workflow.learn import run_learn

    plan = make_project(tmp_path, [FASTER_STEP])
    r = _run(tmp_path, plan, backend=StandInBackend(tmp_path)).record
    assert [(x.action, x.entry) for x in r.learned] == [
        ("append_evidence", "mla-pack-query-heads-per-cta")
    ]
    store = Store(tmp_path)
    for attempt in r.attempts:  # a resumed LEARN runs again: the block is not appended twice
        attempt.learned = False
    run_learn(store, r, tmp_path)
    blocks = store.get("mla-pack-query-heads-per-cta").evidence
    assert sum("kbopt cycle run t1, attempt 1" in b.source for b in blocks) == 1
    # evidence with the fake backend's device is a lint error, wherever it comes from
    path = store.find("mla-pack-query-heads-per-cta")
    assert path is not None
    path.write_text(path.read_text().replace("Device: test-gpu", "Device: fake-gpu"))
    assert any("fake measurement backend" in str(p) for p in lint(Store(tmp_path)))


def _copy_step(new: str, base: str, before: tuple[float, float], after: tuple[float, float]):
    return {
        "optimization": "split-kv-decode",
        "new_version": new,
        "copy_from": base,
        "changes": [f"{base} -> {new}"],
        "edits": [
            {
                "path": f"kernels/toy/{new}.py",
                "old": f'{{"decode": {before[0]}, "spec": {before[1]}}}',
                "new": f'{{"decode": {after[0]}, "spec": {after[1]}}}',
            }
        ],
    }


def test_small_losses_in_a_row_are_judged_against_the_fastest_kept_version(
    tmp_path: Path,
) -> None:
    """toy_v3 is 4% slower than toy_v2 (kept: within the limit); toy_v4 is 4% slower than
    toy_v3 but 8.2% slower than toy_v2, the fastest the run kept: rolled back."""
    steps = [
        FASTER_STEP,
        _copy_step("toy_v3", "toy_v2", (200.0, 1600.0), (208.0, 1664.0)),
        _copy_step("toy_v4", "toy_v3", (208.0, 1664.0), (216.32, 1730.56)),
    ]
    plan = make_project(tmp_path, steps)
    r = _run(tmp_path, plan).record
    assert [a.status for a in r.attempts] == [
        AttemptStatus.APPLIED,
        AttemptStatus.APPLIED,
        AttemptStatus.ROLLED_BACK,
    ]
    assert r.attempts[2].changes_pct == {"decode": 4.0, "spec": 4.0}
    assert r.attempts[2].reason.startswith("regression: +8.2% at decode against the fastest")
    assert "(toy_v2, 100.0 us" in r.attempts[2].reason  # measured at b=16 (backoff)
    assert r.current_version == "toy_v3"
