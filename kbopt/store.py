"""The knowledge base on disk.

Paths follow KB2 and are enforced both ways: a file's folder must agree with its
front matter (kind, language), and every entry is written to the folder its fields
prescribe.  Loading reports every problem as `path:line: message` and never skips a
file silently.  Every write is validated, atomic (temporary file + rename) and
serialized by an inter-process lock, and it refreshes the generated `catalog/`.

The update protocol of the Japanese source (KB7-KB9) is the public API here:
`add_optimization`, `add_anti_pattern`, `append_evidence`, `narrow_conditions`,
`add_interaction`, `convert_kind` and `update`.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock

from kbopt.errors import KbError, Problem, ProblemList
from kbopt.model import (
    Entry,
    EvidenceBlock,
    Interaction,
    Trigger,
    entry_relpath,
    validate_name,
)
from kbopt.template import parse_entry, render_entry
from kbopt.vocab import Kind, Language, Status

KNOWLEDGE_DIR = Path("docs") / "knowledge"
CATALOG_DIR = Path("catalog")
LOCK_NAME = ".kbopt.lock"
# Files a Sphinx tree may keep beside entries; everything else must be an entry.
NON_ENTRY_FILES = {"index.md", "README.md"}


def find_project_root(start: Path | None = None) -> Path:
    """`KBOPT_ROOT`, else the nearest folder above `start` holding docs/knowledge."""
    env = os.environ.get("KBOPT_ROOT")
    if env:
        return Path(env).resolve()
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / KNOWLEDGE_DIR).is_dir():
            return candidate
    package_parent = Path(__file__).resolve().parent.parent
    if (package_parent / KNOWLEDGE_DIR).is_dir():
        return package_parent
    raise KbError(
        "no knowledge base found: run inside a kbopt project (a folder with docs/knowledge/) "
        "or set KBOPT_ROOT"
    )


def classify_path(relpath: Path) -> tuple[Kind, Language | None] | str:
    """(kind, language) that KB2 assigns to a path under the knowledge root, or why not."""
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

    def by_name(self) -> dict[str, Entry]:
        return {e.name: e for e in self.entries}


class Store:
    """One project's knowledge base: `<root>/docs/knowledge` and `<root>/catalog`."""

    def __init__(self, root: Path | str | None = None):
        self.root = Path(root).resolve() if root is not None else find_project_root()
        self.knowledge_dir = self.root / KNOWLEDGE_DIR
        self.catalog_dir = self.root / CATALOG_DIR
        self._listeners: list[Callable[[list[Path]], None]] = []

    # ------------------------------------------------------------------ reading

    def display(self, path: Path) -> str:
        try:
            return str(path.resolve().relative_to(self.root))
        except ValueError:
            return str(path)

    def entry_files(self) -> list[Path]:
        if not self.knowledge_dir.is_dir():
            return []
        return sorted(
            p
            for p in self.knowledge_dir.rglob("*.md")
            if p.name not in NON_ENTRY_FILES and not p.name.startswith(".")
        )

    def path_for(self, entry: Entry) -> Path:
        return self.knowledge_dir / entry.relpath()

    def read_file(self, path: Path) -> Entry:
        """Parse one file in the knowledge base, checking its location (KB2) too."""
        shown = self.display(path)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ProblemList([Problem(f"not UTF-8 text: {exc}", shown, 1)]) from None
        except OSError as exc:
            raise ProblemList([Problem(f"cannot read: {exc.strerror}", shown, 1)]) from None
        rel = path.resolve().relative_to(self.knowledge_dir.resolve())
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
        """Every entry file, parsed; every problem kept with its path and line."""
        result = LoadResult()
        for path in self.entry_files():
            try:
                entry = self.read_file(path)
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
        return result

    def entries(self) -> list[Entry]:
        """All entries; raise if any file has a problem (use `load_all` to see them all)."""
        result = self.load_all()
        if result.problems:
            raise ProblemList(result.problems)
        return result.entries

    def find(self, name: str) -> Path | None:
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

    # ------------------------------------------------------------------ writing

    def on_write(self, listener: Callable[[list[Path]], None]) -> None:
        """Call `listener(changed_paths)` after every successful write (search index...)."""
        self._listeners.append(listener)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """The inter-process write lock: writers to one knowledge base take turns."""
        self.knowledge_dir.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.knowledge_dir / LOCK_NAME), timeout=60):
            yield

    def write(self, entry: Entry, *, overwrite: bool = False, check_targets: bool = True) -> Path:
        """Validate and write one entry atomically; refuse to clobber unless `overwrite`."""
        validate_name(entry.name)
        with self.locked():
            return self._write_locked(entry, overwrite=overwrite, check_targets=check_targets)

    def _write_locked(self, entry: Entry, *, overwrite: bool, check_targets: bool) -> Path:
        target = self.path_for(entry)
        existing = self.find(entry.name)
        if existing is not None and not overwrite:
            raise KbError(
                f"entry {entry.name!r} already exists at {self.display(existing)}; "
                "update it explicitly (kbopt add --update, or Store.update)"
            )
        if existing is not None and existing.resolve() != target.resolve():
            raise KbError(
                f"entry {entry.name!r} lives at {self.display(existing)} but its fields say "
                f"{self.display(target)}; use convert_kind to move it between kinds"
            )
        text = render_entry(entry)
        # Re-parse what we are about to write: the file on disk must load back identically.
        parse_entry(text, name=entry.name, path=self.display(target))
        if check_targets:
            self._check_targets(entry)
        atomic_write(target, text)
        self._after_write([target])
        return target

    def _check_targets(self, entry: Entry) -> None:
        names = {p.stem for p in self.entry_files()} | {entry.name}
        unknown = [i.target for i in entry.interactions if i.target not in names]
        if unknown:
            raise KbError(
                f"entry {entry.name!r} has interactions with unknown entries: {', '.join(unknown)}"
            )

    def _after_write(self, changed: list[Path]) -> None:
        from kbopt.index import write_catalog

        write_catalog(self)
        for listener in self._listeners:
            listener(changed)

    def add_file(self, source: Path, *, overwrite: bool = False) -> Path:
        """`kbopt add FILE`: parse a draft anywhere on disk and file it at its KB2 path."""
        try:
            text = source.read_text(encoding="utf-8")
        except OSError as exc:
            raise KbError(f"cannot read {source}: {exc.strerror}") from None
        entry = parse_entry(text, name=None, path=str(source))
        return self.write(entry, overwrite=overwrite)

    def delete(self, name: str) -> Path:
        with self.locked():
            path = self.find(name)
            if path is None:
                raise KbError(f"no entry named {name!r}")
            path.unlink()
            self._after_write([path])
            return path

    # ------------------------------------------------------- update protocol

    def add_optimization(self, entry: Entry) -> Path:
        """KB8: a validated new optimization, at the shared or language path."""
        if entry.kind is not Kind.OPTIMIZATION:
            raise KbError(f"{entry.name!r} is an {entry.kind.value}, not an optimization")
        return self.write(entry)

    def add_anti_pattern(self, entry: Entry) -> Path:
        """KB9: a clear regression, recorded as a reusable failure pattern."""
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
        """KB7: new evidence refines an estimated effect or a failure mode."""

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
        """KB7: an entry shown wrong in some situations gets tighter When to Apply."""
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
        """KB7: a new interaction between optimizations."""

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
        today: dt.date | None = None,
    ) -> Path:
        """KB7/KB9: an optimization shown to hurt becomes an anti-pattern (or back).

        The old file is removed and the new one written at the other kind's path in
        one locked step; `context` says in which situation the opposite holds and
        `evidence` is the measurement that showed it.
        """
        with self.locked():
            path = self.find(name)
            if path is None:
                raise KbError(f"no entry named {name!r}")
            old = self.read_file(path)
            new = old.model_copy(deep=True)
            new.kind = Kind.ANTI_PATTERN if old.kind is Kind.OPTIMIZATION else Kind.OPTIMIZATION
            new.contexts = [context, *old.contexts]
            new.evidence = [*old.evidence, evidence]
            new.status = Status.VALIDATED
            new.updated = today or dt.date.today()
            target = self.path_for(new)
            text = render_entry(new)
            parse_entry(text, name=new.name, path=self.display(target))
            atomic_write(target, text)
            path.unlink()
            self._after_write([path, target])
            return target


def atomic_write(path: Path, text: str) -> None:
    """Write `text` so that readers see the old file or the new one, never half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def entry_path(root: Path, kind: Kind, language: Language | None, name: str) -> Path:
    return root / KNOWLEDGE_DIR / entry_relpath(kind, language, validate_name(name))
