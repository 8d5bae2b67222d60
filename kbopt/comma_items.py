"""Comma-separated command-line values (`--dims rows,cols`, `--versions a,b`, a knob's
`4,8,16`): split, stripped, and an empty item refused rather than skipped.

`rows=4,,cols=8` or a trailing comma is a value lost in editing: reading it as a separator
would run something other than what was meant, in silence.
"""

from __future__ import annotations

from kbopt.errors import KbError


def comma_items(text: str, shown: str, items: str) -> list[str]:
    """The stripped items of `text`; [] when no item has text (a blank value, or commas
    alone: each caller says what is missing, in its own words).  An empty item beside others
    is refused as `<shown> has an empty item: separate the <items> by single commas`
    (`shown`: the option and its value as given, e.g. `--dims 'rows,,cols'`)."""
    parts = [p.strip() for p in text.split(",")]
    given = [p for p in parts if p]
    if given and len(given) != len(parts):
        raise KbError(f"{shown} has an empty item: separate the {items} by single commas")
    return given
