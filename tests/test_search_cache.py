"""The search cache heals from any damage and answers read-only when it cannot write.

Each case damages a built index the way a crash, a careless script or an attacker
could, then asks as a new process would (a fresh `SearchIndex`): the answer must be
right, the repair must say so in one line, and the next reader must find a healthy
index.  Cases that could hang (FIFOs) run in a subprocess with a timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_search_fixtures import small_kb

from kbopt.search import get_index, search
from kbopt.search.index import CURRENT, LOCK, MANIFEST
from kbopt.store import Store

CLI = "import sys; from kbopt.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.delenv("KBOPT_CACHE_DIR", raising=False)
    store = Store(small_kb(tmp_path / "kb"))
    search("split", store=store)  # build it
    return store


def _new_process(store: Store) -> None:
    """Forget every open index, as a new process would start."""
    # (`kbopt.search` the attribute is the function: the module is in sys.modules.)
    sys.modules["kbopt.search"]._INDEXES.clear()  # type: ignore[attr-defined]


def _generation(store: Store) -> Path:
    ix = get_index(store)
    return ix.dir / (ix.dir / CURRENT).read_text().strip()


def _ids(store: Store, query: str = "swizzle") -> list[str]:
    return [h.id for h in search(query, store=Store(store.root))]


def _replace_with_dir(p: Path) -> None:
    if p.is_dir():
        shutil.rmtree(p)
    else:
        p.unlink()
    p.mkdir()
    (p / "junk").write_text("x")


def _replace_with_file(p: Path) -> None:
    shutil.rmtree(p)
    p.write_text("not a folder")


def _empty(folder: Path) -> None:
    for p in folder.iterdir():
        p.unlink()


def _seg(store: Store) -> Path:
    return next(p for p in _generation(store).iterdir() if p.suffix == ".seg")


DAMAGE: dict[str, Callable[[Store], None]] = {
    "current-random-bytes": lambda s: (get_index(s).dir / CURRENT).write_bytes(os.urandom(64)),
    "current-empty": lambda s: (get_index(s).dir / CURRENT).write_bytes(b""),
    "current-names-nothing": lambda s: (get_index(s).dir / CURRENT).write_text("gen-nope\n"),
    "current-escapes": lambda s: (get_index(s).dir / CURRENT).write_text("../../../etc\n"),
    "current-huge": lambda s: (get_index(s).dir / CURRENT).write_bytes(b"g" * 100_000),
    "current-is-a-dir": lambda s: _replace_with_dir(get_index(s).dir / CURRENT),
    "current-missing": lambda s: (get_index(s).dir / CURRENT).unlink(),
    "manifest-random-bytes": lambda s: (_generation(s) / MANIFEST).write_bytes(os.urandom(500)),
    "manifest-truncated": lambda s: (_generation(s) / MANIFEST).write_bytes(
        (_generation(s) / MANIFEST).read_bytes()[:40]
    ),
    "manifest-wrong-types": lambda s: (_generation(s) / MANIFEST).write_text(
        json.dumps({"schema_version": 8, "entries": [1, 2], "files": "x"})
    ),
    "manifest-wrong-value-shapes": lambda s: (_generation(s) / MANIFEST).write_text(
        json.dumps(
            {
                "schema_version": json.loads((_generation(s) / MANIFEST).read_text())[
                    "schema_version"
                ],
                "entries": {"optimizations/x.md": "oops"},
                "files": {"a": [1, 2]},
            }
        )
    ),
    "manifest-is-a-list": lambda s: (_generation(s) / MANIFEST).write_text("[1, 2, 3]"),
    "manifest-is-a-dir": lambda s: _replace_with_dir(_generation(s) / MANIFEST),
    "manifest-missing": lambda s: (_generation(s) / MANIFEST).unlink(),
    "segment-is-a-dir": lambda s: _replace_with_dir(_seg(s)),
    "segment-missing": lambda s: _seg(s).unlink(),
    "segment-truncated": lambda s: _seg(s).write_bytes(_seg(s).read_bytes()[:10]),
    "generation-is-a-file": lambda s: _replace_with_file(_generation(s)),
    "generation-emptied": lambda s: _empty(_generation(s)),
    "index-folder-is-a-file": lambda s: _replace_with_file(get_index(s).dir),
    "cache-folder-is-a-file": lambda s: _replace_with_file(s.root / ".kbopt-cache"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_cache_heals_with_one_notice(
    kb: Store, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    DAMAGE[damage](kb)
    _new_process(kb)
    assert _ids(kb) == ["swizzle-shared-tiles"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rebuilding it" in err, err
    # Healed: the next reader opens it without a word, and updates still work.
    _new_process(kb)
    assert _ids(kb, "split")
    assert capsys.readouterr().err == ""


def test_a_lock_file_that_is_a_folder_is_replaced_on_the_next_write(kb: Store) -> None:
    _replace_with_dir(get_index(kb).dir / LOCK)
    _new_process(kb)
    store = Store(kb.root)
    store.narrow_conditions("split-the-grid", pitfall="Yak shaving on tiny grids.")
    _new_process(kb)
    assert _ids(kb, "yak") == ["split-the-grid"]


def _run(store: Store, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KBOPT_ROOT": str(store.root)}
    env.pop("KBOPT_CACHE_DIR", None)
    return subprocess.run(
        [sys.executable, "-c", CLI, *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


@pytest.mark.parametrize("where", [CURRENT, MANIFEST, LOCK])
def test_a_fifo_in_the_cache_never_hangs(kb: Store, where: str) -> None:
    target = get_index(kb).dir / CURRENT if where != MANIFEST else _generation(kb) / MANIFEST
    if where == LOCK:
        target = get_index(kb).dir / LOCK
    target.unlink(missing_ok=True)
    os.mkfifo(target)
    # Something changed, so the reader must take the lock to update the index.
    p = kb.knowledge_dir / "optimizations" / "split-the-grid.md"
    p.write_text(p.read_text().replace("every SM", "every SM zebra"))
    proc = _run(kb, "search", "zebra", "--json")  # a hang would time out here
    assert proc.returncode == 0, proc.stderr
    assert [h["id"] for h in json.loads(proc.stdout)] == ["split-the-grid"]
    again = _run(kb, "search", "swizzle", "--json")
    assert again.returncode == 0 and again.stderr == ""


def _unwritable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every attempt to write the cache fails as a read-only folder would (root ignores
    file modes, so the test cannot rely on chmod)."""
    index_mod = sys.modules["kbopt.search.index"]

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(index_mod, "ensure_dir", refuse)


