"""scripts/device_wheels.sh: the wheels the GPU machine installs kbopt from."""

from __future__ import annotations

import re
from importlib.metadata import requires, version
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "device_wheels.sh"


def _names() -> list[str]:
    block = re.search(r"names = \[(.*?)\]", SCRIPT.read_text(encoding="utf-8"), re.S)
    assert block is not None, "the script lists its distributions in `names = [...]`"
    return re.findall(r'"([a-z0-9-]+)"', block.group(1))


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_device_wheels_cover_kbopts_pure_python_dependencies_and_theirs() -> None:
    """Every distribution it names is installed here (its version is pinned from .venv), and
    the hard dependencies of pydantic and whoosh-reloaded, which the GPU machine lacks,
    are named too (its torch, triton, numpy, pandas and PyYAML are its own)."""
    names = {_canon(n) for n in _names()}
    assert {"pydantic", "whoosh-reloaded", "liger-kernel"} <= names
    for name in names:
        assert version(name)
    for top in ("pydantic", "whoosh-reloaded"):
        for req in requires(top) or []:
            if "extra ==" in req:
                continue
            dep = _canon(re.split(r"[ ;<>=!~\[(]", req, maxsplit=1)[0])
            assert dep in names, f"{top} needs {dep}"
