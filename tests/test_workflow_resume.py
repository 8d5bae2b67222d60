"""Kill the cycle with SIGKILL in the middle of a change, resume it, get the same result."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from workflow_fixtures import (
    FASTER_STEP,
    IN_PLACE_REGRESSION,
    make_project,
    slower_copy_step,
    toy_configs,
    version_source,
)

from kbopt.bench.backend import FakeBackend
from kbopt.store import Store
from kbopt.workflow import cycle
from kbopt.workflow.demo import HELPER
from kbopt.workflow.designers import ScriptedDesigner
from kbopt.workflow.record import AttemptStatus, State, load

STEPS = [FASTER_STEP, IN_PLACE_REGRESSION, slower_copy_step()]


def _args(root: Path, plan: Path) -> list[str]:
    return [
        "--root", str(root), "cycle", "toy", "--target", "pct_of_floor>=90", "--from", "toy_v1",
        "--designer", f"scripted:{plan}", "--backend", "fake", "--run-id", "k1",
    ]  # fmt: skip


def _state(record_path: Path) -> dict[str, object] | None:
    try:
        return json.loads(record_path.read_text())  # type: ignore[no-any-return]
    except (OSError, ValueError):
        return None


def test_sigkill_mid_change_then_resume(tmp_path: Path) -> None:
    # The same run without interruption, for comparison.
    ref_root = tmp_path / "ref"
    ref_plan = make_project(ref_root, STEPS)
    ref = cycle.start(
        ref_root, kernel="toy", target="pct_of_floor>=90", start_version="toy_v1",
        backend=FakeBackend(ref_root), designer=ScriptedDesigner.from_file(ref_plan),
        designer_spec="scripted", configs=toy_configs(ref_root), store=Store(ref_root), run_id="k1",
    ).run()  # fmt: skip

    root = tmp_path / "crash"
    plan = make_project(root, STEPS)
    helper = root / "kernels" / "toy" / "helper.py"  # edited in place by attempt 2
    original = helper.read_bytes()
    record_path = root / "runs" / "k1" / "record.json"
    env = {**os.environ, "KBOPT_FAKE_DELAY_S": "0.1", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kbopt", *_args(root, plan)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    killed_in: str | None = None
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            data = _state(record_path)
            attempts = data.get("attempts", []) if data else []
            # Kill while attempt 2's in-place edit is on disk and being verified.
            if (
                data
                and data["state"] == "VERIFY"
                and len(attempts) == 2
                and helper.read_bytes() != original
            ):  # type: ignore[arg-type]
                proc.send_signal(signal.SIGKILL)
                killed_in = str(data["state"])
                break
            time.sleep(0.02)
    finally:
        if proc.poll() is None and killed_in is None:
            proc.kill()
        proc.wait(timeout=30)
    assert killed_in == "VERIFY", "the run ended before it could be killed mid-change"
    assert proc.returncode == -signal.SIGKILL
    assert helper.read_bytes() != original  # the crash left the half-verified change on disk

    resumed = cycle.resume(
        root, "k1", backend=FakeBackend(root), designer=ScriptedDesigner.from_file(plan),
        store=Store(root),
    ).run()  # fmt: skip
    assert resumed.state is State.DONE
    assert helper.read_bytes() == original == HELPER.encode()
    v2 = root / "kernels" / "toy" / "toy_v2.py"
    assert v2.read_text() == version_source("toy_v2", 200.0, 1600.0)
    assert not (root / "kernels" / "toy" / "toy_v3.py").exists()
    assert [a.status for a in resumed.attempts] == [a.status for a in ref.attempts]
    assert [a.status for a in resumed.attempts] == [
        AttemptStatus.APPLIED, AttemptStatus.ROLLED_BACK, AttemptStatus.ROLLED_BACK,
    ]  # fmt: skip
    assert resumed.current_version == ref.current_version == "toy_v2"
    assert [a.changes_pct for a in resumed.attempts] == [a.changes_pct for a in ref.attempts]
    assert [(x.action, x.entry) for x in resumed.learned] == [
        (x.action, x.entry) for x in ref.learned
    ]
    events = [e.message for e in load(root / "runs" / "k1").events]
    assert any(m.startswith("resumed by pid") for m in events)
    # the fake backend's figures never become evidence, interrupted or not
    assert all(x.action == "skipped" for x in resumed.learned)
    entry = Store(root).get("split-kv-decode")
    assert not any("kbopt cycle run k1" in b.source for b in entry.evidence)
