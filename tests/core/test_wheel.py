"""A wheel built from this checkout works in a user's repository, offline.

The wheel is built from a copy of what the build reads (building in the checkout would
leave build/ and *.egg-info behind, and an old build/ could ship stale files), installed
into a fresh venv outside the checkout, and used from an empty folder.  Nothing is
downloaded: the build uses this venv's setuptools (--no-build-isolation), and the fresh
venv finds kbopt's dependencies through a .pth file naming the folders they are
installed in here.  A .pth file's folders are plain path entries (their own .pth files
are not run), so this checkout's editable install of kbopt stays invisible.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.core.sample import VALID

REPO = Path(__file__).resolve().parents[2]
BUILD_INPUTS = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md")
PIP_ENV = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def _run(
    cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=cwd, env=env)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}\n{r.stderr}"
    return r


def _build_wheel(tmp: Path) -> Path:
    src = tmp / "src"
    src.mkdir()
    for name in BUILD_INPUTS:
        shutil.copy2(REPO / name, src / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")
    shutil.copytree(REPO / "kbopt", src / "kbopt", ignore=skip)
    shutil.copytree(REPO / "docs" / "knowledge", src / "docs" / "knowledge", ignore=skip)
    out = tmp / "wheels"
    _run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation",
         "--no-index", "-q", "-w", str(out)],
        env=PIP_ENV,
    )  # fmt: skip
    (wheel,) = out.glob("kbopt-*.whl")
    return wheel


def _dependency_dirs() -> list[str]:
    """The folders kbopt's (non-optional) dependencies are installed in, in this venv."""
    dirs: list[str] = []
    for req in md.requires("kbopt") or []:
        if "extra ==" in req:
            continue
        match = re.match(r"[A-Za-z0-9._-]+", req)
        assert match, req
        folder = str(md.distribution(match.group(0)).locate_file(""))
        if folder not in dirs:
            dirs.append(folder)
    return dirs


def _fresh_venv(tmp: Path, wheel: Path) -> Path:
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "-q", str(wheel)],
        env=PIP_ENV,
    )  # fmt: skip
    site = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    # Written after the install, so that pip does not see this checkout's kbopt there.
    (Path(site.stdout.strip()) / "kbopt_test_dependencies.pth").write_text(
        "\n".join(_dependency_dirs()) + "\n"
    )
    return venv


@pytest.mark.slow
def test_wheel_installed_in_a_fresh_venv_serves_a_user_project(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    bundled = [n for n in names if n.startswith("kbopt/bundled/knowledge/")]
    assert len(bundled) == len(list((REPO / "docs" / "knowledge").rglob("*.md")))
    assert "kbopt/bundled/knowledge/optimizations/split-kv-decode.md" in bundled
    assert all(n.startswith(("kbopt/", "kbopt-")) for n in names), "only the package ships"

    venv = _fresh_venv(tmp_path, wheel)
    user = tmp_path / "user-repo"
    user.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("KBOPT_") and k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}
    }

    def kbopt(*args: str) -> subprocess.CompletedProcess[str]:
        return _run([str(venv / "bin" / "kbopt"), *args], cwd=user, env=env)

    where = _run(
        [str(venv / "bin" / "python"), "-c", "import kbopt; print(kbopt.__file__)"],
        cwd=user,
        env=env,
    )
    assert Path(where.stdout.strip()).is_relative_to(venv), "not the installed wheel"

    kbopt("init")
    assert (user / "docs" / "knowledge" / "README.md").is_file()

    rows = {r["id"]: r for r in json.loads(kbopt("list", "--json").stdout)}
    assert rows["split-kv-decode"]["layer"] == "bundled"
    assert Path(rows["split-kv-decode"]["path"]).is_relative_to(venv)

    new = json.loads(kbopt("new", "optimization", "my-idea", "--json").stdout)
    assert new["path"] == "docs/knowledge/optimizations/my-idea.md"
    assert (user / new["path"]).is_file()
    draft = tmp_path / "draft.md"
    draft.write_text(VALID)
    kbopt("add", str(draft))
    assert (user / "docs" / "knowledge" / "optimizations" / "sample-opt.md").is_file()
    rows = {r["id"]: r for r in json.loads(kbopt("list", "--json").stdout)}
    assert rows["my-idea"]["layer"] == rows["sample-opt"]["layer"] == "project"

    hits = json.loads(kbopt("search", "split kv", "--json").stdout)
    assert any(h["id"] == "split-kv-decode" and h["layer"] == "bundled" for h in hits), hits
