"""The store: KB2 paths both ways, aggregated errors, atomic locked writes, update protocol."""

from __future__ import annotations

import datetime as dt
import multiprocessing as mp
from pathlib import Path

import pytest

from kbopt import KbError, ProblemList, Store, parse_entry
from kbopt.catalog_index import stale_files
from kbopt.lint import lint
from kbopt.model import EvidenceBlock, EvidenceRow, Interaction, MetricEffect, Trigger
from kbopt.vocab import Kind, Language, Relation, SourceType, Status
from tests.core.sample import VALID

DAY = dt.date(2026, 12, 2)


def _entry(name: str = "sample-opt", **changes):
    e = parse_entry(VALID, name="sample-opt").model_copy(update={"name": name})
    for key, value in changes.items():
        setattr(e, key, value)
    return e


def test_write_places_entry_at_its_kb2_path_and_refreshes_catalog(empty_kb: Path) -> None:
    store = Store(empty_kb)
    shared = store.write(_entry("a-shared"))
    lang = store.write(_entry("b-triton", language=Language.TRITON))
    anti = store.write(_entry("c-anti", kind=Kind.ANTI_PATTERN, language=Language.CUTE_DSL))
    kdir = empty_kb / "docs" / "knowledge"
    assert shared == kdir / "optimizations" / "a-shared.md"
    assert lang == kdir / "languages" / "triton" / "optimizations" / "b-triton.md"
    assert anti == kdir / "languages" / "cute-dsl" / "anti-patterns" / "c-anti.md"
    assert stale_files(store) == []
    assert "`b-triton`" in (empty_kb / "catalog" / "optimization-catalog.md").read_text()
    assert [e.name for e in store.entries()] == ["c-anti", "b-triton", "a-shared"] or len(
        store.entries()
    ) == 3


def test_location_must_agree_with_front_matter(empty_kb: Path) -> None:
    store = Store(empty_kb)
    path = store.write(_entry("moved"))
    wrong = empty_kb / "docs" / "knowledge" / "anti-patterns" / "moved.md"
    wrong.parent.mkdir(parents=True)
    path.rename(wrong)
    result = store.load_all()
    assert not result.entries
    assert any("is in the anti-patterns/ folder" in str(p) for p in result.problems)

    lang_dir = empty_kb / "docs" / "knowledge" / "languages" / "triton" / "anti-patterns"
    lang_dir.mkdir(parents=True)
    wrong.rename(lang_dir / "moved.md")
    messages = [str(p) for p in store.load_all().problems]
    assert any("language is none (shared) but the file's folder says triton" in m for m in messages)

    odd = empty_kb / "docs" / "knowledge" / "misc" / "x.md"
    odd.parent.mkdir()
    odd.write_text(VALID)
    assert any("not a knowledge-base path" in str(p) for p in store.load_all().problems)


def test_load_all_reports_every_broken_file_and_skips_none(empty_kb: Path) -> None:
    store = Store(empty_kb)
    store.write(_entry("good-one"))
    kdir = empty_kb / "docs" / "knowledge" / "optimizations"
    (kdir / "bad-one.md").write_text(
        VALID.replace("risk: low", "risk: tiny").replace("sample-opt", "bad-one")
    )
    (kdir / "bad-two.md").write_text("no front matter at all\n")
    result = store.load_all()
    assert [e.name for e in result.entries] == ["good-one"]
    paths = sorted({p.path for p in result.problems})
    assert paths == [
        "docs/knowledge/optimizations/bad-one.md",
        "docs/knowledge/optimizations/bad-two.md",
    ]
    with pytest.raises(ProblemList):
        store.entries()


@pytest.mark.parametrize(
    "name", ["../../x", "a/b", "..", "UPPER", "has space", "x.md", "", "-lead"]
)
def test_unsafe_names_are_refused(empty_kb: Path, name: str) -> None:
    store = Store(empty_kb)
    with pytest.raises((KbError, ValueError)):
        store.write(_entry(name))
    with pytest.raises(KbError):
        store.find(name)
    assert not any((empty_kb / "docs").rglob("x*"))


def test_no_silent_clobbering_update_is_explicit(empty_kb: Path) -> None:
    store = Store(empty_kb)
    store.write(_entry("same"))
    with pytest.raises(KbError, match="already exists"):
        store.write(_entry("same", title="Another title"))
    with pytest.raises(KbError, match="already exists"):
        store.write(_entry("same", language=Language.TRITON))
    assert store.get("same").title == "Sample optimization"
    store.update(_entry("same", title="Another title"))
    assert store.get("same").title == "Another title"
    with pytest.raises(KbError, match="no entry named 'absent'"):
        store.update(_entry("absent"))


