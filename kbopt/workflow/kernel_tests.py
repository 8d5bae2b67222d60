"""The kernel's own tests, run in VERIFY: part of the code-compatibility prerequisite.

A kernel's tests live where `kbopt kernel new` puts them, `tests/kernels/test_<name>.py`
under the project, or beside the spec (`test_*.py` or `tests/test_*.py` in the kernel's
folder).  VERIFY runs them once per attempt, after the new version was measured, in a
separate pytest process with a time limit: a change that breaks them is rolled back like a
wrong result.  The fake backend runs nothing, so with it the tests are not run either
(`KBOPT_CYCLE_TESTS=0` skips them on a real backend too).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from kbopt.kernel import KernelSpec

TESTS_ENV = "KBOPT_CYCLE_TESTS"
TIMEOUT_S = float(os.environ.get("KBOPT_CYCLE_TESTS_TIMEOUT_S", "900"))


def kernel_test_files(spec: KernelSpec, root: Path) -> list[Path]:
    """The test files of one kernel, in a stable order (may be empty)."""
    found: list[Path] = []
    project = Path(root) / "tests" / "kernels" / f"test_{spec.name}.py"
    if project.is_file():
        found.append(project)
    folder = spec.folder
    for pattern in ("test_*.py", "tests/test_*.py"):
        found += sorted(p for p in folder.glob(pattern) if p.is_file())
    return found


def run_kernel_tests(
    spec: KernelSpec, root: Path, *, timeout_s: float = TIMEOUT_S
) -> dict[str, Any]:
    """Run the kernel's tests; what was run and how it ended (never raises)."""
    if os.environ.get(TESTS_ENV, "").strip().lower() in ("0", "off", "no", "false"):
        return {"ran": False, "passed": False, "detail": f"not run ({TESTS_ENV}=0)"}
    files = kernel_test_files(spec, root)
    if not files:
        return {"ran": False, "passed": False, "detail": f"{spec.name} has no test files"}
    shown = [os.path.relpath(p, root) for p in files]
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *shown]
    try:
        proc = subprocess.run(
            command,
            cwd=root,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {
            "ran": True,
            "passed": False,
            "files": shown,
            "detail": f"the tests ran past {timeout_s:.0f} s",
        }
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
    summary = lines[-1].strip("= ") if lines else f"pytest exited {proc.returncode}"
    # Exit 5: every test was skipped or none collected - nothing checked the new version.
    return {
        "ran": True,
        "passed": proc.returncode == 0,
        "files": shown,
        "detail": summary,
    }
