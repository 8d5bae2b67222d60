"""kbopt: a typed, searchable knowledge base of GPU kernel optimizations.

`import kbopt` needs no GPU and none of torch, triton, cutlass or anthropic: those are
imported by the modules that use them.  It is also cheap: the public names below load
their modules on first use (PEP 562), so a command that only reads the search index
(`kbopt.cli.quick`) loads neither pydantic nor whoosh.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kbopt.errors import KbError, ProblemList
from kbopt.search import search  # the function; whoosh loads only when an index opens
from kbopt.store_hooks import attach_to_every_store

if TYPE_CHECKING:
    from kbopt.contracts.profile import Profile
    from kbopt.model import Entry, EvidenceBlock, EvidenceRow, Interaction, MetricEffect, Trigger
    from kbopt.store import Store
    from kbopt.strategy import recommend
    from kbopt.template import parse_entry, render_entry
    from kbopt.vocab import Bottleneck, Kind, Language, Level, Relation, Scope, SourceType, Status

__version__ = "0.1.0"

# Public name -> the module that defines it (imported on first access).
_LAZY = {
    "Profile": "kbopt.contracts.profile",
    **dict.fromkeys(
        ["Entry", "EvidenceBlock", "EvidenceRow", "Interaction", "MetricEffect", "Trigger"],
        "kbopt.model",
    ),
    "Store": "kbopt.store",
    "recommend": "kbopt.strategy",
    "parse_entry": "kbopt.template",
    "render_entry": "kbopt.template",
    **dict.fromkeys(
        ["Bottleneck", "Kind", "Language", "Level", "Relation", "Scope", "SourceType", "Status"],
        "kbopt.vocab",
    ),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kbopt' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def _attach_catalog_index(store: Any) -> None:
    from kbopt.catalog_index import attach

    attach(store)


# Every Store keeps its catalog/ index current after each write: the index is a listener
# wired here, so that the store knows nothing about what is derived from it.
attach_to_every_store(_attach_catalog_index)

__all__ = [
    "Bottleneck",
    "Entry",
    "EvidenceBlock",
    "EvidenceRow",
    "Interaction",
    "KbError",
    "Kind",
    "Language",
    "Level",
    "MetricEffect",
    "ProblemList",
    "Profile",
    "Relation",
    "Scope",
    "SourceType",
    "Status",
    "Store",
    "Trigger",
    "__version__",
    "parse_entry",
    "recommend",
    "render_entry",
    "search",
]
