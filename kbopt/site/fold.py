"""The ``kbopt-fold`` directive: a block shown collapsed, as HTML ``<details>``.

Used for a devlog's generated profiles (`kbopt.site.devlog_links`), so the written
story comes first and the reference tables are one click away.  Other builders show
the content as is.
"""

from __future__ import annotations

from html import escape
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive, directives


class fold(nodes.General, nodes.Element):  # docutils names its node classes in lower case
    """A collapsed block; ``summary`` is the line shown while it is closed."""


class Fold(Directive):
    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = {"open": directives.flag}  # noqa: RUF012 (docutils reads a class attribute)

    def run(self) -> list[nodes.Node]:
        node = fold()
        node["summary"] = self.arguments[0] if self.arguments else "Details"
        node["open"] = "open" in self.options
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


def visit_fold_html(self: Any, node: fold) -> None:
    opened = " open" if node.get("open") else ""
    self.body.append(
        f'<details class="kbopt-fold"{opened}><summary>{escape(node["summary"])}</summary>'
        '<div class="kbopt-fold-body">'
    )


def depart_fold_html(self: Any, node: fold) -> None:
    self.body.append("</div></details>")


def _pass(self: Any, node: fold) -> None:
    pass


VISITORS: dict[str, tuple[Any, Any]] = {
    "html": (visit_fold_html, depart_fold_html),
    **{b: (_pass, _pass) for b in ("text", "latex", "man", "texinfo")},
}
