"""The knowledge base on disk.

Paths are enforced both ways: a file's folder must agree with its front matter (kind,
language), and every entry is written to the folder its fields prescribe.  Loading
reports every problem as `path:line: message` and never skips a file silently.  Every
write is validated, atomic (temporary file + rename) and serialized by an inter-process
lock; then the `on_write` listeners refresh what is derived from the entries (the
`catalog/` index, the search index).

A store reads two layers (`kbopt.layers`): the project's `docs/knowledge/` over the
catalog bundled with kbopt.  A project entry replaces the bundled entry of the same
name, and every write goes to the project: changing a bundled entry writes the changed
copy into the project, where it replaces the bundled one; the bundled files are never
modified.

The update protocol is the public API here: `add_optimization`, `add_anti_pattern`,
`append_evidence`, `narrow_conditions`, `add_interaction`, `convert_kind` and `update`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import socket
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock, Timeout

from kbopt.errors import KbError, Problem, ProblemList
from kbopt.layers import BUNDLED, PACKAGED_RELPATH, PROJECT, BundledChoice, Layer, layers_for
from kbopt.model import (
    Entry,
    EvidenceBlock,
    Interaction,
    MetricEffect,
    Trigger,
    entry_relpath,
    validate_name,
)
from kbopt.store_hooks import _ATTACH_TO_EVERY_STORE
from kbopt.store_hooks import attach_to_every_store as attach_to_every_store
from kbopt.template import parse_entry, render_entry, scaffold
from kbopt.textio import file_kind, read_text
from kbopt.vocab import Kind, Language, Status

KNOWLEDGE_DIR = Path("docs") / "knowledge"
CATALOG_DIR = Path("catalog")
LOCK_NAME = ".kbopt.lock"
# Beside the lock: who holds it (pid, host, command, since), for the message of a writer
# that gave up waiting.
LOCK_OWNER_NAME = ".kbopt.lock.owner"
LOCK_TIMEOUT_ENV = "KBOPT_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT_S = 60.0
# Files a Sphinx tree may keep beside entries; everything else must be an entry.
NON_ENTRY_FILES = {"index.md", "README.md"}
# How generated files (catalog/, the site) name a bundled entry's file: its place inside
# the installed package, the same on every machine.
BUNDLED_PUBLIC_DIR = Path("kbopt") / PACKAGED_RELPATH

Listener = Callable[[list[Path]], None]
# What every new Store attaches is registered in kbopt.store_hooks (kbopt/__init__.py
# registers the catalog/ index there, without importing this module).


def find_project_root(start: Path | None = None) -> Path:
    """`KBOPT_ROOT`, else the nearest folder above `start` holding docs/knowledge."""
    env = os.environ.get("KBOPT_ROOT")
    if env:
        root = Path(env).resolve()
        if not root.is_dir():  # as `--root`: a typo must not create a new project somewhere
            raise KbError(f"KBOPT_ROOT={env}: no such folder")
        return root
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / KNOWLEDGE_DIR).is_dir():
            return candidate
    package_parent = Path(__file__).resolve().parent.parent
    if (package_parent / KNOWLEDGE_DIR).is_dir():
        return package_parent
    raise KbError(
        "no knowledge base found: run inside a kbopt project (a folder with docs/knowledge/; "
        "`kbopt init` sets one up) or set KBOPT_ROOT"
    )


def classify_path(relpath: Path) -> tuple[Kind, Language | None] | str:
    """(kind, language) that the folder layout assigns to a path under a knowledge root, or why not."""
    parts = relpath.parts
    folders = {k.folder: k for k in Kind}
    if len(parts) == 2 and parts[0] in folders:
        return folders[parts[0]], None
    if len(parts) == 4 and parts[0] == "languages" and parts[2] in folders:
        try:
            return folders[parts[2]], Language(parts[1])
        except ValueError:
            known = ", ".join(lang.value for lang in Language)
            return f"unknown language folder {parts[1]!r} (known: {known})"
    return (
        "not a knowledge-base path: entries live in optimizations/, anti-patterns/, or "
        "languages/<language>/{optimizations,anti-patterns}/"
    )


@dataclass
class LoadResult:
    entries: list[Entry] = field(default_factory=list)
    paths: dict[str, Path] = field(default_factory=dict)
    problems: list[KbError] = field(default_factory=list)
    layers: dict[str, str] = field(default_factory=dict)  # entry name -> PROJECT or BUNDLED
    # Project entries that replace a bundled entry of the same name.
    overrides: set[str] = field(default_factory=set)

    def by_name(self) -> dict[str, Entry]:
        return {e.name: e for e in self.entries}


class Store:
    """One project's knowledge base: `<root>/docs/knowledge` over the bundled entries,
    and `<root>/catalog`.

    `bundled`: None follows `KBOPT_BUNDLED` (default: the catalog shipped with kbopt),
    False leaves the bundled entries out, a path uses that folder instead.
    `knowledge_dir` is the project layer, where every write goes.
    """

    def __init__(self, root: Path | str | None = None, *, bundled: BundledChoice = None):
        self.root = Path(root).resolve() if root is not None else find_project_root()
        self.knowledge_dir = self.root / KNOWLEDGE_DIR
        self.catalog_dir = self.root / CATALOG_DIR
        self.layers: tuple[Layer, ...] = layers_for(self.knowledge_dir, bundled)
        self._listeners: list[Listener] = []
        for attach in _ATTACH_TO_EVERY_STORE:
            attach(self)

    # ------------------------------------------------------------------ layers

    @property
    def bundled_dir(self) -> Path | None:
        """The bundled layer's folder, or None when this store has the project layer only."""
        return next((la.knowledge_dir for la in self.layers if la.name == BUNDLED), None)

    def layer_of(self, path: Path) -> Layer:
        """The layer a file belongs to (the project's when the folders nest)."""
        resolved = path.resolve()
        for layer in self.layers:
            if resolved.is_relative_to(layer.resolved):
                return layer
        raise KbError(f"{path} is not inside the knowledge base ({self.knowledge_dir})")

    def locate(self, relpath: str) -> Path | None:
        """The file at `relpath` under a knowledge root, from the first layer that has it."""
        for layer in self.layers:
            path = layer.knowledge_dir / relpath
            if path.is_file():
                return path
        return None

    def public_path(self, path: Path) -> str:
        """A file's path as generated files (catalog/, the site) show it: the same on
        every machine, `docs/knowledge/...` for the project, the package path for bundled."""
        layer = self.layer_of(path)
        rel = path.resolve().relative_to(layer.resolved).as_posix()
        base = KNOWLEDGE_DIR if layer.name == PROJECT else BUNDLED_PUBLIC_DIR
        return f"{base.as_posix()}/{rel}"

    # ------------------------------------------------------------------ reading

    def display(self, path: Path) -> str:
        # The path as walked first: a link is shown where it is, not where it points.
        try:
            return str(path.absolute().relative_to(self.root))
        except ValueError:
            pass
        try:
            return str(path.resolve().relative_to(self.root))
        except (ValueError, OSError, RuntimeError):  # outside, or a link loop
            return str(path)

    def _layer_files(self, layer: Layer) -> list[Path]:
        return self._scan_layer(layer)[0]

    def _scan_layer(self, layer: Layer) -> tuple[list[Path], list[KbError]]:
        """The entry files of one layer, and the odd files skipped with a warning.

        Folders are walked without following symbolic links.  A `.md` that is not a
        regular file (a FIFO would block the reader, a device or folder is no entry) or a
        link leading out of the layer is skipped, never opened, and reported.
        """
        root = layer.knowledge_dir
        if not root.is_dir():
            return [], []
        files: list[Path] = []
        skipped: list[KbError] = []
        for folder, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            base = Path(folder)
            for d in list(dirnames):
                if (base / d).is_symlink():  # walked without following: say so
                    dirnames.remove(d)
                    skipped.append(
                        Problem(
                            "a symbolic link to a folder; skipped (not followed)",
                            self.display(base / d),
                            1,
                        )
                    )
            for name in sorted(filenames):
                if not name.endswith(".md") or name in NON_ENTRY_FILES or name.startswith("."):
                    continue
                path = base / name
                if any(ord(c) < 32 or c == "\x7f" for c in name):
                    # A newline in a file name would split every line that shows it.
                    shown = self.display(base) + "/" + repr(name)[1:-1]
                    skipped.append(Problem("file name has a control character; skipped", shown, 1))
                    continue
                why = self._odd_file(path, layer)
                if why is None:
                    files.append(path)
                else:
                    skipped.append(Problem(f"{why}; skipped", self.display(path), 1))
            # A folder named like an entry (x.md/) is no entry either.
            for d in list(dirnames):
                if d.endswith(".md") and d not in NON_ENTRY_FILES:
                    skipped.append(
                        Problem(
                            "is a folder, not an entry file; skipped", self.display(base / d), 1
                        )
                    )
        return sorted(files), skipped

    @staticmethod
    def _odd_file(path: Path, layer: Layer) -> str | None:
        """Why `path` cannot be read as an entry (without opening it), or None."""
        try:
            info = path.lstat()
        except OSError as exc:
            return f"cannot read: {exc.strerror}"
        if stat.S_ISLNK(info.st_mode):
            try:
                target = path.resolve(strict=True)
                info = target.stat()
            except (OSError, RuntimeError):
                return "a symbolic link to nothing (broken or looping)"
            if not target.is_relative_to(layer.resolved):
                return f"a symbolic link to {target}, outside the knowledge base"
        if not stat.S_ISREG(info.st_mode):
            return f"{file_kind(info.st_mode)}, not a regular file"
        return None

    def _visible_files(self) -> tuple[list[tuple[Layer, Path]], set[str]]:
        """Every file a reader sees, with its layer, and the names the project overrides.

        A layer's file is hidden when an upper layer has a file of the same name; two
        files of one name in the same layer both stay (loading reports the duplicate).
        """
        visible: list[tuple[Layer, Path]] = []
        above: set[str] = set()
        overridden: set[str] = set()
        self._skipped: list[KbError] = []
        for layer in self.layers:
            files, skipped = self._scan_layer(layer)
            self._skipped += skipped
            for path in files:
                if path.stem in above:
                    overridden.add(path.stem)
                else:
                    visible.append((layer, path))
            above |= {p.stem for p in files}
        return visible, overridden

    def entry_files(self) -> list[Path]:
        """The entry files a reader sees: the project's, then the bundled ones not overridden."""
        return [path for _, path in self._visible_files()[0]]

    def path_for(self, entry: Entry) -> Path:
        """Where `entry` is written: its path in the project layer."""
        return self.knowledge_dir / entry.relpath()

    def read_file(self, path: Path) -> Entry:
        """Parse one file of the knowledge base (either layer), checking its location too."""
        return self._read(path, self.layer_of(path))

    def _read(self, path: Path, layer: Layer) -> Entry:
        shown = self.display(path)
        why = self._odd_file(path, layer)
        if why is not None:
            raise ProblemList([Problem(why, shown, 1)])
        text = read_text(path, shown=shown)
        # Where the file is (a link inside the layer is placed by its own folder).
        here = path.absolute()
        if here.is_relative_to(layer.knowledge_dir.absolute()):
            rel = here.relative_to(layer.knowledge_dir.absolute())
        else:
            rel = path.resolve().relative_to(layer.resolved)
        placed = classify_path(rel)
        if isinstance(placed, str):
            raise ProblemList([Problem(placed, shown, 1)])
        kind, language = placed
        entry = parse_entry(text, name=path.stem, path=shown)
        problems = []
        key_line = {
            line.split(":", 1)[0]: i
            for i, line in enumerate(text.splitlines()[:20], start=1)
            if ":" in line
        }
        if entry.kind is not kind:
            problems.append(
                Problem(
                    f"kind is {entry.kind.value!r} but the file is in the {kind.folder}/ folder",
                    shown,
                    key_line.get("kind", 1),
                )
            )
        if entry.language != language:
            want = language.value if language else "none (shared entry)"
            have = entry.language.value if entry.language else "none (shared)"
            problems.append(
                Problem(
                    f"language is {have} but the file's folder says {want}",
                    shown,
                    key_line.get("language", key_line.get("kind", 1)),
                )
            )
        if problems:
            raise ProblemList(problems)
        return entry

    def load_all(self) -> LoadResult:
        """Every entry file a reader sees, parsed; every problem kept with its path and line."""
        result = LoadResult()
        visible, result.overrides = self._visible_files()
        result.problems.extend(self._skipped)
        for layer, path in visible:
            try:
                entry = self._read(path, layer)
            except ProblemList as exc:
                result.problems.extend(exc.problems)
                continue
            if entry.name in result.paths:
                other = self.display(result.paths[entry.name])
                result.problems.append(
                    Problem(
                        f"duplicate entry name {entry.name!r} (also at {other})",
                        self.display(path),
                        1,
                    )
                )
                continue
            result.entries.append(entry)
            result.paths[entry.name] = path
            result.layers[entry.name] = layer.name
        return result

    def entries(self) -> list[Entry]:
        """All entries; raise if any file has a problem (use `load_all` to see them all)."""
        result = self.load_all()
        if result.problems:
            raise ProblemList(result.problems)
        return result.entries

    def find(self, name: str) -> Path | None:
        """The file of entry `name` that a reader sees (the project's before a bundled one)."""
        validate_name(name)
        for path in self.entry_files():
            if path.stem == name:
                return path
        return None

    def get(self, name: str) -> Entry:
        path = self.find(name)
        if path is None:
            raise KbError(f"no entry named {name!r} (try `kbopt list` or `kbopt search`)")
        return self.read_file(path)

    def is_bundled(self, path: Path) -> bool:
        return self.layer_of(path).name == BUNDLED

    # ------------------------------------------------------------------ writing

    def on_write(self, listener: Listener) -> None:
        """Call `listener(changed_paths)` after every successful write (catalog/, search index...)."""
        self._listeners.append(listener)

    @contextmanager
    def locked(self, timeout: float | None = None) -> Iterator[None]:
        """The inter-process write lock: writers to one knowledge base take turns.

        A writer waits up to `timeout` seconds (default: KBOPT_LOCK_TIMEOUT, else 60),
        then gives up with a KbError naming the process that holds the lock.
        """
        self.knowledge_dir.mkdir(parents=True, exist_ok=True)
        lock_path = self.knowledge_dir / LOCK_NAME
        owner_path = self.knowledge_dir / LOCK_OWNER_NAME
        try:
            mode = lock_path.lstat().st_mode
        except FileNotFoundError:
            mode = None
        # A link would make the lock truncate whatever it points to: refused like a folder.
        if mode is not None and not stat.S_ISREG(mode):
            raise KbError(
                f"{self.display(lock_path)} is {file_kind(mode)}, not the lock file kbopt "
                "keeps there; remove it"
            )
        wait = lock_timeout() if timeout is None else timeout
        lock = FileLock(str(lock_path), timeout=wait)
        try:
            lock.acquire()
        except Timeout:
            raise KbError(
                f"the knowledge base is locked by {_lock_owner(owner_path)}; gave up after "
                f"{wait:g} s (wait for it to finish, or set {LOCK_TIMEOUT_ENV} to wait longer)"
            ) from None
        except OSError as exc:
            raise KbError(
                f"cannot take the lock {self.display(lock_path)}: {exc.strerror}"
            ) from None
        try:
            _write_lock_owner(owner_path)
            yield
        finally:
            owner_path.unlink(missing_ok=True)
            lock.release()

    def write(self, entry: Entry, *, overwrite: bool = False, check_targets: bool = True) -> Path:
        """Validate and write one entry atomically; refuse to clobber unless `overwrite`."""
        validate_name(entry.name)
        with self.locked():
            return self._write_locked(entry, overwrite=overwrite, check_targets=check_targets)

    def _write_locked(
        self,
        entry: Entry,
        *,
        overwrite: bool,
        check_targets: bool,
        source: tuple[str, str] | None = None,
    ) -> Path:
        target = self.path_for(entry)
        existing = self.find(entry.name)
        if existing is not None and not overwrite:
            if self.is_bundled(existing):
                raise KbError(
                    f"entry {entry.name!r} is bundled with kbopt ({self.display(existing)}); "
                    "to change it for this project, update it (kbopt add --update, or "
                    "Store.update): the changed copy is written to docs/knowledge/ and "
                    "replaces the bundled one"
                )
            raise KbError(
                f"entry {entry.name!r} already exists at {self.display(existing)}; "
                "update it explicitly (kbopt add --update, or Store.update)"
            )
        if existing is not None and self._relpath(existing) != entry.relpath():
            old = self.get(entry.name)
            if old.kind != entry.kind:
                how = (
                    f"its kind changed ({old.kind.value} -> {entry.kind.value}): turn it over "
                    "with Store.convert_kind (the agents' convert_kind tool), which moves it "
                    "and keeps its evidence"
                )
            else:
                how = (
                    f"its language changed ({old.language or 'shared'} -> "
                    f"{entry.language or 'shared'}): an update does not move an entry; move "
                    "the file there yourself (git mv), then update it"
                )
            raise KbError(
                f"entry {entry.name!r} lives at {self.display(existing)} but its fields say "
                f"{self.display(target)}; {how}"
            )
        text = checked_text(entry, self.display(target))
        if check_targets:
            self._check_targets(entry, source)
        self._check_inside(target)
        atomic_write(target, text)
        self._after_write([target])
        return target

    def _check_inside(self, target: Path) -> None:
        """A write lands in the project's knowledge folder: never through a folder link
        that leads out of it."""
        root = self.knowledge_dir.resolve()
        if not target.parent.resolve().is_relative_to(root):
            raise KbError(
                f"{self.display(target.parent)} leads out of the knowledge base (a symbolic "
                "link?); refused to write there"
            )

    def _relpath(self, path: Path) -> str:
        return path.resolve().relative_to(self.layer_of(path).resolved).as_posix()

    def _check_targets(self, entry: Entry, source: tuple[str, str] | None = None) -> None:
        """Refuse interactions with entries that do not exist; with the `source` file the
        entry was read from (as shown, its text), each at its `## Interactions` line."""
        names = {p.stem for p in self.entry_files()} | {entry.name}
        unknown = [i.target for i in entry.interactions if i.target not in names]
        if not unknown:
            return
        if source is None:
            raise KbError(
                f"entry {entry.name!r} has interactions with unknown entries: {', '.join(unknown)}"
            )
        shown, text = source
        raise ProblemList(
            [
                Problem(
                    f"interaction points at unknown entry {target!r}",
                    shown,
                    _line_in_section(text, "## Interactions", f"`{target}`"),
                )
                for target in unknown
            ]
        )

    def _after_write(self, changed: list[Path]) -> None:
        for listener in self._listeners:
            listener(changed)

    def add_file(self, source: Path, *, overwrite: bool = False) -> Path:
        """`kbopt add FILE`: parse a draft anywhere on disk and file it at its path."""
        return self.add_text(read_text(source, shown=str(source)), str(source), overwrite=overwrite)

    def add_text(self, text: str, shown: str, *, overwrite: bool = False) -> Path:
        """A draft's text (`kbopt add -` reads it from standard input), named `shown` in
        the problems found, filed at its path."""
        entry = parse_entry(text, name=None, path=shown)
        validate_name(entry.name)
        with self.locked():  # as `write`, with the draft to locate a problem in
            return self._write_locked(
                entry, overwrite=overwrite, check_targets=True, source=(shown, text)
            )

    def add_scaffold(self, kind: Kind, name: str, language: Language | None = None) -> Path:
        """`kbopt new`: the template, placeholders and all, at the new entry's project path."""
        validate_name(name)
        with self.locked():
            existing = self.find(name)
            if existing is not None:
                where = "is bundled with kbopt at" if self.is_bundled(existing) else "exists at"
                raise KbError(f"entry {name!r} already {where} {self.display(existing)}")
            path = entry_path(self.root, kind, language, name)
            if path.exists():
                raise KbError(f"{self.display(path)} already exists")
            self._check_inside(path)
            atomic_write(path, scaffold(name, kind.value, language.value if language else None))
            self._after_write([path])
            return path

    def delete(self, name: str) -> Path:
        with self.locked():
            path = self.find(name)
            if path is None:
                raise KbError(f"no entry named {name!r}")
            if self.is_bundled(path):
                raise KbError(
                    f"entry {name!r} is bundled with kbopt and cannot be deleted from a "
                    "project; a project entry of the same name replaces it"
                )
            path.unlink()
            self._after_write([path])
            return path

    # ------------------------------------------------------- update protocol

    def add_optimization(self, entry: Entry) -> Path:
        """A validated new optimization, at the shared or language path."""
        if entry.kind is not Kind.OPTIMIZATION:
            raise KbError(f"{entry.name!r} is an {entry.kind.value}, not an optimization")
        return self.write(entry)

    def add_anti_pattern(self, entry: Entry) -> Path:
        """A clear regression, recorded as a reusable failure pattern."""
        if entry.kind is not Kind.ANTI_PATTERN:
            raise KbError(f"{entry.name!r} is an {entry.kind.value}, not an anti-pattern")
        if not entry.affected_metrics:
            raise KbError(
                "an anti-pattern must record the metrics that revealed it (Affected Metrics)"
            )
        return self.write(entry)

    def update(self, entry: Entry) -> Path:
        """Replace an existing entry explicitly (its kind and language must not change)."""
        if self.find(entry.name) is None:
            raise KbError(f"no entry named {entry.name!r} to update; add it instead")
        return self.write(entry, overwrite=True)

    def _modify(self, name: str, change: Callable[[Entry], Entry], today: dt.date | None) -> Path:
        # A bundled entry is read from the bundled layer and written, changed, to the
        # project layer: the project copy then replaces it.
        with self.locked():
            path = self.find(name)
            if path is None:
                raise KbError(f"no entry named {name!r}")
            entry = self.read_file(path)
            new = change(entry.model_copy(deep=True))
            new.updated = today or dt.date.today()
            return self._write_locked(new, overwrite=True, check_targets=True)

    def append_evidence(
        self,
        name: str,
        block: EvidenceBlock,
        *,
        status: Status | None = None,
        today: dt.date | None = None,
    ) -> Path:
        """New evidence refines an estimated effect or a failure mode."""

        def change(e: Entry) -> Entry:
            e.evidence = [*e.evidence, block]
            if status is not None:
                e.status = status
            return e

        return self._modify(name, change, today)

    def narrow_conditions(
        self,
        name: str,
        *,
        contexts: list[str] | None = None,
        triggers: list[Trigger] | None = None,
        pitfall: str | None = None,
        today: dt.date | None = None,
    ) -> Path:
        """An entry shown wrong in some situations gets a tighter When to Apply."""
        if not (contexts or triggers or pitfall):
            raise KbError("narrow_conditions needs at least one context, trigger or pitfall")

        def change(e: Entry) -> Entry:
            e.contexts = [*e.contexts, *(contexts or [])]
            have = {t.expression for t in e.triggers}
            e.triggers = [*e.triggers, *[t for t in triggers or [] if t.expression not in have]]
            if pitfall:
                e.pitfalls = [*e.pitfalls, pitfall]
            return e

        return self._modify(name, change, today)

    def add_interaction(
        self, name: str, interaction: Interaction, *, today: dt.date | None = None
    ) -> Path:
        """A new interaction between optimizations."""

        def change(e: Entry) -> Entry:
            e.interactions = [
                *[
                    i
                    for i in e.interactions
                    if (i.relation, i.target) != (interaction.relation, interaction.target)
                ],
                interaction,
            ]
            return e

        return self._modify(name, change, today)

    def convert_kind(
        self,
        name: str,
        *,
        evidence: EvidenceBlock,
        context: str,
        failure: str = "",
        revealed_by: list[MetricEffect] | None = None,
        trigger: Trigger | None = None,
        situations: list[str] | None = None,
        generalization: str = "",
        today: dt.date | None = None,
    ) -> Path:
        """An optimization shown to hurt becomes an anti-pattern (or back).

        Into an anti-pattern the entry is rewritten as one: `failure` (the failure pattern)
        is its Mechanism, `revealed_by` (the metrics that showed it) its Affected Metrics,
        `context` plus `situations` (where it happens) its When to Apply, `trigger` (which
        detects that situation) its trigger, and `evidence` (the regression) its only
        evidence.  The optimization's text survives only as a history note in Pitfalls.
        Back into an optimization, `context` and `evidence` are added to what the entry
        says.  The old file is removed and the new one written at the other kind's path in
        one locked step; a bundled entry stays where it is: the converted project entry of
        the same name replaces it.
        """
        with self.locked():
            path = self.find(name)
            if path is None:
                raise KbError(f"no entry named {name!r}")
            old = self.read_file(path)
            day = today or dt.date.today()
            if old.kind is Kind.OPTIMIZATION:
                new = _as_anti_pattern(
                    old,
                    evidence=evidence,
                    situations=[context, *(situations or [])],
                    failure=failure,
                    revealed_by=revealed_by or [],
                    trigger=trigger,
                    generalization=generalization,
                    day=day,
                )
            else:
                new = old.model_copy(deep=True)
                new.kind = Kind.OPTIMIZATION
                new.contexts = [context, *old.contexts]
                new.evidence = [*old.evidence, evidence]
            new.status = Status.VALIDATED
            new.updated = day
            target = self.path_for(new)
            text = checked_text(new, self.display(target))
            self._check_inside(target)
            atomic_write(target, text)
            changed = [target]
            if not self.is_bundled(path):
                path.unlink()
                changed.insert(0, path)
            self._after_write(changed)
            return target


