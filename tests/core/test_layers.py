"""Layered knowledge: a project's docs/knowledge/ over the entries bundled with kbopt.

Each test uses a copy of the repository's catalog as the bundled layer, so that no
test can touch the real one, and an empty project beside it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import kbopt
from kbopt import KbError, Store, parse_entry
from kbopt.catalog_index import stale_files
from kbopt.cli import main
from kbopt.layers import BUNDLED, PROJECT, package_bundled_dir, same_folder
from kbopt.lint import lint
from kbopt.model import EvidenceBlock, EvidenceRow, Interaction, MetricEffect, Trigger
from kbopt.vocab import Kind, Relation, SourceType
from tests.core.sample import VALID

REPO = Path(__file__).resolve().parents[2]
SPLIT_KV = "optimizations/split-kv-decode.md"


@pytest.fixture
def bundled(tmp_path: Path) -> Path:
    folder = tmp_path / "bundled-knowledge"
    shutil.copytree(REPO / "docs" / "knowledge", folder, ignore=shutil.ignore_patterns(".*"))
    return folder


@pytest.fixture
def project(tmp_path: Path, bundled: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty user project; KBOPT_BUNDLED points the CLI at the bundled copy."""
    root = tmp_path / "user-project"
    (root / "docs" / "knowledge").mkdir(parents=True)
    monkeypatch.setenv("KBOPT_BUNDLED", str(bundled))
    monkeypatch.setenv("KBOPT_CACHE_DIR", str(tmp_path / "cache"))
    return root


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*.md")}


def _evidence() -> EvidenceBlock:
    return EvidenceBlock(
        source_type=SourceType.LOCAL_EXPERIMENT,
        source="results/h100.json",
        device="NVIDIA H100",
        command="python -m my_kernels.bench",
        rows=[EvidenceRow(config="b=8", before="100 us", after="80 us", change="-20%")],
    )


def test_a_project_sees_its_entries_and_the_bundled_ones(project: Path, bundled: Path) -> None:
    store = Store(project)
    assert [la.name for la in store.layers] == [PROJECT, BUNDLED]
    store.write(parse_entry(VALID, name="sample-opt"))
    result = store.load_all()
    bundled_count = len(list(bundled.rglob("*.md")))
    assert len(result.entries) == bundled_count + 1 and not result.problems
    assert result.layers["sample-opt"] == PROJECT
    assert result.layers["split-kv-decode"] == BUNDLED
    assert store.entry_files()[0] == project / "docs/knowledge/optimizations/sample-opt.md"
    assert store.find("split-kv-decode") == bundled / SPLIT_KV
    assert lint(store) == []
    assert stale_files(store) == []  # the write refreshed catalog/ with both layers


def test_a_project_entry_overrides_the_bundled_one_of_the_same_name(
    project: Path, bundled: Path
) -> None:
    mine = project / "docs/knowledge" / SPLIT_KV
    mine.parent.mkdir(parents=True)
    mine.write_text((bundled / SPLIT_KV).read_text().replace("# Split-KV", "# My split-KV", 1))
    store = Store(project)
    result = store.load_all()
    names = [e.name for e in result.entries]
    assert names.count("split-kv-decode") == 1
    assert result.layers["split-kv-decode"] == PROJECT
    assert result.overrides == {"split-kv-decode"}
    assert store.get("split-kv-decode").title.startswith("My split-KV")
    assert not result.problems  # an override is no duplicate


def test_writes_go_to_the_project_and_leave_the_bundled_files_alone(
    project: Path, bundled: Path
) -> None:
    before = _snapshot(bundled)
    store = Store(project)
    kdir = project / "docs/knowledge"

    path = store.append_evidence("split-kv-decode", _evidence())
    assert path == kdir / SPLIT_KV
    entry = store.get("split-kv-decode")
    original = parse_entry((bundled / SPLIT_KV).read_text(), name="split-kv-decode")
    assert entry.evidence[:-1] == original.evidence  # the bundled entry, copied, then changed
    assert entry.evidence[-1].device == "NVIDIA H100"
    assert store.load_all().layers["split-kv-decode"] == PROJECT

    store.narrow_conditions(
        "too-many-kv-splits", triggers=[Trigger.parse("kv_len <= 512")], pitfall="Short only."
    )
    store.add_interaction(
        "fill-tensor-core-tile-m",
        Interaction(relation=Relation.COMPOSES, target="split-kv-decode", note="both"),
    )
    assert (kdir / "anti-patterns/too-many-kv-splits.md").is_file()
    assert (kdir / "optimizations/fill-tensor-core-tile-m.md").is_file()

    converted = store.convert_kind(
        "stream-k-persistent-scheduling",
        evidence=_evidence(),
        context="Slower on my shapes.",
        failure="The combine pass costs more than the split gains on short caches.",
        revealed_by=[MetricEffect(metric="kernel_count")],
        trigger=Trigger.parse("kv_len <= 64"),
    )
    assert converted == kdir / "anti-patterns/stream-k-persistent-scheduling.md"
    listed = [e for e in store.entries() if e.name == "stream-k-persistent-scheduling"]
    assert [e.kind for e in listed] == [Kind.ANTI_PATTERN]

    assert _snapshot(bundled) == before
    assert lint(store) == []
    assert stale_files(store) == []


