"""Where the search index lives and which entry files it covers: standard library only.

Both the index (`kbopt.search.index`, whoosh) and the quick read path of the command
line (`kbopt.cli.quick`, which loads neither whoosh nor pydantic) need these answers,
and they must agree, so they are here once.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

CACHE_ENV = "KBOPT_CACHE_DIR"
DEFAULT_CACHE = ".kbopt-cache"
MANIFEST = "manifest.json"
CURRENT = "CURRENT"
LOCK = "write.lock"
SNAPSHOT = "snapshot.json"
# Files a Sphinx tree may keep beside entries (the same set as kbopt.store's).
NON_ENTRY_FILES = frozenset({"index.md", "README.md"})


def index_dir_for(root: Path) -> Path:
    """The index folder of the project at `root` (resolved)."""
    override = os.environ.get(CACHE_ENV)
    if override:
        digest = hashlib.sha1(str(root).encode()).hexdigest()[:12]
        return Path(override).expanduser().resolve() / "search" / digest
    return root / DEFAULT_CACHE / "search"


def owned_dir(index_folder: Path) -> Path:
    """The topmost folder of the cache that kbopt owns (and may clear when damaged):
    `.kbopt-cache/` of a project, `search/` inside a user's KBOPT_CACHE_DIR."""
    if index_folder.name == "search" and index_folder.parent.name == DEFAULT_CACHE:
        return index_folder.parent
    return index_folder.parent if index_folder.parent.name == "search" else index_folder


def stem(rel: str) -> str:
    """The entry name of a document key (`languages/triton/optimizations/x.md` -> x)."""
    return rel.rsplit("/", 1)[-1][:-3]


def walk_layer(
    root: str, folders: dict[str, int] | None = None, skipped: list[str] | None = None
) -> dict[str, tuple[int, int]]:
    """(mtime_ns, size) of every entry file under one knowledge root, by relative path.

    Walked with `os.scandir` (no Path objects: this runs on every freshness check over
    thousands of files) without following links to folders.  Only what the store
    reads counts: a FIFO, a device or a folder named `x.md` is skipped (a FIFO would
    block whoever opens it), and so is a link to a file outside the root.  `folders`,
    when given, receives each folder's mtime (for the cheap between-scans check);
    `skipped` the paths of the odd files left out (the store warns about those).
    """
    out: dict[str, tuple[int, int]] = {}
    real_root = os.path.realpath(root)

    def walk(folder: str, prefix: str) -> None:
        try:
            if folders is not None:
                folders[folder] = os.stat(folder).st_mtime_ns
            entries = list(os.scandir(folder))
        except OSError:
            return
        for e in entries:
            name = e.name
            if name.startswith("."):
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    walk(e.path, prefix + name + "/")
                    continue
                if not name.endswith(".md") or name in NON_ENTRY_FILES:
                    continue
                if name.endswith(".md") and e.is_dir():  # a folder named like an entry
                    raise ValueError(name)
                if e.is_symlink():
                    target = os.path.realpath(e.path)
                    if os.path.commonpath([target, real_root]) != real_root:
                        raise ValueError(name)  # a link out of the knowledge base
                st = e.stat()
            except (OSError, ValueError):  # vanished, a link to nowhere, another drive
                if skipped is not None:
                    skipped.append(e.path)
                continue
            if stat.S_ISREG(st.st_mode):
                out[prefix + name] = (st.st_mtime_ns, st.st_size)
            elif skipped is not None:
                skipped.append(e.path)

    walk(root, "")
    return out


def visible_entries(
    layer_dirs: list[str],
    folders: dict[str, int] | None = None,
    skipped: list[str] | None = None,
) -> dict[str, tuple[int, int]]:
    """The entry files a reader sees over layers (top first): a lower layer's file is
    left out when an upper layer has one of the same name."""
    out: dict[str, tuple[int, int]] = {}
    above: set[str] = set()
    for i, d in enumerate(layer_dirs):
        found = walk_layer(d, folders, skipped)
        if i == 0:  # the top layer hides nothing of its own
            out.update(found)
        else:
            out.update((rel, st) for rel, st in found.items() if stem(rel) not in above)
        if i + 1 < len(layer_dirs):
            above |= {stem(rel) for rel in found}
    return out
