"""The whoosh index of one knowledge base: location, freshness, recovery, concurrency.

Layout of the index folder (`<project>/.kbopt-cache/search/`, or
`$KBOPT_CACHE_DIR/search/<hash of the project root>/`)::

    write.lock          inter-process lock held by whoever updates or rebuilds
    CURRENT             the name of the generation folder readers must open
    gen-<stamp>/        whoosh files + manifest.json

`manifest.json` records the schema version, every entry file's (mtime, size, sha1)
as indexed, and every index file's (mtime, size, sha1).  On open:

* no CURRENT, no manifest, unreadable manifest, another schema version, an index file
  changed behind our back (size differs, or mtime differs and the content hash too) or
  whoosh failing to open -> a full rebuild with a one-line notice on stderr;
* entry files whose (mtime, size) differ from the manifest are re-hashed, and only the
  ones whose content changed (plus added / removed ones) are re-indexed.

The index holds what a reader of the store sees: the project's entries and the bundled
ones it does not override (`kbopt.layers`).  Documents are keyed by their path under a
knowledge root (`optimizations/x.md`), so a project entry that overrides a bundled one
at the same path simply replaces it.

Damage the fingerprints cannot see (a file rewritten with its old size and mtime) shows
up as an exception while reading: `SearchIndex.reading` then rebuilds once, with the
same notice, and answers.  Any damage to the cache folder itself heals the same way:
random bytes or a directory or a FIFO where CURRENT, the manifest or the lock should
be, a file where a folder should be (`kbopt.search.cachefs` never blocks on a special
file and clears what stands in the way).

When the cache cannot be written (a read-only or immutable folder), readers answer
from the last good generation, with a one-line notice that changed entries are not
reflected; the store's writes still succeed, only their indexing waits.

A rebuild writes a fresh generation folder and then switches CURRENT atomically, so
readers keep answering from the old generation while it runs.  An incremental update
commits into the current generation under the lock; a reader that finds the lock
taken answers from the last committed state instead of waiting.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock, Timeout

from kbopt.errors import KbError, ProblemList
from kbopt.search import snapshot
from kbopt.search.cachefs import ensure_dir, read_regular, remove_obstacle, replace_text
from kbopt.search.locations import (
    CACHE_ENV,
    CURRENT,
    DEFAULT_CACHE,
    LOCK,
    MANIFEST,
    SNAPSHOT,
    index_dir_for,
    owned_dir,
    visible_entries,
)
from kbopt.search.locations import stem as _stem
from kbopt.search.schema import SCHEMA_VERSION, build_schema, entry_document
from kbopt.store import Store

T = TypeVar("T")
__all__ = ["CACHE_ENV", "CURRENT", "DEFAULT_CACHE", "LOCK", "MANIFEST", "SNAPSHOT", "SearchIndex"]
# A long-lived process re-scans the entry files at most this often (seconds); writes
# through a Store attached with `attach()` are indexed at once.
RECHECK_S = 2.0
REBUILD_WAIT_S = 300.0
MERGE_AT_SEGMENTS = 8
# What a generation folder may be called (anything else in CURRENT is damage).
GEN_NAME = re.compile(r"gen-[0-9A-Za-z-]{1,64}")
MAX_MANIFEST_BYTES = 1 << 30
STORED_CACHE = 2048  # documents whose stored fields a warm generation keeps decoded


def index_dir(store: Store) -> Path:
    return index_dir_for(store.root)


def notice(message: str) -> None:
    print(f"kbopt: {message}", file=sys.stderr, flush=True)


def _sha1(path: Path) -> str:
    h = hashlib.sha1()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class IndexBroken(Exception):
    """The index on disk cannot be trusted; the message says why (for the notice)."""


class CacheReadOnly(Exception):
    """The cache folder cannot be written (read-only, immutable, not creatable)."""


def _is_list(value: Any, types: tuple[type, ...]) -> bool:
    return (
        isinstance(value, list)
        and len(value) == len(types)
        and all(isinstance(v, t) for v, t in zip(value, types, strict=True))
    )


@dataclass
class Manifest:
    schema_version: int = SCHEMA_VERSION
    entries: dict[str, list[Any]] = field(
        default_factory=dict
    )  # relpath -> [mtime_ns, size, sha1, ok]
    files: dict[str, list[Any]] = field(
        default_factory=dict
    )  # index file -> [mtime_ns, size, sha1]

    @classmethod
    def load(cls, path: Path) -> Manifest:
        raw = read_regular(path, MAX_MANIFEST_BYTES)
        if raw is None:
            if not os.path.lexists(path):
                raise IndexBroken("has no manifest")
            raise IndexBroken("manifest is unreadable")
        try:
            data = json.loads(raw.decode("utf-8"))
            m = cls(
                schema_version=int(data["schema_version"]),
                entries=dict(data["entries"]),
                files=dict(data["files"]),
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            raise IndexBroken("manifest is unreadable") from None
        # Every value must have the shape the code reads, or it is damage.
        if not all(
            isinstance(k, str) and _is_list(v, (int, int, str, bool)) for k, v in m.entries.items()
        ) or not all(
            isinstance(k, str) and _is_list(v, (int, int, str)) for k, v in m.files.items()
        ):
            raise IndexBroken("manifest is unreadable")
        if m.schema_version != SCHEMA_VERSION:
            raise IndexBroken(
                f"was built with schema version {m.schema_version}, this kbopt uses {SCHEMA_VERSION}"
            )
        return m

    def save(self, path: Path) -> None:
        """Atomic (temporary file + rename) but not fsynced: the manifest is derived data,
        and a manifest lost in a crash only means the next open re-indexes or rebuilds."""
        data = {"schema_version": self.schema_version, "entries": self.entries, "files": self.files}
        replace_text(path, json.dumps(data, separators=(",", ":")))


def _index_files(gen: Path) -> list[Path]:
    return [
        p
        for p in gen.iterdir()
        if p.is_file()
        and p.name != MANIFEST
        and not p.name.endswith("LOCK")
        and not p.name.startswith(".")
        and not snapshot.is_snapshot(p.name)  # derived from the rest, checked when read
    ]


def record_files(gen: Path, manifest: Manifest) -> None:
    """Fingerprint the index files after a commit (unchanged files keep their hash)."""
    files: dict[str, list[Any]] = {}
    for p in _index_files(gen):
        st = p.stat()
        old = manifest.files.get(p.name)
        if old and old[0] == st.st_mtime_ns and old[1] == st.st_size:
            files[p.name] = old
        else:
            files[p.name] = [st.st_mtime_ns, st.st_size, _sha1(p)]
    manifest.files = files


def verify_files(gen: Path, manifest: Manifest) -> None:
    for name, (mtime_ns, size, sha) in manifest.files.items():
        p = gen / name
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            raise IndexBroken(f"is missing its file {name}") from None
        except OSError:
            raise IndexBroken(f"cannot read its file {name}") from None
        if not stat.S_ISREG(st.st_mode):
            raise IndexBroken(f"file {name} is not a regular file")
        if st.st_size != size:
            raise IndexBroken(f"file {name} changed size")
        if st.st_mtime_ns != mtime_ns and _sha1(p) != sha:
            raise IndexBroken(f"file {name} is corrupt")


@dataclass
class Changes:
    changed: list[str] = field(default_factory=list)  # relpaths to (re)index
    removed: list[str] = field(default_factory=list)
    stats: dict[str, tuple[int, int]] = field(default_factory=dict)  # every file on disk

    def __bool__(self) -> bool:
        return bool(self.changed or self.removed)


class Generation:
    """One opened generation folder: whoosh index + manifest."""

    def __init__(self, path: Path, manifest: Manifest | None = None):
        from whoosh import index as windex

        self.path = path
        # A writer that has just saved the manifest hands it over (no re-parse).
        self.manifest = manifest if manifest is not None else Manifest.load(path / MANIFEST)
        verify_files(path, self.manifest)
        try:
            self.ix = windex.open_dir(str(path))
            self.searcher = self.ix.searcher()
        except Exception as exc:  # whoosh raises many kinds on a damaged folder
            raise IndexBroken(f"cannot be opened ({type(exc).__name__})") from None
        try:
            self.manifest_mtime = (path / MANIFEST).stat().st_mtime_ns
        except OSError:
            raise IndexBroken("has no manifest") from None
        self._fast: Any = None
        self.snapshot_checked = False
        # Stored fields of the documents hits were made from, with their snippet text:
        # a generation never changes, so a warm process decodes each document once.
        self._stored: dict[int, tuple[dict[str, Any], str]] = {}

    def stored(self, docnum: int) -> tuple[dict[str, Any], str]:
        """(stored fields, whitespace-normalized content) of one document, kept."""
        got = self._stored.get(docnum)
        if got is None:
            from kbopt.search.snippets import normalize

            fields = self.searcher.stored_fields(docnum)
            got = (fields, normalize(fields.get("content", "")))
            if len(self._stored) >= STORED_CACHE:
                self._stored.clear()
            self._stored[docnum] = got
        return got

    def live_paths(self) -> list[str]:
        """The document keys of the live documents, in whoosh's document order."""
        reader = self.searcher.reader()
        col = reader.column_reader("path")
        out = []
        for doc in reader.all_doc_ids():
            rel = col[doc]
            out.append(rel.decode() if isinstance(rel, bytes) else str(rel))
        return out

    def fast(self) -> Any:
        """The numpy scoring view of this generation (`kbopt.search.fast`), built once."""
        if self._fast is None:
            from kbopt.search.fast import FastIndex

            self._fast = FastIndex(self.searcher)
        return self._fast

    def close(self) -> None:
        try:
            self.searcher.close()
            self.ix.close()
        except Exception:
            pass


