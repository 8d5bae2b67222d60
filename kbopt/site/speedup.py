"""One scale for evidence: every Change cell read as a speed-up factor (x, >1 = faster).

Entry authors write the Change column in several conventions: a duration change
("-39.5% time", "+13.5%" between two times: negative is faster), a speed-up factor
("35.7x", "1.5x to 2.0x (as reported)": above 1 is faster), or "% faster".  Read
naively as one percentage, "35.7x" becomes +3470% and "-39.5% time" -39.5%, so two
speed-ups point opposite ways.  :func:`row_speedup` converts each of these to the
same factor, and says when a row is not a speed at all (a ratio of occupancy,
efficiency or error, or prose), so that only comparable rows are plotted together.
The raw Before / After / Change cells are always shown next to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kbopt.model import EvidenceRow

_NUM = r"[0-9]+(?:\.[0-9]+)?"
_PCT = re.compile(rf"([+\-−]?)\s*({_NUM})\s*%")
_FACTOR = re.compile(rf"(?<![\w.])({_NUM})\s*[x×](?:\s*(?:to|-|–)\s*({_NUM})\s*[x×])?", re.I)
_FIRST_QUANTITY = re.compile(rf"({_NUM})\s*(ns|us|µs|ms|s|[GT]i?B/s|[TP]FLOPS)\b")
_TIME_UNITS = {"ns", "us", "µs", "ms", "s"}
# Words after a factor that make it a ratio of something other than speed.
_SPEED_WORDS = ("faster", "higher", "speed", "throughput", "as reported", "expected", "as stated")
_NOT_SPEED = re.compile(
    r"occupancy|efficien|error|bandwidth|sectors|traffic|registers|spill|lower", re.I
)


@dataclass(frozen=True)
class Speedup:
    """A row's Change as a speed-up factor, and how it was read."""

    factor: float  # > 1 faster, < 1 slower
    basis: str  # "time", "host time" or "reported speed-up"
    note: str = ""  # e.g. "lower bound of a range"

    @property
    def text(self) -> str:
        if self.factor >= 100:
            return f"{self.factor:,.0f}×"  # 3,330×, not 3.33e+03×
        return f"{self.factor:.3g}×"


def _first_unit(cell: str) -> str | None:
    m = _FIRST_QUANTITY.search(cell)
    return m.group(2) if m else None


def row_speedup(row: EvidenceRow) -> Speedup | None:
    """The row's Change as a speed-up factor, or None when it is not a speed."""
    change = row.change.strip()
    if not change or re.match(r"(?i)(n/?a|qualitative|no\b|fewer|lower occupancy)", change):
        return None
    pct = _PCT.search(change)
    if pct:
        value = float(pct.group(2)) * (-1.0 if pct.group(1) in "-−" and pct.group(1) else 1.0)
        rest = change[pct.end() :].strip().lower()
        if rest.startswith("faster") or "faster" in rest[:20]:
            return Speedup(1.0 + value / 100.0, "reported speed-up")
        timed = rest.startswith(("time", "host time"))
        units = {_first_unit(row.before), _first_unit(row.after)}
        if timed or (not rest and units and units <= _TIME_UNITS):
            if value <= -100.0:
                return None
            basis = "host time" if rest.startswith("host time") else "time"
            return Speedup(1.0 / (1.0 + value / 100.0), basis)
        return None
    factor = _FACTOR.search(change)
    if factor:
        rest = change[factor.end() :].strip().lower()
        if rest and _NOT_SPEED.search(rest) and not any(w in rest for w in _SPEED_WORDS[:3]):
            return None
        note = "lower bound of a range" if factor.group(2) else ""
        if change.lower().startswith("up to"):
            note = "upper bound (as reported)"
        return Speedup(float(factor.group(1)), "reported speed-up", note)
    return None
