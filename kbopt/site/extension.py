"""The Sphinx side of the site: configuration values, the generation hook, assets.

`conf.py` lists ``kbopt.site`` in ``extensions``; Sphinx then calls :func:`setup`.
Besides generating the catalog's pages, the extension

- rewrites each kernel devlog as it is read (labels on version sections, links to the
  entries each version applied, generated profiles folded: `kbopt.site.devlog_links`);
- gives every page its "view source" / "edit this page" links (an entry page's point
  at the entry's own Markdown file, not at the generated page);
- adds the ``kbopt-fold`` directive (a collapsed ``<details>`` block) and resolves the
  sidebar's navigation once per folder (`kbopt.site.navigation`).  The search page's
  scorer, which ranks catalog entries above API pages, is ``static/kbopt-search.js``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbopt.site.devlog_links import KERNELS_DIR, devlog_anchors, lessons_by_version, prepare_devlog
from kbopt.site.generate import (
    EXTRA_DIR,
    GENERATED_DIR,
    entry_source_href,
    generate_sources,
)
from kbopt.site.pages import ENTRIES_DIR

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config

STATIC_DIR = Path(__file__).resolve().parent / "static"
ENTRY_PREFIX = f"{GENERATED_DIR}/{ENTRIES_DIR}/"


def _add_static(app: Sphinx, config: Config) -> None:
    if str(STATIC_DIR) not in config.html_static_path:
        config.html_static_path.append(str(STATIC_DIR))
    # The copies of the entry files behind the "view source" buttons.
    extra = Path(app.srcdir) / GENERATED_DIR / EXTRA_DIR
    extra.mkdir(parents=True, exist_ok=True)  # filled by _generate, checked before it
    if str(extra) not in config.html_extra_path:
        config.html_extra_path.append(str(extra))


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


# ------------------------------------------------------------------ devlogs


def _entry_titles(app: Sphinx) -> dict[str, str]:
    report = getattr(app, "kbopt_generate_report", None)
    if report is None:
        return {}
    cached: dict[str, str] | None = getattr(app, "kbopt_entry_titles", None)
    if cached is None:
        from kbopt.store import Store

        root = Path(app.config.kbopt_root or app.confdir)
        cached = {e.name: e.title for e in Store(root).load_all().entries}
        app.kbopt_entry_titles = cached  # type: ignore[attr-defined]
    return cached


def _prepare_devlog(app: Sphinx, docname: str, source: list[str]) -> None:
    """Site-only rewrite of ``docs/kernels/<kernel>.md`` as Sphinx reads it."""
    if not docname.startswith(f"{KERNELS_DIR}/") or docname.count("/") != 1:
        return
    kernel = docname.split("/", 1)[1]
    anchors = devlog_anchors(Path(app.srcdir)).get(kernel)
    if anchors is None:
        return
    root = Path(app.config.kbopt_root or app.confdir)
    lessons = root / "kernels" / kernel / "lessons.toml"
    if lessons.is_file():
        app.env.note_dependency(str(lessons))
    source[0] = prepare_devlog(
        source[0],
        anchors,
        lessons_by_version(root, kernel),
        _entry_titles(app),
        f"/{ENTRY_PREFIX}",
    )


# ------------------------------------------------------------------ page links


def _page_links(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """``kbopt_view_url`` / ``kbopt_edit_url`` for the templates in docs/_templates."""
    repo = (app.config.kbopt_repository or "").rstrip("/")
    branch = app.config.kbopt_branch
    report = getattr(app, "kbopt_generate_report", None)
    pathto = context.get("pathto")
    context["kbopt_view_url"] = context["kbopt_edit_url"] = None
    if pagename.startswith(ENTRY_PREFIX) and report is not None and pathto is not None:
        name = pagename[len(ENTRY_PREFIX) :]
        public = report.entry_sources.get(name)
        if public:
            context["kbopt_view_url"] = pathto(entry_source_href(name), 1)
            if repo and public.startswith("docs/"):
                context["kbopt_edit_url"] = f"{repo}/edit/{branch}/{public}"
        return
    if pagename.startswith(f"{GENERATED_DIR}/") or not context.get("page_source_suffix"):
        return  # generated pages have no file of their own to edit
    if pathto is not None and context.get("sourcename"):
        context["kbopt_view_url"] = pathto("_sources/" + context["sourcename"], 1)
    if repo:
        context["kbopt_edit_url"] = (
            f"{repo}/edit/{branch}/docs/{pagename}{context['page_source_suffix']}"
        )


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("kbopt_root", None, "env", types=[str, type(None)])
    # A hosted copy of the repository, e.g. https://github.com/ORG/kbopt: "edit this
    # page" links appear only when it is set (a local build has nowhere to edit).
    app.add_config_value("kbopt_repository", "", "html", types=[str])
    app.add_config_value("kbopt_branch", "main", "html", types=[str])
    app.connect("config-inited", _add_static)
    app.connect("builder-inited", _generate)
    app.connect("source-read", _prepare_devlog)
    app.connect("html-page-context", _page_links)
    from kbopt.site import navigation, speed
    from kbopt.site.fold import VISITORS, Fold, fold

    navigation.install(app)
    speed.install(app)

    app.add_node(fold, **VISITORS)  # type: ignore[arg-type]
    app.add_directive("kbopt-fold", Fold)
    app.add_js_file("kbopt-catalog.js")
    app.add_css_file("kbopt-site.css")
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True}
