"""The Sphinx side of the site: configuration values, the generation hook, assets.

`conf.py` lists ``kbopt.site`` in ``extensions``; Sphinx then calls :func:`setup`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbopt.site.generate import generate_sources

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config

STATIC_DIR = Path(__file__).resolve().parent / "static"


def _add_static(app: Sphinx, config: Config) -> None:
    if str(STATIC_DIR) not in config.html_static_path:
        config.html_static_path.append(str(STATIC_DIR))


def _generate(app: Sphinx) -> None:
    from sphinx.util import logging

    logger = logging.getLogger("kbopt.site")
    root = Path(app.config.kbopt_root or app.confdir)
    report = generate_sources(root, Path(app.srcdir))
    for problem in report.problems:
        # A broken entry is a broken site: under -W this fails the build.
        logger.warning("knowledge base: %s", problem, type="kbopt", subtype="entry")
    logger.info(
        "kbopt.site: %d entries; %d generated files written, %d removed, %d unchanged; "
        "%d plots drawn",
        report.entries,
        len(report.written),
        len(report.removed),
        report.unchanged,
        report.plots_drawn,
    )
    app.kbopt_generate_report = report  # type: ignore[attr-defined]


def rst_problems(text: str, env: object = None) -> list[str]:
    """docutils' complaints about `text` read as reStructuredText (empty if clean).

    Inside a build, Sphinx's roles (`:class:`...) are active and need its `env`.
    """
    import io

    from docutils import nodes
    from docutils.core import publish_doctree

    settings = {"report_level": 5, "halt_level": 5, "warning_stream": io.StringIO(), "env": env}
    doctree = publish_doctree(text, settings_overrides=settings)
    return [msg.astext() for msg in doctree.findall(nodes.system_message) if msg["level"] >= 2]


def _verbatim_if_not_rst(
    app: Sphinx, what: str, name: str, obj: object, options: object, lines: list[str]
) -> None:
    """Show a docstring that is not valid reStructuredText as preformatted text.

    kbopt's docstrings are written for people reading the code (Markdown-ish tables,
    backticks); one that docutils cannot read is shown verbatim instead of breaking
    the strict build or rendering garbled.
    """
    if not lines or not rst_problems("\n".join(lines), app.env):
        return
    body = ["    " + line if line.strip() else "" for line in lines]
    lines[:] = ["::", "", *body, ""]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("kbopt_root", None, "env", types=[str, type(None)])
    app.connect("config-inited", _add_static)
    app.connect("builder-inited", _generate)
    app.connect("autodoc-process-docstring", _verbatim_if_not_rst)
    app.add_js_file("kbopt-catalog.js")
    app.add_css_file("kbopt-site.css")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
