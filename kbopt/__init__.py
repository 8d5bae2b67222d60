"""kbopt: a typed, searchable knowledge base of GPU kernel optimizations.

`import kbopt` needs no GPU and none of torch, triton, cutlass or anthropic: those are
imported by the modules that use them.
"""

from kbopt import catalog_index as _catalog_index
from kbopt.contracts.profile import Profile
from kbopt.errors import KbError, ProblemList
from kbopt.model import Entry, EvidenceBlock, EvidenceRow, Interaction, MetricEffect, Trigger
from kbopt.search import search  # the function; whoosh loads only when an index opens
from kbopt.store import Store, attach_to_every_store
from kbopt.strategy import recommend
from kbopt.template import parse_entry, render_entry
from kbopt.vocab import Bottleneck, Kind, Language, Level, Relation, Scope, SourceType, Status

__version__ = "0.1.0"

# Every Store keeps its catalog/ index current after each write: the index is a listener
# wired here, so that the store knows nothing about what is derived from it.
attach_to_every_store(_catalog_index.attach)

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
