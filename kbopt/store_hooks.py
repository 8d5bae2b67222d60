"""What every `Store` attaches when it is created, registered without importing the store.

`kbopt/__init__.py` registers the `catalog/` index here at `import kbopt`.  Keeping the
list out of `kbopt.store` lets that registration happen without loading the store
(pydantic, YAML, the template): a command that only reads the search index's snapshot
(`kbopt.cli.quick`) never pays for them, and every Store still gets the listener.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Run on every new Store to attach what is derived from its entries.
_ATTACH_TO_EVERY_STORE: list[Callable[[Any], None]] = []


def attach_to_every_store(attach: Callable[[Any], None]) -> None:
    """Call `attach(store)` for every Store created from now on (once per function)."""
    if attach not in _ATTACH_TO_EVERY_STORE:
        _ATTACH_TO_EVERY_STORE.append(attach)
