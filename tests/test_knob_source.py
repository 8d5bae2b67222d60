"""Writing a version's copy with changed knob values: the values, the name, the docstring."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from kbopt.kernel import read_knob_values
from kbopt.workflow.knob_source import set_docstring_head, write_version

REPO = Path(__file__).resolve().parent.parent


def test_a_copied_version_is_named_by_its_own_docstring(tmp_path: Path) -> None:
    src = REPO / "kernels" / "add_rmsnorm" / "triton_v1.py"
    dst = tmp_path / "triton_v9.py"
    write_version(src, dst, {"block": 512}, version="triton_v9", description="block 512")
    text = dst.read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(text)) or ""
    assert doc.startswith("triton_v9 — block 512.")
    assert "A copy of triton_v1" in doc and "triton_v1 — naive" in doc  # original notes kept
    assert read_knob_values(dst, ["block", "num_warps"]) == {"block": 512, "num_warps": 4}
    # everything after the docstring is the original's, byte for byte, apart from the
    # changed knob value and the DESCRIPTION constant
    after_doc = lambda t: t.split('"""', 2)[2]  # noqa: E731
    changed = [
        (a, b)
        for a, b in zip(
            after_doc(src.read_text()).splitlines(), after_doc(text).splitlines(), strict=True
        )
        if a != b
    ]
    assert len(changed) == 2, changed  # DESCRIPTION and CONFIG


def test_docstring_quotes_and_backslashes_survive() -> None:
    text = 'r"""triton_v1 — odd \\\\d and \\"\\"\\" inside."""\nX = 1\n'
    new = set_docstring_head(text, "triton_v1", "triton_v2", "a change")
    doc = ast.get_docstring(ast.parse(new)) or ""
    assert doc.startswith("triton_v2 — a change.")
    assert ast.parse(new).body[1].targets[0].id == "X"  # type: ignore[attr-defined]
    assert set_docstring_head("X = 1\n", "a", "b", "c") == "X = 1\n"  # no docstring: unchanged


def test_the_kernels_own_tests_accept_a_copied_version(tmp_path: Path) -> None:
    """What VERIFY runs after a catalog move: the kernel's tests, on the copy."""
    root = tmp_path / "repo"
    for part in ("kernels", "tests/kernels", "kbopt"):
        shutil.copytree(
            REPO / part, root / part, ignore=shutil.ignore_patterns("results", "__pycache__")
        )
    for f in ("pyproject.toml", "tests/__init__.py", "tests/conftest.py"):
        if (REPO / f).is_file():
            shutil.copy(REPO / f, root / f)
    folder = root / "kernels" / "add_rmsnorm"
    write_version(
        folder / "triton_v1.py",
        folder / "triton_v99.py",
        {"block": 1024},  # triton_v9 (a catalog move in the ladder) is v1 with 512
        version="triton_v99",
        description="triton_v1 with block 256 -> 1024",
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-x",
            "-p",
            "no:cacheprovider",
            "tests/kernels/test_add_rmsnorm.py",
            "-k",
            "declares_its_knobs or spec_loads",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-2000:]