def _as_anti_pattern(
    old: Entry,
    *,
    evidence: EvidenceBlock,
    situations: list[str],
    failure: str,
    revealed_by: list[MetricEffect],
    trigger: Trigger | None,
    generalization: str,
    day: dt.date,
) -> Entry:
    """`old` (an optimization) rewritten as the anti-pattern its regression showed."""
    missing = [
        what
        for what, value in (
            ("the failure pattern (failure)", failure.strip()),
            ("the metrics that revealed it (revealed_by)", revealed_by),
            ("a trigger that detects the situation (trigger)", trigger),
        )
        if not value
    ]
    if missing:
        raise KbError(
            f"converting {old.name!r} into an anti-pattern needs {', '.join(missing)}: the "
            "entry is rewritten as a failure pattern, not moved with its optimization text"
        )
    assert trigger is not None
    new = old.model_copy(deep=True)
    new.kind = Kind.ANTI_PATTERN
    new.title = old.title if "regress" in old.title.lower() else f"{old.title}, where it regresses"
    new.contexts = [s for s in situations if s.strip()]
    new.triggers = [trigger]
    new.mechanism = failure.strip()
    new.affected_metrics = list(revealed_by)
    new.evidence = [evidence]
    new.generalization = generalization.strip() or (
        f"Before applying this change, check `{trigger.expression}`: where it holds, the "
        "change is a regression, for the reason given in Mechanism."
    )
    sources = "; ".join(b.source for b in old.evidence) or "none"
    new.pitfalls = [
        f"History: filed as the optimization {old.title!r} until {day.isoformat()}; its "
        f"earlier evidence ({sources}) and text are in the version history of this entry.",
    ]
    return new


