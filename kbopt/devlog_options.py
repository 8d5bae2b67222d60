"""A kernel's optional devlog settings, `<kernel folder>/devlog.toml`, and TOML reading.

`kbopt devlog KERNEL` needs nothing but the spec and the results; this file only says how
its Nsight Compute profiles name and explain what ncu saw, in the kernel's own words:

    target_pct = 60              # the "meets / misses the N% target" verdicts (default 60)

    [stages.main]                # a launch label of the profiled call (ncu target sidecar)
    name = "attention"           # the Stages row's name (default: ncu's kernel name)
    [stages.combine]
    name = "combine"
    bottleneck = "memory"        # fixed class and key issue instead of the counter rules;
    key_issue = "{splits} partials per row merged"   # fields of the launch record

    [root_cause]                 # the Root cause line per rule (spills, compute, memory,
    latency = "..."              # latency), with {tc} {dram} {occ} {regs} {local_mb}

Without the file every stage is named by ncu's kernel name and diagnosed by the counter
rules in `kbopt.devlog_profiles`, worded for any kernel.  The settings of a label apply to
the launches of the kernel's versions, never to a call that did not count its launches
(a plain-torch baseline).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbopt.errors import KbError
from kbopt.vocab import Bottleneck

DEVLOG_OPTIONS_FILE = "devlog.toml"
DEFAULT_TARGET_PCT = 60.0
RULES = ("spills", "compute", "memory", "latency")


def shown(path: Path) -> str:
    """A path for a message: relative to the current folder when it is inside it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file as a dict; a syntax error is one line naming the file and line."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise KbError(f"cannot read {shown(path)}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise KbError(f"{shown(path)}: not valid TOML: {exc}") from None


@dataclass(frozen=True)
class StageOptions:
    name: str | None = None
    bottleneck: Bottleneck | None = None
    key_issue: str | None = None


@dataclass(frozen=True)
class DevlogOptions:
    target_pct: float = DEFAULT_TARGET_PCT
    stages: dict[str, StageOptions] = field(default_factory=dict)
    root_cause: dict[str, str] = field(default_factory=dict)


def load_options(folder: Path) -> DevlogOptions:
    """The kernel folder's devlog.toml, or the defaults when it has none."""
    path = folder / DEVLOG_OPTIONS_FILE
    if not path.is_file():
        return DevlogOptions()
    data = read_toml(path)
    where = shown(path)
    unknown = sorted(set(data) - {"target_pct", "stages", "root_cause"})
    if unknown:
        raise KbError(
            f"{where}: unknown setting(s) {', '.join(unknown)} (known: target_pct, stages, "
            "root_cause)"
        )
    target = data.get("target_pct", DEFAULT_TARGET_PCT)
    if isinstance(target, bool) or not isinstance(target, int | float) or not 0 < target <= 100:
        raise KbError(f"{where}: target_pct must be a percentage between 0 and 100")
    stages: dict[str, StageOptions] = {}
    for label, st in dict(data.get("stages", {})).items():
        if not isinstance(st, dict) or set(st) - {"name", "bottleneck", "key_issue"}:
            raise KbError(
                f"{where}: [stages.{label}] takes name, bottleneck and key_issue (strings)"
            )
        bottleneck = None
        if "bottleneck" in st:
            try:
                bottleneck = Bottleneck(str(st["bottleneck"]).lower())
            except ValueError:
                known = ", ".join(b.value for b in Bottleneck)
                raise KbError(
                    f"{where}: [stages.{label}] bottleneck {st['bottleneck']!r} is not one of "
                    f"{known}"
                ) from None
        stages[label] = StageOptions(st.get("name"), bottleneck, st.get("key_issue"))
    causes = dict(data.get("root_cause", {}))
    bad = sorted(set(causes) - set(RULES))
    if bad:
        raise KbError(f"{where}: [root_cause] knows {', '.join(RULES)}, not {', '.join(bad)}")
    return DevlogOptions(float(target), stages, {k: str(v) for k, v in causes.items()})