class SearchIndex:
    """The index of one Store, kept fresh against the entry files on disk."""

    def __init__(self, store: Store, directory: Path | None = None):
        self.store = store
        self.dir = directory or index_dir(store)
        self.gen: Generation | None = None
        self._current_seen: str | None = None
        self._last_scan = 0.0
        self._dir_mtimes: dict[str, int] = {}
        self.version = 0  # bumped whenever what the searcher sees may have changed
        self.read_only = False  # set when the cache could not be written (notice once)
        # What the documents indexed by the current commit give the snapshot.
        self._snap_new: dict[str, tuple[dict[str, Any], Any] | None] = {}
        self._snap_problems: dict[str, list[str]] = {}

    # ------------------------------------------------------------ locations

    @contextmanager
    def _locked(self, timeout: float) -> Iterator[None]:
        """The index's write lock; `CacheReadOnly` when the folder cannot be written,
        filelock's `Timeout` when another writer holds it past `timeout`."""
        try:
            ensure_dir(self.dir, owned_dir(self.dir))
            remove_obstacle(self.dir / LOCK, want_dir=False)  # a folder or FIFO put there
            lock = FileLock(str(self.dir / LOCK))
            lock.acquire(timeout=timeout)
        except Timeout:
            raise
        except OSError as exc:
            raise CacheReadOnly(exc.strerror or str(exc)) from None
        try:
            yield
        finally:
            lock.release()

    def _read_current(self) -> str | None:
        """The generation CURRENT names, or None when it is missing or damaged."""
        raw = read_regular(self.dir / CURRENT, 256)
        if raw is None:
            return None
        try:
            name = raw.decode("ascii").strip()
        except UnicodeDecodeError:
            return None
        return name if GEN_NAME.fullmatch(name) else None

    def _went_read_only(self, why: str) -> None:
        if not self.read_only:
            self.read_only = True
            notice(
                f"search index at {self.dir} cannot be written ({why}); answering from its "
                f"last good state, without the entries changed since (set {CACHE_ENV} to a "
                "writable folder)"
            )

    def _open_last_good(self) -> bool:
        """Open the newest generation folder that is whole, whatever CURRENT says."""
        try:
            gens = [p for p in self.dir.iterdir() if p.name.startswith("gen-") and p.is_dir()]
            gens.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
        except OSError:
            return False
        for path in gens:
            try:
                self._swap_generation(Generation(path), path.name)
                return True
            except IndexBroken:
                continue
        return False

    def relpath(self, path: Path) -> str:
        """`path` under its layer's knowledge root (the index's document key)."""
        return path.resolve().relative_to(self.store.layer_of(path).resolved).as_posix()

    def _file(self, rel: str) -> Path:
        """The file a document key stands for: the upper layer's when both have it."""
        return self.store.locate(rel) or self.store.knowledge_dir / rel

    # ------------------------------------------------------------ opening

    def searcher(self) -> Any:
        """A whoosh searcher over an index that is fresh (see the module docstring)."""
        self.ensure_fresh()
        assert self.gen is not None
        return self.gen.searcher

    def ensure_fresh(self, force_scan: bool = False) -> None:
        for attempt in range(3):
            try:
                self._ensure_open()
                self._maybe_update(force_scan)
                self._ensure_snapshot()
                return
            except IndexBroken as exc:
                if attempt == 2:
                    raise KbError(f"the search index at {self.dir} keeps failing: {exc}") from None
                try:
                    self._recover(str(exc))
                except CacheReadOnly as ro:
                    self._fall_back_read_only(str(exc), str(ro))
                    return

    def _fall_back_read_only(self, broken: str, why: str) -> None:
        """The index needs a rebuild that cannot be written: the last good generation."""
        if self.gen is None and not self._open_last_good():
            raise KbError(
                f"cannot create the search index folder {self.dir} (the index {broken}: "
                f"{why}); set {CACHE_ENV} to a writable folder"
            ) from None
        self._went_read_only(why)

    def _ensure_open(self) -> None:
        current = self._read_current()
        if current is None:
            raise IndexBroken("is missing")
        if self.gen is not None and current == self._current_seen:
            # Another process may have committed an incremental update: reopen if so.
            try:
                mtime = (self.gen.path / MANIFEST).stat().st_mtime_ns
            except OSError:
                mtime = -1
            if mtime == self.gen.manifest_mtime:
                return
        self._swap_generation(Generation(self.dir / current), current)

    def _swap_generation(self, gen: Generation, name: str) -> None:
        old, self.gen, self._current_seen = self.gen, gen, name
        self._last_scan = 0.0
        self.version += 1
        if old is not None:
            old.close()

    def _recover(self, why: str) -> None:
        """Rebuild unless another process already did while we waited for the lock."""
        with self._locked(REBUILD_WAIT_S):
            current = self._read_current()
            if current is not None:
                try:
                    self._swap_generation(Generation(self.dir / current), current)
                    return
                except IndexBroken:
                    pass
            count = len(self.store.entry_files())
            notice(f"search index at {self.dir} {why}; rebuilding it ({count} entries)")
            self._rebuild_locked()

    def reading(self, fn: Callable[[], T]) -> T:
        """Run `fn` against the index; if reading fails (damage that the fingerprints did
        not catch), rebuild once with a notice and run it again."""
        try:
            return fn()
        except KbError:
            raise
        except Exception as exc:  # whoosh / zlib / struct errors from a damaged file
            why = f"failed while being read ({type(exc).__name__})"
            try:
                with self._locked(REBUILD_WAIT_S):
                    seen = self._current_seen
                    current = self._read_current()
                    try:
                        if current is None or current == seen:
                            raise IndexBroken(why)
                        # Another process rebuilt it while we failed: use theirs.
                        self._swap_generation(Generation(self.dir / current), current)
                    except IndexBroken:
                        notice(f"search index at {self.dir} {why}; rebuilding it")
                        self._rebuild_locked()
            except CacheReadOnly as ro:
                raise KbError(
                    f"the search index at {self.dir} {why} and cannot be rebuilt there "
                    f"({ro}); set {CACHE_ENV} to a writable folder"
                ) from None
            return fn()

    # ------------------------------------------------------------ freshness

    def scan(self, manifest: Manifest) -> Changes:
        """Entry files that differ from what the manifest says was indexed."""
        return self.diff(self.stat_entries(), manifest)

    def stat_entries(self) -> dict[str, tuple[int, int]]:
        """(mtime_ns, size) of every entry file a reader sees, by path under its knowledge
        root (`kbopt.search.locations.visible_entries`); the folders' mtimes are recorded
        on the way for the cheap between-scans check."""
        folders: dict[str, int] = {}
        out = visible_entries([str(la.knowledge_dir) for la in self.store.layers], folders)
        self._dir_mtimes = folders
        return out

    def diff(self, stats: dict[str, tuple[int, int]], manifest: Manifest) -> Changes:
        out = Changes(stats=stats)
        for rel, (mtime, size) in stats.items():
            old = manifest.entries.get(rel)
            if old is None or (
                (old[0], old[1]) != (mtime, size)
                and (old[1] != size or _sha1(self._file(rel)) != old[2])
            ):
                out.changed.append(rel)
        out.removed = [rel for rel in manifest.entries if rel not in stats]
        return out

    def _folders_changed(self) -> bool:
        for d, mtime in self._dir_mtimes.items():
            try:
                if os.stat(d).st_mtime_ns != mtime:
                    return True
            except OSError:
                return True
        return False

    def _maybe_update(self, force_scan: bool) -> None:
        now = time.monotonic()
        if not force_scan and now - self._last_scan < RECHECK_S and not self._folders_changed():
            return
        assert self.gen is not None
        changes = self.scan(self.gen.manifest)
        self._last_scan = now
        if not changes or self.read_only:
            return
        seen = self.gen
        try:
            with self._locked(0 if not force_scan else REBUILD_WAIT_S):
                self._ensure_open()  # the writer we waited for may have committed already
                assert self.gen is not None
                if self.gen is not seen:
                    changes = self.diff(changes.stats, self.gen.manifest)
                if changes:
                    self._apply_locked_or_read_only(changes)
        except Timeout:
            return  # a writer is at work: answer from the last committed state
        except CacheReadOnly as exc:
            self._went_read_only(str(exc))

    # ------------------------------------------------------------ writing

    def update_paths(self, paths: list[Path]) -> None:
        """`Store.on_write` listener: index exactly these files (added, changed or removed).

        A cache that cannot be written does not fail the write that called this: the
        entry is on disk, and the index catches up once the cache is writable again."""
        try:
            self._update_paths(paths)
        except CacheReadOnly as exc:
            self._went_read_only(str(exc))

    def _update_paths(self, paths: list[Path]) -> None:
        with self._locked(REBUILD_WAIT_S):
            try:
                self._ensure_open()
            except IndexBroken as exc:
                notice(f"search index at {self.dir} {exc}; rebuilding it")
                self._rebuild_locked()
                return
            assert self.gen is not None
            if len(self.store.layers) > 1:
                changes = self._layered_changes(paths, self.gen.manifest)
            else:
                changes = Changes()
                for p in paths:
                    rel = self.relpath(p)
                    if p.exists():
                        st = p.stat()
                        changes.stats[rel] = (st.st_mtime_ns, st.st_size)
                        changes.changed.append(rel)
                    elif rel in self.gen.manifest.entries:
                        changes.removed.append(rel)
            if changes:
                self._apply_locked_or_read_only(changes)

    def _layered_changes(self, paths: list[Path], manifest: Manifest) -> Changes:
        """The changes behind writes to a layered store, for the written names only.

        A write to one layer can show or hide a file of the same name in another (a
        project entry converted to the other kind hides the bundled one at its old
        path; deleting an override shows the bundled entry again), so the entries of
        those names are compared on every layer.
        """
        names = {p.stem for p in paths}
        stats = {rel: st for rel, st in self.stat_entries().items() if _stem(rel) in names}
        changes = Changes(stats=stats, changed=sorted(stats))
        changes.removed = [
            rel for rel in manifest.entries if _stem(rel) in names and rel not in stats
        ]
        return changes

    def _document(self, rel: str) -> tuple[dict[str, Any] | None, str]:
        path = self._file(rel)
        sha = _sha1(path)
        try:
            entry = self.store.read_file(path)
        except (ProblemList, KbError) as exc:
            # `kbopt lint` reports it; the index skips it until it changes.
            problems = exc.problems if isinstance(exc, ProblemList) else [exc]
            self._keep_for_snapshot(rel, None)
            self._snap_problems[rel] = [str(p) for p in problems]
            return None, sha
        doc = entry_document(entry, rel)
        self._keep_for_snapshot(rel, (doc, entry))
        self._snap_problems.pop(rel, None)
        return doc, sha

    def left_out(self) -> list[str]:
        """What `kbopt lint` says of each entry file the index leaves out because it does
        not parse: search and recommend answer without it, and say so."""
        self.ensure_fresh()
        assert self.gen is not None
        out: list[str] = []
        for rel, info in sorted(self.gen.manifest.entries.items()):
            if info[3]:
                continue
            try:
                self.store.read_file(self._file(rel))
            except (ProblemList, KbError) as exc:
                problems = exc.problems if isinstance(exc, ProblemList) else [exc]
                out += [str(p) for p in problems]
        return out

    def _keep_for_snapshot(self, rel: str, got: tuple[dict[str, Any], Any] | None) -> None:
        # A commit of more documents than a snapshot holds keeps none of them in memory.
        if len(self._snap_new) <= snapshot.MAX_DOCS:
            self._snap_new[rel] = got

    # ------------------------------------------------------------ snapshot

    def _write_snapshot(self, gen: Generation, incremental: bool) -> None:
        """The small-catalog snapshot of `gen` (`kbopt.search.snapshot`), from the
        documents indexed in this commit plus, after an update, the previous snapshot's
        records of the others.  Best effort: the snapshot only speeds up readers."""
        new, problems = self._snap_new, self._snap_problems
        self._snap_new, self._snap_problems = {}, {}
        try:
            indexed = sum(1 for v in gen.manifest.entries.values() if v[3])
            if indexed > snapshot.MAX_DOCS:  # too big to be worth it: whoosh answers
                if new or problems:
                    snapshot.remove_others(gen.path)
                return
            order = gen.live_paths()
            old = snapshot.load(gen.path) if incremental else None
            records: dict[str, dict[str, Any]] = {}
            all_problems = dict(old.problems) if old is not None else {}
            all_problems.update(problems)
            for rel in list(all_problems):
                if rel not in gen.manifest.entries or (rel in new and new[rel] is not None):
                    del all_problems[rel]
            for rel in order:
                got = new.get(rel)
                if got is None and old is not None and rel in old.docs:
                    records[rel] = old.docs[rel]
                    continue
                if got is None:  # no record to carry over: index the file's text again
                    doc, entry = self._document_for_snapshot(rel)
                else:
                    doc, entry = got
                records[rel] = self._snapshot_record(doc, entry, rel)
            schema = gen.ix.schema
            analyzer = schema["mechanism"].analyzer
            stops = next(
                (f.stops for f in getattr(analyzer, "items", []) if hasattr(f, "stops")), ()
            )
            from kbopt.search.query import FILTER_VALUES
            from kbopt.search.schema import DEFAULT_FIELDS, FIELD_BOOSTS

            snapshot.write(
                gen.path,
                order=order,
                records=records,
                entries=gen.manifest.entries,
                problems=all_problems,
                layers=[str(la.knowledge_dir) for la in self.store.layers],
                stop_words=sorted(stops),
                fields=list(DEFAULT_FIELDS),
                boosts=dict(FIELD_BOOSTS),
                filter_values=dict(FILTER_VALUES),
                analyzer=analyzer,
            )
        except Exception:  # derived, optional data: never fail a commit for it
            snapshot.remove_others(gen.path)
        gen.snapshot_checked = True

    def _document_for_snapshot(self, rel: str) -> tuple[dict[str, Any], Any]:
        entry = self.store.read_file(self._file(rel))
        return entry_document(entry, rel), entry

    def _snapshot_record(self, doc: dict[str, Any], entry: Any, rel: str) -> dict[str, Any]:
        from kbopt.search import _where
        from kbopt.search.schema import TEXT_FIELDS
        from kbopt.strategy import entry_public_path
        from kbopt.template import render_entry

        assert self.gen is not None
        layer, path = _where(self.store, rel)
        return snapshot.record(
            doc,
            schema=self.gen.ix.schema,
            text_fields=TEXT_FIELDS,
            summary=entry.summary(),
            markdown=render_entry(entry),
            path=path,
            layer=layer,
            public_path=entry_public_path(self.store, rel),
        )

    def _ensure_snapshot(self) -> None:
        """Write the snapshot of the open generation if it is small and has none from
        this code (after damage or an upgrade); skipped when the lock is busy."""
        gen = self.gen
        if gen is None or gen.snapshot_checked or self.read_only:
            return
        gen.snapshot_checked = True
        if os.path.exists(gen.path / snapshot.file_name()):
            return
        if sum(1 for v in gen.manifest.entries.values() if v[3]) > snapshot.MAX_DOCS:
            return
        try:
            with self._locked(0):
                if self.gen is gen:
                    self._snap_new, self._snap_problems = {}, {}
                    self._write_snapshot(gen, incremental=False)
        except (Timeout, CacheReadOnly, IndexBroken):
            pass

    def _apply_locked_or_read_only(self, changes: Changes) -> None:
        """Apply `changes`; a folder that refuses the new files (read-only, immutable,
        full) leaves the last committed generation in place, as `CacheReadOnly`."""
        try:
            self._apply_locked(changes)
        except OSError as exc:
            raise CacheReadOnly(exc.strerror or str(exc)) from None

    def _apply_locked(self, changes: Changes) -> None:
        assert self.gen is not None
        gen = self.gen
        manifest = gen.manifest
        self._snap_new, self._snap_problems = {}, {}
        writer = gen.ix.writer(timeout=REBUILD_WAIT_S)
        try:
            for rel in changes.removed:
                writer.delete_by_term("path", rel)
                manifest.entries.pop(rel, None)
            for rel in changes.changed:
                doc, sha = self._document(rel)
                writer.delete_by_term("path", rel)
                if doc is not None:
                    writer.add_document(**doc)
                mtime, size = changes.stats[rel]
                manifest.entries[rel] = [mtime, size, sha, doc is not None]
            # A one-entry commit writes one small segment; merging them only now and then
            # keeps an update fast while the number of segments stays bounded.
            writer.commit(merge=len(gen.ix._segments()) >= MERGE_AT_SEGMENTS)
        except BaseException:
            writer.cancel()
            raise
        record_files(gen.path, manifest)
        manifest.save(gen.path / MANIFEST)
        # A full reopen: whoosh's `refresh` would reuse segment readers whose deletions
        # changed (a stale view of updated entries).
        self._swap_generation(Generation(gen.path, manifest), self._current_seen or gen.path.name)
        assert self.gen is not None
        self._write_snapshot(self.gen, incremental=True)

    def rebuild(self) -> int:
        """Rebuild from scratch under the lock; returns the number of indexed entries."""
        try:
            with self._locked(REBUILD_WAIT_S):
                return self._rebuild_locked()
        except CacheReadOnly as exc:
            raise KbError(
                f"cannot write the search index at {self.dir} ({exc}); set {CACHE_ENV} "
                "to a writable folder"
            ) from None

    def _rebuild_locked(self) -> int:
        from whoosh import index as windex

        name = f"gen-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        path = self.dir / name
        try:
            path.mkdir(parents=True)
        except OSError as exc:
            raise CacheReadOnly(exc.strerror or str(exc)) from None
        ix = windex.create_in(str(path), build_schema())
        manifest = Manifest()
        changes = self.scan(manifest)
        self._snap_new, self._snap_problems = {}, {}
        writer = ix.writer(limitmb=256)
        indexed = 0
        try:
            for rel in changes.changed:
                doc, sha = self._document(rel)
                if doc is not None:
                    writer.add_document(**doc)
                    indexed += 1
                mtime, size = changes.stats[rel]
                manifest.entries[rel] = [mtime, size, sha, doc is not None]
            writer.commit()
        except BaseException:
            writer.cancel()
            shutil.rmtree(path, ignore_errors=True)
            raise
        ix.close()
        record_files(path, manifest)
        manifest.save(path / MANIFEST)
        new_gen = Generation(path, manifest)
        self._swap_generation(new_gen, name)
        self._write_snapshot(new_gen, incremental=False)  # before readers are sent here
        try:
            replace_text(self.dir / CURRENT, name + "\n")
        except OSError as exc:
            raise CacheReadOnly(exc.strerror or str(exc)) from None
        self._remove_old_generations(keep={name})
        return indexed

    def _remove_old_generations(self, keep: set[str]) -> None:
        """Drop generations but the newest two: a reader may still be on the previous one."""
        try:
            gens = sorted(
                (p for p in self.dir.glob("gen-*") if p.is_dir() and not p.is_symlink()),
                key=lambda p: p.stat().st_mtime,
            )
        except OSError:
            return
        for p in gens[:-2]:
            if p.name not in keep:
                shutil.rmtree(p, ignore_errors=True)

    # ------------------------------------------------------------ status

    def status(self) -> dict[str, Any]:
        current = self._read_current()
        info: dict[str, Any] = {
            "directory": str(self.dir),
            "generation": current,
            "schema_version": SCHEMA_VERSION,
            "state": "missing" if current is None else "unknown",
        }
        if current is None:
            return info
        try:
            manifest = Manifest.load(self.dir / current / MANIFEST)
            verify_files(self.dir / current, manifest)
        except IndexBroken as exc:
            info["state"] = f"broken: index {exc}"
            return info
        changes = self.scan(manifest)
        info.update(
            state="stale" if changes else "fresh",
            entries=sum(1 for v in manifest.entries.values() if v[3]),
            unparsable=sorted(k for k, v in manifest.entries.items() if not v[3]),
            pending_changes=len(changes.changed),
            pending_removals=len(changes.removed),
            size_bytes=sum(v[1] for v in manifest.files.values()),
        )
        return info