def test_read_only_cache_answers_from_the_last_generation(
    kb: Store, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    p = kb.knowledge_dir / "optimizations" / "split-the-grid.md"
    p.write_text(p.read_text().replace("every SM", "every SM zebra"))
    _unwritable(monkeypatch)
    _new_process(kb)
    capsys.readouterr()
    assert _ids(kb) == ["swizzle-shared-tiles"]  # answered, from what was indexed
    assert _ids(kb, "zebra") == []  # the change is not in it, and the notice says so
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot be written" in err and "KBOPT_CACHE_DIR" in err
    # A write through the store still succeeds; its indexing waits.
    store = Store(kb.root)
    store.narrow_conditions("split-the-grid", pitfall="Yak shaving on tiny grids.")
    monkeypatch.undo()
    monkeypatch.delenv("KBOPT_CACHE_DIR", raising=False)
    monkeypatch.setenv("KBOPT_BUNDLED", "0")
    _new_process(kb)
    assert _ids(kb, "zebra") == ["split-the-grid"]  # writable again: caught up
    assert _ids(kb, "yak") == ["split-the-grid"]


def test_read_only_cache_with_a_damaged_pointer_uses_the_newest_whole_generation(
    kb: Store, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (get_index(kb).dir / CURRENT).write_bytes(os.urandom(32))
    _unwritable(monkeypatch)
    _new_process(kb)
    capsys.readouterr()
    assert _ids(kb) == ["swizzle-shared-tiles"]
    assert "cannot be written" in capsys.readouterr().err


def test_read_only_cache_without_any_generation_is_a_clear_error(
    kb: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kbopt.errors import KbError

    shutil.rmtree(get_index(kb).dir)
    _unwritable(monkeypatch)
    _new_process(kb)
    with pytest.raises(KbError, match="KBOPT_CACHE_DIR"):
        _ids(kb)


def _chattr(path: Path, flag: str) -> bool:
    try:
        return (
            subprocess.run(["chattr", flag, str(path)], capture_output=True, timeout=10).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False


def test_immutable_cache_in_a_new_process(kb: Store) -> None:
    """The real thing where the file system allows it: `chattr +i` on the cache."""
    ix = get_index(kb)
    gen = _generation(kb)
    if not _chattr(ix.dir, "+i"):
        pytest.skip("chattr +i is not available here")
    try:
        assert _chattr(gen, "+i")
        p = kb.knowledge_dir / "optimizations" / "split-the-grid.md"
        p.write_text(p.read_text().replace("every SM", "every SM zebra"))
        proc = _run(kb, "search", "swizzle", "--json")
        assert proc.returncode == 0, proc.stderr
        assert [h["id"] for h in json.loads(proc.stdout)] == ["swizzle-shared-tiles"]
        assert "cannot be written" in proc.stderr and proc.stderr.count("\n") == 1
    finally:
        _chattr(gen, "-i")
        _chattr(ix.dir, "-i")
