"""The cycle on the fake backend: keep, restore on regression / correctness, OOM backoff, LEARN."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from workflow_fixtures import (
    FASTER_STEP,
    StandInBackend,
    make_project,
    slower_copy_step,
    start_scripted,
    toy_configs,
    version_source,
)

from kbopt.bench.backend import FakeBackend
from kbopt.cli import main
from kbopt.contracts.new_version import NewVersion
from kbopt.contracts.reports import OptimizationApplied, OptimizationSummary, Outcome, StepStatus
from kbopt.contracts.task import OptimizationTask
from kbopt.devlog import Devlog
from kbopt.errors import KbError
from kbopt.lint import lint
from kbopt.store import Store
from kbopt.workflow import cycle
from kbopt.workflow.demo import DEVLOG, HELPER
from kbopt.workflow.designers import HumanDesigner, ScriptedDesigner, make_designer
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
    # the fake backend's stand-in figures stay out of the devlog
    assert (tmp_path / "docs" / "kernels" / "toy.md").read_text() == DEVLOG
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
        "new_version": "toy_v3",
        "copy_from": "toy_v2",
        "changes": ["splits 8 -> 64"],
        "edits": [
            {"path": "helper.py", "old": "KV_SPLITS = 8", "new": "# tuned\nKV_SPLITS = 64"},
            {
                "path": "kernels/toy/toy_v3.py",
                "old": '"decode": 200.0',
                "new": '"decode": 260.0',
            },
        ],
    }
    plan = make_project(tmp_path, [FASTER_STEP, in_place, slower_copy_step()])
    v2 = tmp_path / "kernels" / "toy" / "toy_v2.py"
    helper = tmp_path / "kernels" / "toy" / "helper.py"
    devlog = tmp_path / "docs" / "kernels" / "toy.md"
    c = _run(tmp_path, plan)
    r = c.record
    statuses = [a.status for a in r.attempts]
    assert statuses == [AttemptStatus.APPLIED, AttemptStatus.ROLLED_BACK, AttemptStatus.ROLLED_BACK]
    assert r.attempts[1].reason.startswith("regression: +30.0% at decode")
    assert r.attempts[1].restored == ["kernels/toy/helper.py", "kernels/toy/toy_v3.py"]
    assert helper.read_text() == HELPER  # the helper edited in place: byte-identical
    assert v2.read_text() == version_source("toy_v2", 200.0, 1600.0)
    assert not (tmp_path / "kernels" / "toy" / "toy_v3.py").exists()  # created file removed
    assert r.current_version == "toy_v2"
    report = OptimizationApplied.parse(r.attempts[2].report)
    assert report.outcome is Outcome.ROLLED_BACK
    summary = OptimizationSummary.parse(r.summary)
    assert summary.steps[2].impact.startswith("Regression detected")
    assert summary.steps[2].status is StepStatus.ROLLED_BACK
    assert devlog.read_text() == DEVLOG  # fake figures: no devlog entry
    # LEARN would record the slowdown on the optimization that caused it (not from fakes)
    assert any(
        x.entry == "split-kv-decode" and "append_evidence not written" in x.detail
        for x in r.learned
    )


def test_correctness_failure_restores(tmp_path: Path) -> None:
    wrong = {
        "optimization": "split-kv-decode",
        "new_version": "toy_v3",
        "copy_from": "toy_v2",
        "changes": ["drop the rescale"],
        "edits": [
            {
                "path": "kernels/toy/toy_v3.py",
                "old": "FAKE_CORRECT = True",
                "new": "FAKE_CORRECT = False",
            },
            {"path": "kernels/toy/toy_v3.py", "old": '"decode": 200.0', "new": '"decode": 20.0'},
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
    assert not (tmp_path / "kernels" / "toy" / "toy_v3.py").exists()
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


def test_the_devlog_takes_measured_figures_never_the_fakes(tmp_path: Path) -> None:
    steps = [FASTER_STEP, slower_copy_step()]
    real = tmp_path / "real"
    _run(real, make_project(real, steps), backend=StandInBackend(real))
    devlog = Devlog.load(real / "docs" / "kernels" / "toy.md")
    assert "Notes a person wrote." in devlog.render()
    headings = [e.heading for e in devlog.entries()]
    assert [h.split(" -- ")[2].split(" (run")[0] for h in headings] == ["applied", "rolled back"]
    assert "toy_v2" in devlog.current_best and "test-gpu" in devlog.current_best
    assert {p.version for p in devlog.performance_profiles()} == {"toy_v2"}
    # The same run on the fake backend: its record keeps every figure, the devlog none
    # (a dry run once replaced a kernel's measured best and performance blocks).
    fake = tmp_path / "fake"
    r = _run(fake, make_project(fake, steps)).record
    assert (fake / "docs" / "kernels" / "toy.md").read_text() == DEVLOG
    assert r.baseline and r.attempts[0].measurements and r.attempts[0].profile
    assert any("the devlog is left as it is" in e.message for e in r.events)


def _copy_of(base: str, new: str, edits: list[dict[str, str]]) -> dict[str, object]:
    return {
        "optimization": "split-kv-decode",
        "new_version": new,
        "copy_from": base,
        "changes": [f"{base} -> {new}"],
        "edits": edits,
    }


def test_a_step_never_writes_its_starting_version(tmp_path: Path) -> None:
    breaks_start = {"path": "toy_v1.py", "old": "FAKE_CORRECT = True", "new": "FAKE_CORRECT = ("}
    plan = make_project(tmp_path, [_copy_of("toy_v1", "toy_v3", [breaks_start])])
    kdir = tmp_path / "kernels" / "toy"
    before = {p.name: _digest(p) for p in kdir.glob("*.py")}
    (a,) = _run(tmp_path, plan).record.attempts
    assert a.status is AttemptStatus.ROLLED_BACK
    assert a.reason == (
        "refused: scripted step 1 would write kernels/toy/toy_v1.py, the version the step "
        "starts from (toy_v1)"
    )
    assert {p.name: _digest(p) for p in kdir.glob("*.py")} == before  # nothing was written
    summary = OptimizationSummary.parse((tmp_path / "runs" / "t1" / "summary.md").read_text())
    assert summary.steps[0].impact.startswith("Refused")


def test_a_scripted_step_writes_nothing_the_cycle_does_not_back_up(tmp_path: Path) -> None:
    outside = {"path": "docs/kernels/toy.md", "old": "Notes a person", "new": "Notes a step"}
    plan = make_project(tmp_path, [_copy_of("toy_v2", "toy_v3", [outside])])
    (a,) = _run(tmp_path, plan).record.attempts
    assert a.reason.startswith(
        "refused: scripted step 1 would write docs/kernels/toy.md, outside the kernel's folder"
    )
    assert (tmp_path / "docs" / "kernels" / "toy.md").read_text() == DEVLOG
    assert not (tmp_path / "kernels" / "toy" / "toy_v3.py").exists()


def test_an_existing_version_is_never_overwritten(tmp_path: Path) -> None:
    plan = make_project(tmp_path, [_copy_of("toy_v1", "toy_v2", [])])
    v2 = tmp_path / "kernels" / "toy" / "toy_v2.py"
    v2.write_text(v2.read_text() + "# my own work\n")
    digest = _digest(v2)
    r = _run(tmp_path, plan).record
    assert r.attempts[0].status is AttemptStatus.ROLLED_BACK
    assert "an existing version (toy_v2) this run did not write" in r.attempts[0].reason
    assert _digest(v2) == digest and r.current_version == "toy_v1"


def _human_step(tmp_path: Path, change: dict[str, str]) -> tuple[Path, cycle.Cycle]:
    """Pause a human-designed run at its first task, make `change` (file -> new text) and
    the new version a person would, answer with the contract, resume."""
    make_project(tmp_path, [])
    store = Store(tmp_path)
    kw = dict(backend=FakeBackend(tmp_path), designer=HumanDesigner("triton"), store=store)
    c = cycle.start(
        tmp_path,
        kernel="toy",
        target="pct_of_floor>=90",
        start_version="toy_v1",
        designer_spec="human:triton",
        configs=toy_configs(tmp_path),
        run_id="h1",
        max_iterations=1,
        **kw,  # type: ignore[arg-type]
    )
    c.run()
    task = OptimizationTask.parse((c.folder / "task-1.md").read_text().split("<!--")[0])
    kdir = tmp_path / "kernels" / "toy"
    (kdir / f"{task.new_version}.py").write_text(version_source(task.new_version, 300, 2400))
    for name, text in change.items():
        (kdir / name).write_text(text)
    answer = NewVersion(
        kernel="toy",
        version=task.new_version,
        changes=["by hand"],
        correct=True,
        devlog_entry="docs/kernels/toy.md",
    )
    (c.folder / "new-version-1.md").write_text(answer.render())
    again = cycle.resume(tmp_path, "h1", **kw)  # type: ignore[arg-type]
    again.run()
    return kdir / f"{task.new_version}.py", again


def test_verify_rolls_back_any_designer_that_wrote_its_starting_version(tmp_path: Path) -> None:
    start = tmp_path / "kernels" / "toy" / "toy_v1.py"
    new, c = _human_step(tmp_path, {"toy_v1.py": "FAKE_CORRECT = False\n"})
    (a,) = c.record.attempts
    assert a.status is AttemptStatus.ROLLED_BACK
    assert a.reason.startswith("refused: the step changed kernels/toy/toy_v1.py, the version")
    assert start.read_text() == version_source("toy_v1", 400.0, 3200.0)  # byte for byte
    assert not new.exists()


def test_verify_imports_every_file_the_step_touched(tmp_path: Path) -> None:
    helper = tmp_path / "kernels" / "toy" / "helper.py"
    new, c = _human_step(tmp_path, {"helper.py": "KV_SPLITS = (8\n"})
    (a,) = c.record.attempts
    assert a.status is AttemptStatus.ROLLED_BACK
    assert a.reason.startswith(
        "correctness: a file the step touched does not import: kernels/toy/helper.py:1: "
        "SyntaxError: '(' was never closed"
    )
    assert helper.read_text() == HELPER and not new.exists()  # the whole step rolled back
    assert not a.measurements  # refused before anything was measured


def test_a_plan_naming_no_catalog_entry_is_refused_when_loaded(tmp_path: Path) -> None:
    plan = make_project(tmp_path, [{**FASTER_STEP, "optimization": "no-such-entry"}])
    with pytest.raises(KbError, match=r"plan.json: step 1: no catalog entry 'no-such-entry'"):
        make_designer(f"scripted:{plan}", tmp_path)
    # a change no entry describes, named in words or carrying its draft entry, is fine
    free = {**FASTER_STEP, "optimization": "64 query rows per program"}
    drafted = {**FASTER_STEP, "optimization": "new-idea", "learn_draft": "drafts/new-idea.md"}
    plan.write_text(json.dumps({"steps": [free, drafted]}))
    designer = make_designer(f"scripted:{plan}", tmp_path)
    assert isinstance(designer, ScriptedDesigner) and len(designer.steps) == 2


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"steps": 5}', "plan.json: a designer plan is a JSON object"),
        ("[]", "plan.json: a designer plan is a JSON object"),
        ('{"steps": ["faster"]}', "plan.json: step 1 is not a JSON object"),
    ],
)
def test_a_plan_of_the_wrong_shape_says_the_shape(tmp_path: Path, text: str, fragment: str) -> None:
    plan = make_project(tmp_path, [FASTER_STEP])
    plan.write_text(text)
    with pytest.raises(KbError, match=re.escape(fragment)) as err:
        make_designer(f"scripted:{plan}", tmp_path)
    assert '"steps": [{"optimization"' in str(err.value)


def _cli(root: Path, *argv: str) -> int:
    return main(["--root", str(root), "cycle", "toy", *argv])


@pytest.mark.parametrize(
    ("target", "fragment"),
    [
        ("bogus>=90", "--target 'bogus>=90': unknown metric 'bogus'"),
        ("pct_of_floor>>90", "--target 'pct_of_floor>>90': not `metric op number`"),
        ("pct_of_floor>=abc", "--target 'pct_of_floor>=abc': not `metric op number`"),
    ],
)
def test_a_malformed_target_is_a_clean_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str, fragment: str
) -> None:
    plan = make_project(tmp_path, [FASTER_STEP])
    argv = ["--target", target, "--from", "toy_v1", "--designer", f"scripted:{plan}"]
    assert _cli(tmp_path, *argv, "--backend", "fake") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kbopt: error: {fragment}") and len(err.splitlines()) == 1
    assert _cli(tmp_path, *argv, "--backend", "fake", "--json") == 2
    (message,) = json.loads(capsys.readouterr().out)["error"]
    assert message.startswith(fragment)
    assert not (tmp_path / "runs").exists()


def test_flags_a_run_would_drop_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = make_project(tmp_path, [FASTER_STEP])
    new = ["--target", "pct_of_floor>=90", "--from", "toy_v1", "--designer", f"scripted:{plan}"]
    assert _cli(tmp_path, *new, "--backend", "fake", "--stress-reason", "because") == 2
    assert "--stress-reason explains a --stress configuration" in capsys.readouterr().err
    assert _cli(tmp_path, *new, "--backend", "fake", "--run-id", "s1") == 0
    capsys.readouterr()
    assert _cli(tmp_path, "--resume", "s1", "--target", "pct_of_floor>=10") == 2
    assert "drop --target" in capsys.readouterr().err
    assert _cli(tmp_path, "--resume", "s1", "--backend", "fake", "--max-iterations", "2") == 2
    assert "drop --max-iterations, --backend" in capsys.readouterr().err
    assert load(tmp_path / "runs" / "s1").target == "pct_of_floor>=90"


def test_resume_goes_on_with_the_run_s_own_designer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = make_project(tmp_path, [FASTER_STEP])
    start_scripted(tmp_path, plan, run_id="r1")  # stopped before its first step (killed)
    assert _cli(tmp_path, "--resume", "r1") == 0  # not the human designer's pause (exit 3)
    r = load(tmp_path / "runs" / "r1")
    assert r.designer == f"scripted:{plan}" and r.current_version == "toy_v2"
    assert "waiting for the human" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--from", "nosuch"], "toy has no version 'nosuch'"),
        (["--from", "toy_v1", "--counters", "require"], "hardware counters unavailable"),
        (
            ["--from", "toy_v1", "--target", "l2_hit_rate_pct>=90"],
            "--target 'l2_hit_rate_pct>=90': the fake backend does not measure l2_hit_rate_pct "
            "at decode, spec, so the target could never be judged",
        ),
    ],
)
def test_a_run_that_cannot_start_leaves_no_run_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
) -> None:
    plan = make_project(tmp_path, [FASTER_STEP])
    if "--target" not in argv:
        argv = [*argv, "--target", "pct_of_floor>=90"]
    assert _cli(tmp_path, *argv, "--designer", f"scripted:{plan}", "--backend", "fake") == 2
    assert f"kbopt: error: {fragment}" in capsys.readouterr().err
    assert list((tmp_path / "runs").iterdir()) == []  # nothing to resume: no stub left
    assert (tmp_path / "docs" / "kernels" / "toy.md").read_text() == DEVLOG


def test_runs_started_in_the_same_second_get_their_own_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kbopt.workflow import record

    plan = make_project(tmp_path, [FASTER_STEP])
    monkeypatch.setattr(record, "new_run_id", lambda kernel: f"20260101T000000Z-{kernel}")
    ids = [start_scripted(tmp_path, plan).record.run_id for _ in range(3)]
    assert ids == ["20260101T000000Z-toy", "20260101T000000Z-toy-2", "20260101T000000Z-toy-3"]


def test_require_target_makes_a_missed_target_a_failing_exit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A finished run exits 0 whether or not it met its target (its summary says which);
    --require-target turns a miss into exit 5, with one line naming the target."""
    plan = make_project(tmp_path, [FASTER_STEP])
    run = ["--from", "toy_v1", "--designer", f"scripted:{plan}", "--backend", "fake"]
    missed = ["--target", "pct_of_floor>=99", *run]
    assert _cli(tmp_path, *missed, "--run-id", "a") == 0
    assert not load(tmp_path / "runs" / "a").target_met
    capsys.readouterr()
    assert _cli(tmp_path, *missed, "--run-id", "b", "--require-target") == 5
    assert "kbopt cycle: target not met: pct_of_floor>=99" in capsys.readouterr().err
    assert _cli(tmp_path, *missed, "--run-id", "c", "--require-target", "--json") == 5
    assert json.loads(capsys.readouterr().out)["record"]["target_met"] is False
    met = ["--target", "pct_of_floor>=10", *run, "--run-id", "d", "--require-target"]
    assert _cli(tmp_path, *met) == 0
    assert load(tmp_path / "runs" / "d").target_met
