"""The kernel's own tests, run in VERIFY: part of the code-compatibility prerequisite.

A kernel's tests live where `kbopt kernel new` puts them, `tests/kernels/test_<name>.py`
under the project, or beside the spec (`test_*.py` or `tests/test_*.py` in the kernel's
folder).  VERIFY runs them once per attempt, after the new version was measured, in a
separate pytest process with a time limit: a change that breaks them is rolled back like a
wrong result.  The fake backend runs nothing, so with it the tests are not run either
(`KBOPT_CYCLE_TESTS=0` skips them on a real backend too).

Before it measures anything, VERIFY imports every Python file the step touched (the new
version, and any helper module it edited), in a fresh process: a file that no longer
imports rolls the whole step back, whatever the backend.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from kbopt.kernel import KernelSpec

TESTS_ENV = "KBOPT_CYCLE_TESTS"
TIMEOUT_S = float(os.environ.get("KBOPT_CYCLE_TESTS_TIMEOUT_S", "900"))
IMPORT_TIMEOUT_S = 300.0

# Run in a fresh interpreter: this process may hold an older copy of a module, and a
# module's top level may do anything.  Prints one JSON list of {path, error, line, missing}.
_IMPORTER = """
import importlib, json, sys, traceback
out = []
for path, module, import_root in json.loads(sys.argv[1]):
    try:
        with open(path, "rb") as f:
            compile(f.read(), path, "exec")
        if module:
            if import_root not in sys.path:
                sys.path.insert(0, import_root)
            importlib.import_module(module)
    except BaseException as exc:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
        line = getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None
        missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
        out.append({"path": path, "error": f"{type(exc).__name__}: {exc}",
                    "line": line or (frames[-1].lineno if frames else None), "missing": missing})
print(json.dumps(out))
"""


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


def _module_of(path: Path) -> tuple[str, str] | None:
    """(dotted module, import root) of a file inside a package (`kernels/k/helper.py` ->
    `kernels.k.helper`); None when it cannot be imported by name (compiled only)."""
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    if len(parts) < 2 or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts), str(folder)


def import_problems(
    files: list[Path], root: Path, *, allow_missing_packages: bool = False
) -> list[str]:
    """One line per file of `files` that does not import (`path:line: Error: ...`), from a
    fresh process; empty when all do.  With `allow_missing_packages`, a file that needs a
    package this machine lacks (a GPU library on a CPU) is not counted: the fake backend
    runs no code, so nothing here says the file is wrong."""
    if not files:
        return []
    jobs = []
    for path in files:
        found = _module_of(path)
        jobs.append([str(path), *(found or (None, None))])
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # no caches in the kernel folder
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _IMPORTER, json.dumps(jobs)],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=IMPORT_TIMEOUT_S,
            check=False,
            env=env,
        )
        results = json.loads(proc.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        shown = ", ".join(os.path.relpath(p, root) for p in files)
        return [f"importing {shown} ran past {IMPORT_TIMEOUT_S:.0f} s"]
    except (ValueError, IndexError):  # the interpreter died before it could answer
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return [f"importing the changed files failed: {tail}"]
    out = []
    for item in results:
        path = Path(item["path"])
        missing = str(item.get("missing") or "").partition(".")[0]
        found = _module_of(path)
        bases = [Path(root), path.parent, *([Path(found[1])] if found else [])]
        project = missing and any(
            (base / missing).exists() or (base / f"{missing}.py").exists() for base in bases
        )
        if allow_missing_packages and missing and not project:
            continue
        line = f":{item['line']}" if item.get("line") else ""
        out.append(f"{os.path.relpath(path, root)}{line}: {item['error']}")
    return out
