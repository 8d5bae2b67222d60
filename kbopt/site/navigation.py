"""The sidebar's navigation tree, resolved once per folder instead of once per page.

Furo asks every page for the whole site's toctree (``includehidden``, no depth limit)
and Sphinx resolves it from scratch each time: with ~90 API pages and long devlogs
that was most of the build's write phase (about 0.5 s per page on this machine).
The tree differs between two pages of one folder only in which items are marked
current, so :func:`install` resolves it once per folder (links relative to that
folder) and marks the current page and its ancestors on a copy.
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinx.application import Sphinx

_ITEM = re.compile(
    r'<li class="(toctree-l\d+)([^"]*)"><a class="reference internal" href="([^"]*)">'
    r"((?:(?!<li[ >]|</li>).)*?</a>)(<input [^>]*?)(/?>)",
    re.S,
)
_PLAIN_ITEM = re.compile(
    r'<li class="(toctree-l\d+)([^"]*)"><a class="reference internal" href="([^"]*)">'
)
_PROBE = "__kbopt_navigation__"  # a docname no page has: nothing marked current


def _parents(app: Sphinx) -> dict[str, list[str]]:
    parents: dict[str, list[str]] = {}
    for parent, children in app.env.toctree_includes.items():
        for child in children:
            parents.setdefault(child, []).append(parent)
    return parents


def _ancestors(parents: dict[str, list[str]], docname: str) -> set[str]:
    seen: set[str] = set()
    todo = list(parents.get(docname, []))
    while todo:
        doc = todo.pop()
        if doc not in seen:
            seen.add(doc)
            todo += parents.get(doc, [])
    return seen


def _unchecked(checkbox: str) -> str:
    return checkbox.replace(' checked=""', "")


def _classes(level: str, rest: str, *extra: str) -> str:
    names = [c for c in rest.split() if c not in ("current", "current-page")]
    return " ".join([level, *extra, *names])


def mark_current(html: str, self_href: str, ancestor_hrefs: set[str]) -> str:
    """Sphinx's and Furo's "current" marks on the page's own item and its ancestors'
    items of a navigation tree resolved for no page: the classes, the self link
    (``#``), and the expanded checkbox of each current item that has children."""

    def expandable(m: re.Match[str]) -> str:
        level, rest, href, label, checkbox, end = m.groups()
        if href == self_href:
            return (
                f'<li class="{_classes(level, rest, "current", "current-page")}">'
                f'<a class="current reference internal" href="#">{label}'
                f'{_unchecked(checkbox)} checked=""{end}'
            )
        if href in ancestor_hrefs:
            return (
                f'<li class="{_classes(level, rest, "current")}">'
                f'<a class="reference internal" href="{href}">{label}'
                f'{_unchecked(checkbox)} checked=""{end}'
            )
        return m.group(0)

    def plain(m: re.Match[str]) -> str:
        level, rest, href = m.groups()
        if href == self_href:
            return (
                f'<li class="{_classes(level, rest, "current", "current-page")}">'
                '<a class="current reference internal" href="#">'
            )
        if href in ancestor_hrefs:
            return f'<li class="{_classes(level, rest, "current")}"><a class="reference internal" href="{href}">'
        return m.group(0)

    # Items with children first (their checkbox follows the link), then the rest.
    html = _ITEM.sub(expandable, html)
    return _PLAIN_ITEM.sub(plain, html)


class _Cache:
    def __init__(self, app: Sphinx):
        self.trees: dict[tuple[str, tuple[tuple[str, Any], ...]], str] = {}
        self.parents = _parents(app)


def _cache(app: Sphinx) -> _Cache:
    cache: _Cache | None = getattr(app, "_kbopt_navigation", None)
    if cache is None:
        cache = _Cache(app)
        app._kbopt_navigation = cache  # type: ignore[attr-defined]
    return cache


def _before_furo(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Hand Furo the folder's tree with nothing marked: Furo post-processes it with an
    lru_cache keyed by the HTML, so that work too is done once per folder."""
    builder: Any = app.builder
    if "toctree" not in context or not hasattr(builder, "_get_local_toctree"):
        return
    cache = _cache(app)
    folder = posixpath.dirname(pagename)
    probe = posixpath.join(folder, _PROBE)

    def toctree(**kwargs: Any) -> str:
        key = (folder, tuple(sorted(kwargs.items())))
        if key not in cache.trees:
            cache.trees[key] = builder._get_local_toctree(probe, **kwargs)
        return cache.trees[key]

    context["toctree"] = toctree
    context["_kbopt_probe"] = probe


def _after_furo(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    probe = context.get("_kbopt_probe")
    tree = context.get("furo_navigation_tree")
    if not probe or not tree:
        return
    builder: Any = app.builder
    parents = _cache(app).parents
    ancestors = {builder.get_relative_uri(pagename, d) for d in _ancestors(parents, pagename)}
    context["furo_navigation_tree"] = mark_current(
        tree, builder.get_relative_uri(probe, pagename), ancestors
    )


def install(app: Sphinx) -> None:
    # Furo's own handler runs at the default priority (500).
    app.connect("html-page-context", _before_furo, priority=400)
    app.connect("html-page-context", _after_furo, priority=600)
