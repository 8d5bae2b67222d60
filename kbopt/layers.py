"""Where a store's entries come from: the project's own over the ones bundled with kbopt.

A project's `docs/knowledge/` (the *project* layer) sits over the catalog that ships
inside the kbopt package (the *bundled* layer).  Reading sees both; an entry of the
project replaces the bundled entry of the same name; every write goes to the project.

The bundled folder is, in order of preference:

- `kbopt/bundled/knowledge/` inside the installed package (a wheel carries a copy of
  the repository's `docs/knowledge/`, made by the build step in `setup.py`);
- the `docs/knowledge/` next to the `kbopt/` package folder, i.e. the source checkout
  of an editable install (`make setup`), which copies nothing.

When the bundled folder *is* the project's folder (working inside the kbopt checkout
with its editable install) there is one layer only, so nothing is listed twice.  A
regular install used inside a kbopt checkout needs no special case either: the
checkout's entries carry the same names as the bundled copies and replace them.

`KBOPT_BUNDLED=0` (or `Store(root, bundled=False)`) turns the bundled layer off;
`KBOPT_BUNDLED=/some/knowledge` uses another folder as the bundled layer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from kbopt.errors import KbError

BUNDLED_ENV = "KBOPT_BUNDLED"
PROJECT = "project"
BUNDLED = "bundled"
PACKAGE_DIR = Path(__file__).resolve().parent
# Where the build step puts the catalog inside the package (and so inside a wheel).
PACKAGED_RELPATH = Path("bundled") / "knowledge"
_OFF = {"0", "off", "no", "false", "none"}

BundledChoice = bool | str | Path | None


@dataclass(frozen=True)
class Layer:
    """One folder of entries: `name` is PROJECT or BUNDLED."""

    name: str
    knowledge_dir: Path
    # Resolved once: every file's layer is found by comparing resolved paths.
    resolved: Path = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "resolved", self.knowledge_dir.resolve())


def package_bundled_dir() -> Path | None:
    """The catalog that ships with this kbopt: the packaged copy, else the source checkout."""
    packaged = PACKAGE_DIR / PACKAGED_RELPATH
    if packaged.is_dir():
        return packaged
    source = PACKAGE_DIR.parent / "docs" / "knowledge"
    if source.is_dir():
        return source
    return None


def bundled_dir(choice: BundledChoice = None) -> Path | None:
    """The bundled layer's folder, or None when it is off.

    `choice`: None follows `KBOPT_BUNDLED` (unset: the package's own catalog); True is
    the package's own catalog; False is off; a path is that folder.
    """
    if choice is None:
        env = os.environ.get(BUNDLED_ENV, "").strip()
        if not env:
            return package_bundled_dir()
        if env.lower() in _OFF:
            return None
        return _existing_folder(Path(env).expanduser(), f"{BUNDLED_ENV}={env}")
    if choice is True:
        return package_bundled_dir()
    if choice is False:
        return None
    return _existing_folder(Path(choice), f"the bundled knowledge folder {choice}")


def _existing_folder(path: Path, what: str) -> Path:
    if not path.is_dir():
        raise KbError(
            f"{what} is not a folder: point it at a knowledge folder, or use "
            f"{BUNDLED_ENV}=0 to leave the bundled entries out"
        )
    return path.resolve()


def same_folder(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or os.path.samefile(a, b)
    except OSError:
        return False


def layers_for(project_dir: Path, choice: BundledChoice = None) -> tuple[Layer, ...]:
    """The project layer first, then the bundled one unless it is off or the same folder."""
    layers = [Layer(PROJECT, project_dir)]
    bundled = bundled_dir(choice)
    if bundled is not None and not same_folder(bundled, project_dir):
        layers.append(Layer(BUNDLED, bundled))
    return tuple(layers)
