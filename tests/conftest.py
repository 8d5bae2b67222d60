"""Shared fixtures: knowledge bases in temporary folders, never the real one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (run on the H200 device machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _no_bundled_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests see only the knowledge base they set up: the entries bundled with kbopt
    are left out unless a test asks for them (tests/core/test_layers.py)."""
    monkeypatch.setenv("KBOPT_BUNDLED", "0")


@pytest.fixture
def repo_root() -> Path:
    return REPO


@pytest.fixture
def kb_copy(tmp_path: Path) -> Path:
    """A copy of the bundled knowledge base and catalog in a temporary project root."""
    root = tmp_path / "project"
    shutil.copytree(REPO / "docs" / "knowledge", root / "docs" / "knowledge")
    if (REPO / "catalog").is_dir():
        shutil.copytree(REPO / "catalog", root / "catalog")
    return root


@pytest.fixture
def empty_kb(tmp_path: Path) -> Path:
    """An empty project root with a docs/knowledge folder."""
    root = tmp_path / "empty"
    (root / "docs" / "knowledge").mkdir(parents=True)
    return root