def test_an_update_that_would_move_an_entry_says_how_to_move_it(empty_kb: Path) -> None:
    store = Store(empty_kb)
    store.write(_entry("same"))
    with pytest.raises(KbError, match=r"language changed \(shared -> triton\).*git mv"):
        store.update(_entry("same", language=Language.TRITON))
    with pytest.raises(
        KbError, match=r"kind changed \(optimization -> anti-pattern\).*convert_kind"
    ):
        store.update(_entry("same", kind=Kind.ANTI_PATTERN))
    assert store.get("same").language is None  # nothing moved


def test_unknown_interaction_target_is_refused_on_write(empty_kb: Path) -> None:
    store = Store(empty_kb)
    bad = _entry("lonely", interactions=[Interaction(relation=Relation.REQUIRES, target="nowhere")])
    with pytest.raises(KbError, match="unknown entries: nowhere"):
        store.write(bad)
    assert store.find("lonely") is None


def test_update_protocol(empty_kb: Path) -> None:
    store = Store(empty_kb)
    store.add_optimization(_entry("base-opt"))
    store.add_optimization(_entry("other-opt"))
    with pytest.raises(KbError, match="not an optimization"):
        store.add_optimization(_entry("x-anti", kind=Kind.ANTI_PATTERN))

    local = EvidenceBlock(
        source_type=SourceType.LOCAL_EXPERIMENT,
        source="kernels/mla_decode/results/h200.json",
        device="NVIDIA H200",
        command="python -m kernels.mla_decode.bench",
        rows=[EvidenceRow(config="b=32 s=1 t=4096", before="180 us", after="90 us", change="-50%")],
    )
    store.append_evidence("base-opt", local, status=Status.VALIDATED, today=DAY)
    e = store.get("base-opt")
    assert [b.source_type for b in e.evidence] == [
        SourceType.EXTERNAL_REPORT,
        SourceType.LOCAL_EXPERIMENT,
    ]
    assert e.status is Status.VALIDATED and e.updated == DAY
    assert e.generalization == "Use the whole machine."  # local evidence kept apart

    store.narrow_conditions(
        "base-opt",
        contexts=["Only when the KV cache is longer than 1024 tokens."],
        triggers=[Trigger.parse("kv_len >= 1024")],
        pitfall="Short contexts regress.",
        today=DAY,
    )
    e = store.get("base-opt")
    assert "kv_len >= 1024" in [t.expression for t in e.triggers]
    assert e.pitfalls[-1] == "Short contexts regress."

    store.add_interaction(
        "base-opt", Interaction(relation=Relation.COMPOSES, target="other-opt"), today=DAY
    )
    assert store.get("base-opt").interactions[0].target == "other-opt"

    path = store.convert_kind(
        "other-opt",
        evidence=local,
        context="On H200 decode it made things slower.",
        today=DAY,
        failure="The combine pass costs more than the split gains on short caches.",
        revealed_by=[MetricEffect(metric="kernel_count")],
        trigger=Trigger.parse("kv_len <= 64"),
    )
    assert path == empty_kb / "docs" / "knowledge" / "anti-patterns" / "other-opt.md"
    assert not (empty_kb / "docs" / "knowledge" / "optimizations" / "other-opt.md").exists()
    assert store.get("other-opt").kind is Kind.ANTI_PATTERN
    assert lint(store) == []
    assert stale_files(store) == []


def _writer(root: str, worker: int, count: int) -> None:
    store = Store(root)
    for i in range(count):
        store.write(_entry(f"w{worker}-e{i}"))


def test_concurrent_writers_lose_nothing(empty_kb: Path) -> None:
    workers, count = 4, 6
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(empty_kb), w, count)) for w in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    store = Store(empty_kb)
    names = {e.name for e in store.entries()}
    assert names == {f"w{w}-e{i}" for w in range(workers) for i in range(count)}
    assert stale_files(store) == []  # the last writer's catalog includes everyone
    assert not list((empty_kb / "docs").rglob("*.tmp"))


def test_failed_write_leaves_the_old_file(empty_kb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(empty_kb)
    path = store.write(_entry("keep-me"))
    before = path.read_bytes()
    import kbopt.store as store_mod

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(store_mod.os, "replace", boom)
    with pytest.raises(OSError):
        store.update(_entry("keep-me", title="New title"))
    assert path.read_bytes() == before
    assert not list(path.parent.glob("*.tmp"))


def test_duplicate_names_across_folders_are_reported(empty_kb: Path) -> None:
    store = Store(empty_kb)
    store.write(_entry("twin"))
    twin = empty_kb / "docs/knowledge/languages/triton/optimizations/twin.md"
    twin.parent.mkdir(parents=True)
    twin.write_text(
        (empty_kb / "docs/knowledge/optimizations/twin.md")
        .read_text()
        .replace("kind: optimization", "kind: optimization\nlanguage: triton")
    )
    messages = [str(p) for p in lint(store)]
    assert any("duplicate entry name 'twin'" in m for m in messages), messages
