"""Reader's-eye checks of one entry that `kbopt lint` reports.

- A Generalization states the reusable rule.  A device name ("H200"), an absolute time
  ("152.5 us") or a version name ("v2", "mla_decode_v3", "triton 3.6") there is local
  evidence, which belongs in Performance Evidence with its provenance.
- An anti-pattern's evidence shows the harm.  A row that measures the pattern being applied
  and reads faster ("-12.0% time" with no "A -> B" fix in its config) says the pattern
  helps: it is an optimization's evidence left in an anti-pattern (what a conversion that
  only moved the file produced).
"""

from __future__ import annotations

import re

from kbopt.model import Entry, EvidenceRow, Kind

DEVICE_NAME = re.compile(
    r"\b(?:[HAB]\d{2,3}[A-Z]?|GB\d{3}|GH\d{3}|L40S?|L4|T4|V100|P100|MI\d{3}[A-Z]?"
    r"|RTX\s?\d{4}(?:\s?Ti)?)\b"
)
ABSOLUTE_TIME = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)?\s?(?:us|µs|μs|ms|ns|s|sec|seconds|milliseconds|microseconds)\b"
)
VERSION_NAME = re.compile(
    r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)*_v\d+\b|(?<![\w.])v\d+(?:\.\d+)*\b"
    r"|\b(?:torch|pytorch|triton|cuda|cutlass|cutlass-dsl|cuda-python)\s+\d+\.\d+(?:\.\d+)?",
    re.IGNORECASE,
)
_LOCAL = (
    (DEVICE_NAME, "a device name"),
    (ABSOLUTE_TIME, "an absolute time"),
    (VERSION_NAME, "a version name"),
)


def generalization_problems(entry: Entry) -> list[tuple[str, str]]:
    """(message, matched text) for each piece of local evidence in the Generalization."""
    out = []
    for pattern, what in _LOCAL:
        for match in pattern.finditer(entry.generalization):
            out.append(
                (
                    f"Generalization names {what} ({match.group()!r}): keep the reusable rule "
                    "there and move local figures, devices and versions to Performance Evidence",
                    match.group(),
                )
            )
    return out


# A time change that reads faster: "-12.0% time", "-6.5%", "-36.8% host time".
_FASTER_PCT = re.compile(r"^\s*-\d+(?:\.\d+)?%(?:\s+(?:time|host time|latency))?\b", re.I)
_FASTER_WORDS = re.compile(r"\b(?:faster|speed-?up|helps|improve[sd]?|improvement)\b", re.I)
_NEGATED = re.compile(r"\b(?:no|not|without|never)\b", re.I)
# A config that describes the fix (before = with the pattern, after = without it).
_FIX_DIRECTION = re.compile(
    r"->|→|\binstead of\b|\bremoved\b|\bwithout\b|\bfixed\b|\bavoid", re.IGNORECASE
)


def row_says_it_helps(row: EvidenceRow) -> bool:
    """A row whose After reads better while its config does not describe the fix."""
    if _FIX_DIRECTION.search(row.config):
        return False
    change = row.change
    faster = bool(_FASTER_PCT.search(change)) or (
        bool(_FASTER_WORDS.search(change)) and not _NEGATED.search(change)
    )
    return faster


def anti_pattern_helps(entry: Entry) -> list[EvidenceRow]:
    """The rows of an anti-pattern's evidence that say the pattern helps."""
    if entry.kind is not Kind.ANTI_PATTERN:
        return []
    return [row for block in entry.evidence for row in block.rows if row_says_it_helps(row)]
