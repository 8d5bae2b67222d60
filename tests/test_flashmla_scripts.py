"""The FlashMLA tooling on the CPU: packing pinned source trees into one archive
(scripts/fetch_third_party.py, from a bare mirror and from a git server) and the build
script's refusals and failure messages (scripts/build_flashmla.sh with no compiler to run).

Small local git repositories stand in for FlashMLA and CUTLASS; the real pins are only
checked for their shape (full commit ids, CUTLASS's headers under csrc/cutlass).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
FETCH = REPO / "scripts" / "fetch_third_party.py"
BUILD = REPO / "scripts" / "build_flashmla.sh"


def _fetch_module() -> Any:
    spec = importlib.util.spec_from_file_location("_fetch_third_party_flashmla", FETCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _git(*args: str, cwd: Path) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _repo(root: Path, name: str, files: dict[str, str]) -> tuple[Path, str]:
    """A bare repository root/<name>.git holding one commit of `files`; (its path, the id)."""
    work = root / f"{name}-work"
    work.mkdir(parents=True)
    _git("init", "-q", "-b", "main", cwd=work)
    for rel, text in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    _git("add", ".", cwd=work)
    _git("commit", "-q", "-m", "one", cwd=work)
    commit = _git("rev-parse", "HEAD", cwd=work)
    bare = root / f"{name}.git"
    _git("clone", "-q", "--bare", str(work), str(bare), cwd=root)
    _git("config", "uploadpack.allowAnySHA1InWant", "true", cwd=bare)
    _git("config", "uploadpack.allowFilter", "true", cwd=bare)
    return bare, commit


@pytest.fixture
def two_repos(tmp_path: Path) -> tuple[Any, Any, Path]:
    """(fetch module, an Archive over two local repos, the folder holding the repos)."""
    fetch = _fetch_module()
    server = tmp_path / "server" / "owner"
    server.mkdir(parents=True)
    _, kernel = _repo(server, "kern", {"setup.py": "# setup\n", "csrc/a.cu": "// a\n"})
    _, headers = _repo(
        server,
        "heads",
        {"include/h.h": "// h\n", "tools/util/include/u.h": "// u\n", "docs/big.md": "x\n"},
    )
    archive = fetch.Archive(
        name="demo",
        dest="demo-src.tgz",
        top="demo",
        parts=(
            fetch.TreePart("owner/kern", kernel, (), ""),
            fetch.TreePart("owner/heads", headers, ("include", "tools/util/include"), "csrc/hd"),
        ),
        license="MIT",
    )
    return fetch, archive, tmp_path / "server"


def _names(blob: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        return sorted(m.name for m in tar.getmembers() if m.isfile())


def _args(dest: Path, **kw: Any) -> argparse.Namespace:
    base = {"from_mirror": None, "from_files": None, "from_pypi": False, "dest": str(dest)}
    return argparse.Namespace(**{**base, **kw})


def test_the_flashmla_pin_names_full_commits_and_cutlass_headers() -> None:
    fetch = _fetch_module()
    archive = fetch.ARCHIVES_BY_NAME["flashmla"]
    assert archive.dest == "flashmla-src.tgz" and archive.top == "flashmla"
    flashmla, cutlass = archive.parts
    assert flashmla.repo == "deepseek-ai/FlashMLA" and flashmla.commit.startswith("9241ae3")
    assert cutlass.repo == "NVIDIA/cutlass" and cutlass.commit.startswith("147f5673d")
    assert cutlass.paths == ("include", "tools/util/include") and cutlass.prefix == "csrc/cutlass"
    assert all(len(p.commit) == 40 for p in archive.parts)
    assert "flashmla" not in fetch.BY_NAME  # the single-file sources stay as they were


def test_archive_from_a_mirror_holds_the_parts_under_their_prefix(
    two_repos: tuple[Any, Any, Path], tmp_path: Path
) -> None:
    fetch, archive, server = two_repos
    # mirrors are named <owner>+<name>: lay the bare repositories out that way
    mirrors = tmp_path / "mirrors"
    (mirrors / "owner+kern").mkdir(parents=True)
    (server / "owner" / "kern.git").rename(mirrors / "owner+kern" / "repo")
    (server / "owner" / "heads.git").rename(mirrors / "owner+heads")
    entry = fetch.fetch_archive(archive, _args(tmp_path / "tp", from_mirror=str(mirrors)))
    blob = (tmp_path / "tp" / "demo-src.tgz").read_bytes()
    assert _names(blob) == [
        "demo/KBOPT_SOURCES.json",
        "demo/csrc/a.cu",
        "demo/csrc/hd/include/h.h",
        "demo/csrc/hd/tools/util/include/u.h",
        "demo/setup.py",
    ]
    assert entry["file"] == "demo-src.tgz" and entry["bytes"] == str(len(blob))
    assert entry["ref"] == ", ".join(p.commit for p in archive.parts)
    # the same commits give the same bytes (fixed order, owners and gzip time)
    fetch.fetch_archive(archive, _args(tmp_path / "tp2", from_mirror=str(mirrors)))
    assert (tmp_path / "tp2" / "demo-src.tgz").read_bytes() == blob


def test_archive_from_a_git_server_matches_the_mirror_layout(
    two_repos: tuple[Any, Any, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetch, archive, server = two_repos
    monkeypatch.setattr(fetch, "GITHUB", server.as_uri())
    entry = fetch.fetch_archive(archive, _args(tmp_path / "tp"))
    assert "demo/csrc/hd/include/h.h" in _names((tmp_path / "tp" / "demo-src.tgz").read_bytes())
    assert "docs/big.md" not in str(_names((tmp_path / "tp" / "demo-src.tgz").read_bytes()))
    assert entry["fetched_with"].startswith(f"git {server.as_uri()}/owner/kern.git")


def test_archive_refuses_a_commit_the_mirror_lacks_and_loose_files(
    two_repos: tuple[Any, Any, Path], tmp_path: Path
) -> None:
    fetch, archive, server = two_repos
    with pytest.raises(fetch.FetchError, match="no mirror of owner/kern"):
        fetch.fetch_archive(archive, _args(tmp_path / "tp", from_mirror=str(tmp_path / "none")))
    with pytest.raises(fetch.FetchError, match="fetch it with git"):
        fetch.fetch_archive(archive, _args(tmp_path / "tp", from_files=str(tmp_path)))
    wrong = fetch.Archive("x", "x.tgz", "x", (fetch.TreePart("owner/kern", "0" * 40, (), ""),), "")
    (tmp_path / "m").mkdir()
    (server / "owner" / "kern.git").rename(tmp_path / "m" / "owner+kern")
    with pytest.raises(fetch.FetchError):
        fetch.fetch_archive(wrong, _args(tmp_path / "tp", from_mirror=str(tmp_path / "m")))
    assert not (tmp_path / "tp" / "x.tgz").exists()


def test_fetch_cli_lists_the_archive_and_rejects_unknown_names(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fetch = _fetch_module()
    assert fetch.main(["--list", "flashmla", "--dest", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "flashmla" in out and "missing" in out and "flashmla-src.tgz" in out
    assert fetch.main(["nosuch", "--dest", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown source(s) nosuch" in err and "flashmla" in err


# ---------------------------------------------------------------------- build_flashmla.sh


def _build(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "FLASHMLA_BUILD_DIR": str(tmp_path / "build" / "fm"), **env}
    return subprocess.run(
        ["bash", str(BUILD)], cwd=tmp_path, env=full, capture_output=True, text=True, timeout=120
    )


def test_build_script_refuses_a_missing_archive(tmp_path: Path) -> None:
    done = _build(tmp_path, FLASHMLA_ARCHIVE=str(tmp_path / "none.tgz"))
    assert done.returncode == 2 and done.stdout == ""
    assert "no archive at" in done.stderr and "fetch_third_party.py flashmla" in done.stderr


def test_build_script_says_why_when_both_builds_fail(tmp_path: Path) -> None:
    # an archive with FlashMLA's layout, a stand-in nvcc, and a "python" that fails to build
    tree = tmp_path / "src" / "flashmla"
    (tree / "csrc" / "api").mkdir(parents=True)
    (tree / "setup.py").write_text("raise SystemExit(1)\n")
    archive = tmp_path / "flashmla-src.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tree, arcname="flashmla")
    cuda = tmp_path / "cuda" / "bin"
    cuda.mkdir(parents=True)
    (cuda / "nvcc").write_text("#!/bin/sh\nexit 0\n")
    (cuda / "nvcc").chmod(0o755)
    fail = tmp_path / "fakepy"
    fail.write_text("#!/bin/sh\necho 'fatal error: cuda/std/utility: No such file' >&2\nexit 1\n")
    fail.chmod(0o755)
    done = _build(
        tmp_path,
        FLASHMLA_ARCHIVE=str(archive),
        CUDA_HOME=str(tmp_path / "cuda"),
        PYTHON=str(fail),
    )
    assert done.returncode == 1 and done.stdout == ""  # no importable path printed
    err = done.stderr
    assert "dense-only build: FAILED" in err and "full (FlashMLA's setup.py) build: FAILED" in err
    assert "cuda/std/utility: No such file" in err  # the log's error lines are shown
    assert "FlashMLA is not available" in err
    built = tmp_path / "build" / "fm"
    assert (built / "csrc" / "api" / "kbopt_dense_api.cpp").is_file()
    assert (
        "sm90/decode/dense/instantiations/bf16.cu" in (built / "kbopt_dense_setup.py").read_text()
    )


def test_build_script_refuses_a_build_dir_outside_tmp(tmp_path: Path) -> None:
    done = _build(tmp_path, FLASHMLA_BUILD_DIR="/", FLASHMLA_ARCHIVE=str(BUILD))
    assert done.returncode == 2 and "choose a folder under /tmp" in done.stderr