def test_adding_a_bundled_name_needs_an_explicit_update(project: Path, bundled: Path) -> None:
    store = Store(project)
    copy = parse_entry((bundled / SPLIT_KV).read_text(), name="split-kv-decode")
    with pytest.raises(KbError, match="bundled with kbopt"):
        store.write(copy)
    with pytest.raises(KbError, match="bundled with kbopt"):
        store.add_scaffold(Kind.OPTIMIZATION, "split-kv-decode")
    with pytest.raises(KbError, match="cannot be deleted"):
        store.delete("split-kv-decode")
    copy.title = "Overridden"
    assert store.update(copy) == project / "docs/knowledge" / SPLIT_KV
    assert store.get("split-kv-decode").title == "Overridden"
    store.delete("split-kv-decode")  # removes the override: the bundled entry is back
    assert store.find("split-kv-decode") == bundled / SPLIT_KV


def test_list_and_lint_say_which_layer_each_entry_comes_from(
    project: Path, bundled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    draft = tmp_path / "draft.md"
    draft.write_text(VALID)
    root = ["--root", str(project)]
    assert main([*root, "add", str(draft)]) == 0
    capsys.readouterr()

    assert main([*root, "list", "--json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["sample-opt"]["layer"] == PROJECT
    assert rows["sample-opt"]["path"] == "docs/knowledge/optimizations/sample-opt.md"
    assert rows["split-kv-decode"]["layer"] == BUNDLED
    assert Path(rows["split-kv-decode"]["path"]) == bundled / SPLIT_KV

    assert main([*root, "lint", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    layers = {la["layer"]: la for la in report["layers"]}
    assert layers[PROJECT]["entries"] == ["sample-opt"]
    assert "split-kv-decode" in layers[BUNDLED]["entries"]
    assert report["entries"] == len(rows)

    assert main([*root, "lint"]) == 0
    assert "1 in the project" in capsys.readouterr().err

    catalog = json.loads((project / "catalog/catalog.json").read_text())
    by_id = {r["id"]: r for r in catalog["entries"]}
    assert by_id["sample-opt"]["layer"] == PROJECT
    # Generated files name a bundled file the same way on every machine.
    assert by_id["split-kv-decode"]["path"] == "kbopt/bundled/knowledge/" + SPLIT_KV


def test_search_and_recommend_in_a_project_find_bundled_entries(project: Path) -> None:
    from kbopt.search import attach, search

    store = Store(project)
    attach(store)
    hits = search("split kv", store=store, limit=5)
    top = next(h for h in hits if h.id == "split-kv-decode")
    assert top.layer == BUNDLED and top.to_dict()["layer"] == BUNDLED

    profile = kbopt.Profile.parse(
        (REPO / "benchmarks/profiles/mla-decode-triton-16-heads.md").read_text()
    )
    opps = kbopt.recommend(profile, language="triton", store=store).opportunities
    assert opps, "recommend found nothing in the bundled entries"
    # every path it shows opens: the project's under docs/knowledge/, a bundled one as the
    # file itself (its package path, kbopt/bundled/..., is no file in the project)
    for o in opps:
        shown = Path(o.path)
        assert (shown if shown.is_absolute() else project / shown).is_file(), o.path

    # Converting a bundled entry hides the bundled file: one document, the project's.
    store.convert_kind(
        "split-kv-decode",
        evidence=_evidence(),
        context="Slower here.",
        failure="The combine pass costs more than the split gains on short caches.",
        revealed_by=[MetricEffect(metric="kernel_count")],
        trigger=Trigger.parse("kv_len <= 64"),
    )
    found = [h for h in search("split kv", store=store, limit=20) if h.id == "split-kv-decode"]
    assert [(h.kind, h.layer) for h in found] == [("anti-pattern", PROJECT)]
    store.delete("split-kv-decode")
    found = [h for h in search("split kv", store=store, limit=20) if h.id == "split-kv-decode"]
    assert [(h.kind, h.layer) for h in found] == [("optimization", BUNDLED)]


def test_the_bundled_layer_can_be_turned_off_or_moved(
    project: Path,
    bundled: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert len(Store(project, bundled=False).layers) == 1
    monkeypatch.setenv("KBOPT_BUNDLED", "0")
    assert Store(project).load_all().entries == []
    assert len(Store(project, bundled=bundled).layers) == 2
    monkeypatch.setenv("KBOPT_BUNDLED", str(project / "nowhere"))
    with pytest.raises(KbError, match="is not a folder"):
        Store(project)
    assert main(["--root", str(project), "list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kbopt: error: KBOPT_BUNDLED=") and "Traceback" not in err


def test_the_kbopt_checkout_is_one_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this repository the project's catalog is the bundled one: nothing twice."""
    monkeypatch.delenv("KBOPT_BUNDLED")
    store = Store(REPO)
    assert [la.name for la in store.layers] == [PROJECT]
    if Path(kbopt.__file__).resolve().parent.parent == REPO:  # the editable install
        packaged = package_bundled_dir()
        assert packaged is not None and same_folder(packaged, REPO / "docs" / "knowledge")
    result = store.load_all()
    assert set(result.layers.values()) == {PROJECT} and not result.overrides
