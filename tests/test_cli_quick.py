"""The quick path of `kbopt search|show|list --json` gives the full command's answer.

Every case runs both ways on a copy of the catalog: `kbopt.cli.quick.answer` (snapshot,
standard library) and the full command (`KBOPT_QUICK=0`: store, whoosh, numpy); the
printed bytes must be equal, and the quick path must really have answered (it may not
quietly decline everything).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from quick_check import both, indexed

from kbopt.cli import main
from kbopt.cli.quick import answer, plain_plan
from kbopt.search import get_index, search
from kbopt.search import snapshot as snapshot_mod
from kbopt.store import Store


@pytest.fixture
def kb(kb_copy: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return indexed(kb_copy, monkeypatch)


SEARCHES = [
    ["split kv"],
    ["register spill"],
    ["occupancy", "--limit", "3"],
    ["bank conflicts shared memory"],
    ["tile", "--kind", "anti-pattern"],
    ["pipeline", "--language", "triton"],
    ["pipeline", "--language=shared", "--limit=2"],
    ["softmax", "--bottleneck", "memory", "--scope", "shared"],
    ["grid", "--metric", "ctas_per_sm"],
    ["warp", "--limit", "1000"],
    ["zzzunknownword"],
    ["Split KV decode"],
]


@pytest.mark.parametrize("args", SEARCHES, ids=[" ".join(a) for a in SEARCHES])
def test_search_answers_equal(kb: Path, args: list[str], capsys, monkeypatch) -> None:
    both(kb, ["search", *args, "--json"], capsys, monkeypatch)


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "split kv"],
        ["search", "zzzunknownword"],
        ["search", "tile", "--kind", "anti-pattern", "--limit", "3"],
        ["list"],
        ["list", "--kind", "anti-pattern"],
        ["show", "split-kv-decode"],
    ],
)
def test_human_output_equal(kb: Path, argv: list[str], capsys, monkeypatch) -> None:
    both(kb, argv, capsys, monkeypatch)


def test_show_and_list_answer_equal(kb: Path, capsys, monkeypatch) -> None:
    for path in sorted(Store(kb).entry_files()):
        both(kb, ["show", path.stem, "--json"], capsys, monkeypatch)
    for extra in (
        [],
        ["--kind", "optimization"],
        ["--language", "cute-dsl"],
        ["--language", "shared"],
    ):
        rows = json.loads(both(kb, ["list", *extra, "--json"], capsys, monkeypatch))
        assert rows or extra


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "split AND kv", "--json"],
        ["search", '"split kv"', "--json"],
        ["search", "title:split", "--json"],
        ["search", "spli*", "--json"],
        ["search", "split", "--kind", "recipe", "--json"],
        ["search", "split", "--limit", "0", "--json"],
        ["search", "the and", "--json"],
        ["search", "split split", "--json"],
        ["search", "split", "--lim", "3", "--json"],
        ["show", "no-such-entry", "--json"],
        ["show", "--json"],
        ["list", "--kind", "recipe", "--json"],
        ["list", "--language", "cobol", "--json"],
        ["list", "--language", "", "--json"],
        ["recommend", "p.md", "--json"],
        ["--timeout", "5", "search", "split", "--json"],
        ["search", "split", "--json", "-h"],
    ],
)
def test_declines_what_it_cannot_answer_the_same(kb: Path, argv: list[str]) -> None:
    assert answer(["--root", str(kb), *argv]) is None


def test_a_changed_entry_is_answered_by_the_full_path_then_quickly(
    kb: Path, capsys, monkeypatch
) -> None:
    p = kb / "docs/knowledge/optimizations/split-kv-decode.md"
    p.write_text(p.read_text().replace("## Pitfalls\n", "## Pitfalls\n- Zanzibar yak.\n", 1))
    assert answer(["--root", str(kb), "search", "zanzibar", "--json"]) is None  # stale
    _new_process()
    assert main(["--root", str(kb), "search", "zanzibar", "--json"]) == 0  # updates it
    capsys.readouterr()
    out = both(kb, ["search", "zanzibar", "--json"], capsys, monkeypatch)
    assert [h["id"] for h in json.loads(out)] == ["split-kv-decode"]


def test_a_write_through_the_store_refreshes_the_snapshot(kb: Path, capsys, monkeypatch) -> None:
    store = Store(kb)
    from kbopt.search import attach

    attach(store)
    store.narrow_conditions("split-kv-decode", pitfall="Quokka contexts.")
    out = both(kb, ["search", "quokka", "--json"], capsys, monkeypatch)
    assert [h["id"] for h in json.loads(out)] == ["split-kv-decode"]
    both(kb, ["show", "split-kv-decode", "--json"], capsys, monkeypatch)


def test_a_damaged_snapshot_is_dropped_and_written_again(kb: Path) -> None:
    ix = get_index(Store(kb))
    assert ix.gen is not None
    path = ix.gen.path / snapshot_mod.file_name()
    path.write_text('{"format": 1, "docs": ')
    argv = ["--root", str(kb), "search", "split", "--json"]
    assert answer(argv) is None and not path.exists()  # removed: derived data
    _new_process()
    search("split", store=Store(kb))  # a full open writes it again
    assert path.exists()


def test_plain_plans_equal_the_whoosh_parser(kb: Path) -> None:
    from kbopt.search.fast import compile_query
    from kbopt.search.query import parse_query

    store = Store(kb)
    ix = get_index(store)
    snap = snapshot_mod.load(ix.gen.path)  # type: ignore[union-attr]
    assert snap is not None
    words = sorted({w for d in snap.docs.values() for w in d["content"].split() if w.isalnum()})
    words += ["The", "a", "of", "KV", "sm_90", "x", "128", "splitting", "occupancy"]
    rng = random.Random(11)
    checked = 0
    for _ in range(400):
        query = " ".join(rng.sample(words, rng.randint(1, 4)))
        planned = plain_plan(query, snap)
        if planned is None:
            continue
        whoosh_plan = compile_query(parse_query(ix.searcher().schema, query))
        assert whoosh_plan is not None, query
        assert planned[0].words == whoosh_plan.words and whoosh_plan.mode == "and", query
        checked += 1
    assert checked > 300


def test_snapshot_scores_equal_the_numpy_scores(kb: Path) -> None:
    from kbopt.search.fast import compile_query
    from kbopt.search.query import parse_query

    store = Store(kb)
    ix = get_index(store)
    ix.ensure_fresh()
    snap = snapshot_mod.load(ix.gen.path)  # type: ignore[union-attr]
    assert snap is not None
    fast = ix.gen.fast()  # type: ignore[union-attr]
    docnums = {rel: i for i, rel in enumerate(snap.order)}
    words = ["split", "kv", "tile", "warp", "memory", "register", "pipeline", "decode", "grid"]
    rng = random.Random(3)
    for _ in range(200):
        query = " ".join(rng.sample(words, rng.randint(1, 3)))
        filters = rng.choice([{}, {"kind": "optimization"}, {"language": "shared"}])
        limit = rng.choice([1, 3, 10, 100])
        plan, _ = plain_plan(query, snap)  # type: ignore[misc]
        got = snap.run(plan, filters, limit)
        want = fast.run(compile_query(parse_query(ix.searcher().schema, query)), filters, limit)
        want_pos = [(docnums[_rel(ix, d)], s) for d, s in want]
        assert got == want_pos, (query, filters, limit)


def _new_process() -> None:
    """Forget the open indexes (an in-process index re-scans the files every 2 s only)."""
    sys.modules["kbopt.search"]._INDEXES.clear()  # type: ignore[attr-defined]


def _rel(ix, docnum: int) -> str:
    return ix.searcher().stored_fields(docnum)["path"]


def test_each_command_home_registers_its_command() -> None:
    """`kbopt.cli.COMMAND_HOMES` lets a command line load one command module: it must
    name the module that really registers the command."""
    import argparse
    import importlib

    from kbopt.cli import COMMAND_HOMES

    for command, module in COMMAND_HOMES.items():
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).register(sub)
        assert command in sub.choices, (command, module)


def test_a_bad_environment_is_left_to_the_full_command(
    kb: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("KBOPT_BUNDLED", str(kb / "nowhere"))
    assert answer(["--root", str(kb), "list", "--json"]) is None
    assert main(["--root", str(kb), "list", "--json"]) == 2
    assert "is not a folder" in capsys.readouterr().out
