"""Build step: the wheel carries the catalog as package data, kbopt/bundled/knowledge/.

docs/knowledge/ stays the single source of truth in the repository (the site, the tests
and catalog/ read it there).  This copies its entry files into the build tree, so that
`pip install kbopt` brings the knowledge with the library.  An editable install
(`make setup`) copies nothing: kbopt then reads the checkout's docs/knowledge/ directly
(see kbopt/layers.py).  Everything else about the package is in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "docs" / "knowledge"
TARGET = Path("kbopt") / "bundled" / "knowledge"  # kbopt.layers.PACKAGED_RELPATH


class BuildPyWithCatalog(build_py):
    """`build_py`, then the catalog's Markdown files into the built package."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / TARGET
        # Start clean: a build folder left from an earlier build may hold deleted entries.
        shutil.rmtree(target, ignore_errors=True)
        for src in sorted(SOURCE.rglob("*.md")):
            rel = src.relative_to(SOURCE)
            if any(part.startswith(".") for part in rel.parts):
                continue
            dest = target / rel
            self.mkpath(str(dest.parent))
            self.copy_file(str(src), str(dest), preserve_mode=False)


setup(cmdclass={"build_py": BuildPyWithCatalog})