def checked_text(entry: Entry, shown: str) -> str:
    """The canonical Markdown of `entry`, checked to load back as the same entry.

    Anything the Markdown cannot carry (a field that would split a line or a table
    row, text that reads as another section) is refused here, before the file exists.
    """
    text = render_entry(entry)
    back = parse_entry(text, name=entry.name, path=shown)
    if back != entry:
        fields = [
            name for name in type(entry).model_fields if getattr(back, name) != getattr(entry, name)
        ]
        raise KbError(
            f"entry {entry.name!r} would not load back as written (fields: "
            f"{', '.join(fields) or 'unknown'}): remove line breaks, '## ' headings or "
            "backticks that the template gives a meaning to",
            shown,
            1,
        )
    return text


def lock_timeout() -> float:
    """Seconds a writer waits for the lock: KBOPT_LOCK_TIMEOUT, else 60."""
    raw = os.environ.get(LOCK_TIMEOUT_ENV)
    if not raw:
        return DEFAULT_LOCK_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 86400:  # NaN fails this too
        raise KbError(f"{LOCK_TIMEOUT_ENV} must be seconds between 0 and 86400, got {raw!r}")
    return value


def _write_lock_owner(path: Path) -> None:
    import sys

    info = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": " ".join(sys.argv)[:200],
        "since": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    # The owner note is a courtesy; the lock itself is what serializes writers.  Replaced,
    # never written through: a link planted there is replaced, not followed.
    with contextlib.suppress(OSError):
        atomic_write(path, json.dumps(info) + "\n")


