"""Write a script's results file: ``results/<folder>/<stem>-<UTC stamp>.json``, stamped with
the date and the command that made it, as every measured figure in this repository is."""

from __future__ import annotations

import datetime as dt
import json
import shlex
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def write(folder: str, stem: str, script: str, argv: list[str], what: str, **fields: Any) -> Path:
    """Write ``{"what", "date", "command", **fields}`` and say where; ``script`` is the
    script's file name under scripts/, ``argv`` its arguments (the command line recorded)."""
    now = dt.datetime.now(dt.UTC)
    out = ROOT / "results" / folder / f"{stem}-{now:%Y%m%dT%H%M%SZ}.json"
    result = {
        "what": what,
        "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": shlex.join(["python", f"scripts/{script}", *argv]),
        **fields,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")
    return out
