"""Build the site in-process: what `kbopt site build` and the tests call.

A full build starts from nothing (fresh Sphinx environment, generated sources,
doctrees and output folder removed); an incremental build keeps them all, so Sphinx re-reads only
the documents whose sources changed.
"""

from __future__ import annotations

import io
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from kbopt.errors import KbError
from kbopt.site.generate import GENERATED_DIR

DOCS_DIR = "docs"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class BuildReport:
    out: Path
    incremental: bool
    seconds: float
    docs_read: list[str] = field(default_factory=list)
    generated_written: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    entries: int = 0

    def summary(self) -> dict[str, object]:
        return {
            "out": str(self.out),
            "index": str(self.out / "index.html"),
            "incremental": self.incremental,
            "seconds": round(self.seconds, 3),
            "entries": self.entries,
            "docs_read": len(self.docs_read),
            "generated_written": len(self.generated_written),
            "warnings": self.warnings,
        }


class _Tee(io.StringIO):
    """Keep Sphinx's warnings for the report and still show them as they come."""

    def __init__(self, echo: bool):
        super().__init__()
        self.echo = echo

    def write(self, s: str) -> int:
        if self.echo:
            sys.stderr.write(s)
        return super().write(s)


def default_out(root: Path) -> Path:
    return root / "_build" / "html"


def doctrees_dir(out: Path) -> Path:
    """Sphinx's pickled doctrees, beside the output folder and not in it: they are
    only for incremental builds (tens of MB), never for publishing."""
    return out.parent / f"{out.name}.doctrees"


def build_site(
    root: Path,
    out: Path | None = None,
    *,
    incremental: bool = False,
    warnings_as_errors: bool = False,
    jobs: int = 1,
    verbose: bool = False,
) -> BuildReport:
    """Build the HTML site of the project at `root` (its conf.py and docs/).

    Raises `KbError` when the project has no site sources, or when the build
    fails or (with `warnings_as_errors`) warns; the message lists the warnings.
    """
    from sphinx.application import Sphinx
    from sphinx.errors import SphinxError
    from sphinx.util.docutils import docutils_namespace, patch_docutils

    root = root.resolve()
    srcdir = root / DOCS_DIR
    if not (root / "conf.py").is_file() or not srcdir.is_dir():
        raise KbError(f"{root} has no site sources: expected conf.py and docs/ there")
    out = (out or default_out(root)).resolve()
    doctrees = doctrees_dir(out)
    shutil.rmtree(out / ".doctrees", ignore_errors=True)  # where older versions kept them
    if not incremental:
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(doctrees, ignore_errors=True)
        shutil.rmtree(srcdir / GENERATED_DIR, ignore_errors=True)
    warnings = _Tee(echo=verbose)
    status = sys.stdout if verbose else None
    read: list[str] = []
    started = time.perf_counter()
    try:
        with patch_docutils(root), docutils_namespace():
            app = Sphinx(
                srcdir,
                root,
                out,
                doctrees,
                "html",
                confoverrides={"kbopt_root": str(root)},
                status=status,
                warning=warnings,
                freshenv=not incremental,
                warningiserror=warnings_as_errors,
                parallel=jobs,
            )
            app.connect("env-before-read-docs", lambda _a, _e, names: read.extend(names))
            app.build()
            statuscode = app.statuscode
            gen_report = getattr(app, "kbopt_generate_report", None)
    except SphinxError as exc:
        raise KbError(f"site build failed: {exc}\n{warnings.getvalue()}".rstrip()) from None
    seconds = time.perf_counter() - started
    lines = [_ANSI.sub("", line) for line in warnings.getvalue().splitlines() if line.strip()]
    if statuscode != 0:
        shown = "\n".join(lines[:50]) or "(no message)"
        raise KbError(f"site build failed with {len(lines)} warning line(s):\n{shown}")
    return BuildReport(
        out=out,
        incremental=incremental,
        seconds=seconds,
        docs_read=sorted(read),
        generated_written=list(gen_report.written) if gen_report else [],
        warnings=lines,
        entries=gen_report.entries if gen_report else 0,
    )
