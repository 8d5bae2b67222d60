"""SELECT: the implementation language, chosen from the control the plan needs.

The rule: a plan whose optimizations need thread/warp-level control (warp specialization,
TMA multicast, register reallocation between warpgroups, wgmma) goes to CuTe DSL; a plan
of tile-level changes (block sizes, fusion, split-KV, vectorized access) stays in Triton.
Then the device: cuTile and Triton's TileIR backend need Blackwell (SM100+), CuTe DSL's
warp-specialized kernels Hopper (SM90+); a language the device cannot run is not chosen.
Then what exists: on Blackwell a plan of tile-level changes to an existing Triton kernel
goes to the TileIR backend; otherwise a language with versions already in the kernel folder
is preferred among those that give the control needed.

A language given by the user or the designer is kept, and the reason says whether it
gives the control the plan needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from kbopt.vocab import VERSION_FAMILY_LANGUAGE
from kbopt.workflow.prerequisites import LANGUAGE_MIN_SM, device_sm

# What in an entry says it needs warp-level control (id, title or mechanism).
WARP_LEVEL = re.compile(
    r"warp[\s-]?speciali[sz]|producer[\s/-]+consumer|tma[\s-]+multicast|multicast|"
    r"register[\s-]+realloc|setmaxnreg|wgmma|warpgroup",
    re.IGNORECASE,
)
FAMILY_LANGUAGE = {family: lang.value for family, lang in VERSION_FAMILY_LANGUAGE.items()}
PLANNED = 3  # the top-ranked opportunities the choice looks at


@dataclass(frozen=True)
class Planned:
    """One planned optimization as SELECT sees it."""

    id: str
    language: str | None  # the entry's own language, None when shared
    text: str  # id, title and mechanism


@dataclass(frozen=True)
class Selection:
    language: str
    reason: str
    control: str  # "warp-level" or "tile-level"


def needed_control(planned: Iterable[Planned]) -> tuple[str, list[str]]:
    """("warp-level" | "tile-level", the ids that need warp-level control).

    An entry written for one language is implemented in that language by definition: a
    CuTe DSL entry needs CuTe DSL's control, while a Triton (or TileIR, cuTile) entry whose
    text speaks of warps (Triton's own warp specialization of a loop) does not. Only shared
    entries are judged by what their text describes."""
    warp = [
        p.id
        for p in planned
        if p.language == "cute-dsl" or (p.language is None and WARP_LEVEL.search(p.text))
    ]
    return ("warp-level" if warp else "tile-level"), warp


def existing_languages(families: Iterable[str]) -> list[str]:
    return sorted({FAMILY_LANGUAGE[f] for f in families if f in FAMILY_LANGUAGE})


def _runs_on(language: str, sm: int | None) -> bool:
    return sm is None or sm >= LANGUAGE_MIN_SM.get(language, 0)


def choose_language(
    planned: list[Planned],
    *,
    device: str,
    existing: list[str],
    given: str | None = None,
    given_by: str = "",
) -> Selection:
    """The language for the next design step and the reason, in words."""
    top = planned[:PLANNED]
    control, warp_ids = needed_control(top)
    sm = device_sm(device) if device else None
    arch = f"{device} (SM{sm})" if sm is not None else f"{device or 'no device'} (SM unknown)"
    need = (
        f"warp-level control ({', '.join(warp_ids)})"
        if control == "warp-level"
        else f"tile-level changes ({', '.join(p.id for p in top) or 'none ranked'})"
    )
    if given:
        fits = control == "tile-level" or given == "cute-dsl"
        note = "gives" if fits else "does not give"
        device_note = "" if _runs_on(given, sm) else f"; {arch} cannot run it"
        return Selection(
            given,
            f"given by {given_by}; the plan needs {need}, which {given} {note}{device_note}",
            control,
        )
    if control == "warp-level":
        if _runs_on("cute-dsl", sm):
            return Selection(
                "cute-dsl", f"the plan needs {need}: CuTe DSL gives it on {arch}", control
            )
        return Selection(
            "triton",
            f"the plan needs {need}, but {arch} is below CuTe DSL's SM90: Triton, tile-level",
            control,
        )
    if sm is not None and sm >= LANGUAGE_MIN_SM["tileir"] and "triton" in existing:
        return Selection(
            "tileir",
            f"the plan needs {need} and a Triton kernel exists: the TileIR backend on {arch}",
            control,
        )
    exists = " (versions exist)" if "triton" in existing else ""
    return Selection(
        "triton", f"the plan needs {need}: Triton{exists} gives tile-level control", control
    )
