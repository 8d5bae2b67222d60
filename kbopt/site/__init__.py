"""The kbopt Sphinx site: every page about the catalog is generated from the store.

`conf.py` at the repository root loads this package as a Sphinx extension.  When the
builder starts (`builder-inited`), :func:`kbopt.site.generate.generate_sources` writes
the generated sources into ``docs/generated/`` (a git-ignored folder): one page per
entry with its typed header, the catalog index, the facet table, the interaction
graph, the evidence tables and plots, the API pages and the CLI reference.  A file is
rewritten only when its text changes, so an incremental Sphinx build re-reads only
what a change in the catalog touched.

Importing this package does not import Sphinx; :func:`setup` does.
"""

from __future__ import annotations

from kbopt.site.extension import setup

__all__ = ["setup"]