def _lock_owner(path: Path) -> str:
    """Who holds the lock, in words, from the owner note (when it can be read)."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > 4096:
            raise ValueError
        info = json.loads(path.read_text(encoding="utf-8"))
        who = f"process {int(info['pid'])} on {info['host']}"
        if info.get("command"):
            who += f" ({info['command']})"
        if info.get("since"):
            who += f" since {info['since']}"
        return who
    except (OSError, ValueError, KeyError, TypeError):
        return "another process (it left no owner note)"


def _new_file_mode() -> int:
    """The mode `open()` gives a new file under the current umask (0o666 & ~umask)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write `data` so that readers see the old file or the new one, never half of it.

    Text is written as given (no newline translation).  A replaced file keeps its mode
    (an executable script stays executable); a new file gets the usual mode under the
    umask, not the owner-only mode of a temporary file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = _new_file_mode()
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def entry_path(root: Path, kind: Kind, language: Language | None, name: str) -> Path:
    return root / KNOWLEDGE_DIR / entry_relpath(kind, language, validate_name(name))


def _line_in_section(text: str, heading: str, needle: str) -> int:
    """The first line under `heading` that holds `needle` (else the heading's, else 1)."""
    start = None
    for i, line in enumerate(text.splitlines(), start=1):
        if start is None:
            if line.strip() == heading:
                start = i
        elif needle in line:
            return i
    return start or 1
