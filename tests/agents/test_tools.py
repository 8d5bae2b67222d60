"""The agents' tools, called directly: bound to the library, safe on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kbopt.agents import roles
from kbopt.agents.exports import exported_names, module_file
from kbopt.agents.remote import LocalExecutor
from kbopt.agents.tools import TOOLS, ToolContext, call_tool
from kbopt.store import Store
from tests.agents.conftest import TOY_KERNEL


def ctx_for(root: Path, role: str) -> ToolContext:
    return ToolContext(root=root, store=Store(root), executor=LocalExecutor(root), role=role)


def ok(ctx: ToolContext, name: str, tool_input: dict) -> dict:
    out = call_tool(ctx, name, tool_input)
    assert not out.is_error, out.content
    return json.loads(out.content)


def err(ctx: ToolContext, name: str, tool_input: dict) -> str:
    out = call_tool(ctx, name, tool_input)
    assert out.is_error, out.content
    return out.content


@pytest.mark.parametrize(
    "path",
    ["../outside.py", "/etc/passwd", "kernels/../../outside.py", "kernels/toy/../../../x"],
)
def test_paths_outside_the_project_are_refused(project: Path, path: str) -> None:
    ctx = ctx_for(project, roles.TRITON)
    for name, extra in (
        ("read_file", {}),
        ("write_file", {"content": "x"}),
        ("edit_file", {"old": "a", "new": "b"}),
        ("backup_file", {}),
    ):
        assert "outside the project root" in err(ctx, name, {"path": path, **extra})
    assert not (project.parent / "outside.py").exists()


def test_symlink_escapes_are_refused(project: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    (project / "kernels" / "link.txt").symlink_to(secret)
    ctx = ctx_for(project, roles.TRITON)
    assert "outside the project root" in err(ctx, "read_file", {"path": "kernels/link.txt"})


def test_a_folder_is_said_to_be_a_folder(project: Path) -> None:
    ctx = ctx_for(project, roles.TRITON)
    assert err(ctx, "read_file", {"path": "kernels"}) == "kernels is a folder, not a file"
    assert "kernels is a folder" in err(
        ctx, "edit_file", {"path": "kernels", "old": "a", "new": "b"}
    )
    assert err(ctx, "read_file", {"path": "kernels/nope.py"}) == "no such file: kernels/nope.py"


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("docs/knowledge/optimizations/split-kv-decode.md", "write_entry"),
        (".git/config", "not writable"),
        ("catalog/catalog.json", "not writable"),
        (".claude/agents/orchestrator.md", "not writable"),
    ],
)
def test_protected_paths_are_not_writable(project: Path, path: str, why: str) -> None:
    ctx = ctx_for(project, roles.TRITON)
    assert why in err(ctx, "write_file", {"path": path, "content": "x"})


def test_edit_needs_a_backup_and_revert_restores(project: Path) -> None:
    ctx = ctx_for(project, roles.TRITON)
    path = "kernels/toy/toy_v1.py"
    edit = {"path": path, "old": "BLOCK = 64", "new": "BLOCK = 128"}
    assert "call backup_file" in err(ctx, "edit_file", edit)
    assert ok(ctx, "backup_file", {"path": path})["existed"] is True
    ok(ctx, "edit_file", edit)
    assert "BLOCK = 128" in (project / path).read_text()
    # a second backup keeps the FIRST content
    assert ok(ctx, "backup_file", {"path": path})["already_backed_up"] is True
    assert ok(ctx, "revert_file", {"path": path})["action"] == "restored"
    assert (project / path).read_text() == TOY_KERNEL
    assert "no backup" in err(ctx, "revert_file", {"path": path})


def test_new_file_needs_no_backup_and_revert_removes_it(project: Path) -> None:
    ctx = ctx_for(project, roles.TRITON)
    path = "kernels/toy/toy_v2.py"
    ok(ctx, "backup_file", {"path": path})  # records that it did not exist
    assert ok(ctx, "write_file", {"path": path, "content": "BLOCK = 32\n"})["created"] is True
    assert "removed" in ok(ctx, "revert_file", {"path": path})["action"]
    assert not (project / path).exists()


def test_edit_requires_a_unique_match(project: Path) -> None:
    ctx = ctx_for(project, roles.TRITON)
    ok(ctx, "backup_file", {"path": "kernels/toy/toy_v1.py"})
    assert "occurs 4 times" in err(
        ctx, "edit_file", {"path": "kernels/toy/toy_v1.py", "old": "BLOCK", "new": "TILE"}
    )


def test_orchestrator_has_no_code_editing_tool(project: Path) -> None:
    ctx = ctx_for(project, roles.ORCHESTRATOR)
    for name in ("edit_file", "write_file", "read_file"):
        assert "not available to orchestrator" in err(ctx, name, {"path": "x.py"})


def test_list_exports_reads_all_or_public_top_level(project: Path) -> None:
    (project / "kernels" / "toy" / "api.py").write_text(
        "import os\nfrom math import sqrt\n__all__ = ['run', 'Config']\n"
        "def run(x, *, block=64): ...\nclass Config: ...\ndef helper(): ...\n"
    )
    ctx = ctx_for(project, roles.KERNEL_DESIGNER)
    out = ok(ctx, "list_exports", {"module": "kernels.toy.api"})
    assert out["source"] == "__all__"
    assert [n["name"] for n in out["names"]] == ["run", "Config"]
    assert out["names"][0]["signature"] == "(x, *, block=64)"
    # without __all__: public top-level definitions, imports left out
    out = ok(ctx, "list_exports", {"module": "kernels/toy/toy_v1.py"})
    assert [n["name"] for n in out["names"]] == [
        "BLOCK",
        "FAKE_DURATION_US",
        "FAKE_FLOOR_US",
        "launch",
    ]
    assert "not found" in err(ctx, "list_exports", {"module": "kernels.toy.nope"})
    assert "not a dotted module" in err(ctx, "list_exports", {"module": "a b"})


def test_list_exports_matches_a_real_module() -> None:
    # kbopt.search declares __all__: the tool must give exactly that list
    import importlib

    module = importlib.import_module("kbopt.search")  # `kbopt.search` is also a function name
    names = [n["name"] for n in exported_names(module_file(Path.cwd(), "kbopt.search"))["names"]]
    assert names == list(module.__all__)


def test_catalog_tools_read_and_update_through_the_store(project: Path) -> None:
    ctx = ctx_for(project, roles.ORCHESTRATOR)
    hits = ok(ctx, "search_catalog", {"query": "split", "limit": 5})
    assert "split-kv-decode" in [h["id"] for h in hits]
    hits = ok(
        ctx, "search_catalog", {"query": "split", "metric": "ctas_per_sm", "bottleneck": "latency"}
    )
    assert all("latency" in h["bottlenecks"] for h in hits)
    assert "metric" in err(ctx, "search_catalog", {"query": "split", "metric": "no_such_metric"})
    shown = ok(ctx, "show_entry", {"name": "split-kv-decode"})
    assert shown["path"] == "docs/knowledge/optimizations/split-kv-decode.md"
    before = len(shown["evidence"])
    row = {"config": "b=1", "before": "10 us", "after": "8 us", "change": "-20%"}
    ok(
        ctx,
        "record_evidence",
        {
            "name": "split-kv-decode",
            "source_type": "external report",
            "source": "a named paper, table 3",
            "rows": [row],
        },
    )
    assert len(Store(project).get("split-kv-decode").evidence) == before + 1
    local = {"name": "split-kv-decode", "source_type": "local experiment", "source": "x"}
    assert "Command:" in err(ctx, "record_evidence", {**local, "rows": [row]})


def test_write_entry_refuses_unsourced_or_placeholder_entries(project: Path) -> None:
    from kbopt.template import render_entry

    ctx = ctx_for(project, roles.ORCHESTRATOR)
    entry = Store(project).get("split-kv-decode").model_copy(update={"name": "unsourced-x"})
    unsourced = render_entry(entry.model_copy(update={"evidence": []}))
    assert "Performance Evidence" in err(ctx, "write_entry", {"markdown": unsourced})
    placeholder = render_entry(entry.model_copy(update={"mechanism": "TODO"}))
    assert "TODO" in err(ctx, "write_entry", {"markdown": placeholder})
    assert "already exists" in err(
        ctx, "write_entry", {"markdown": render_entry(Store(project).get("split-kv-decode"))}
    )
    assert not (project / "docs/knowledge/optimizations/unsourced-x.md").exists()


def test_recommend_ranks_from_a_profile(project: Path) -> None:
    ctx = ctx_for(project, roles.PROFILER)
    profile = (
        "## Profile: mla_decode triton_v1 | b=32, s=1, t=4096\n"
        "### Bottleneck: Memory-bound\n"
        "Root cause: few CTAs for 132 SMs. DRAM is underused.\n"
        "### Metrics\n| Metric | Value |\n|--------|-------|\n| ctas_per_sm | 0.25 |\n"
        "| dram_throughput_pct | 30 |\n"
    )
    out = ok(ctx, "recommend", {"profile": profile})
    assert out["bottleneck"] == "memory"
    assert out["opportunities"], "the bundled catalog has split-KV for small grids"
    # no language given: the profiled version's own (triton_v1), as `kbopt recommend` does
    assert out["language"] == "triton"
    shared = ok(ctx, "recommend", {"profile": profile, "language": "shared"})
    assert shared["language"] is None
    assert "invalid input" in err(ctx, "recommend", {"profile": ""})


def test_devlog_tools(project: Path) -> None:
    ctx = ctx_for(project, roles.KERNEL_DESIGNER)
    assert "no devlog" in err(ctx, "read_devlog", {"kernel": "toy"})
    ok(
        ctx,
        "update_devlog",
        {
            "kernel": "toy",
            "section": "entry",
            "heading": "toy_v2 -- 2026-12-02 -- BLOCK 128",
            "text": "Bigger tile.",
        },
    )
    log = ok(ctx, "read_devlog", {"kernel": "toy"})
    assert log["entries"] == ["toy_v2 -- 2026-12-02 -- BLOCK 128"]
    assert "needs a heading" in err(
        ctx, "update_devlog", {"kernel": "toy", "section": "entry", "text": "x"}
    )
    assert "invalid input" in err(ctx, "read_devlog", {"kernel": "../etc"})


def test_run_tests_and_benchmark_run_real_commands(project: Path) -> None:
    ctx = ctx_for(project, roles.TRITON)
    assert ok(ctx, "run_tests", {"path": "tests/toy"})["ok"] is True
    bench = ok(
        ctx,
        "run_benchmark",
        {"kernel": "toy", "version": "toy_v1", "dims": {"b": 32}, "backend": "fake"},
    )
    assert bench["ok"], bench["stderr"]
    assert "--config b=32" in bench["command"] and "--backend fake" in bench["command"]
    (row,) = json.loads(bench["stdout"])["rows"]
    assert row["time_us"] == 64.0 and row["device"] == "fake-gpu"
    assert "benchmarking is not available" in err(
        ctx, "run_benchmark", {"kernel": "nope", "version": "v1"}
    )
    assert "positive integer" in err(
        ctx, "run_benchmark", {"kernel": "toy", "version": "toy_v1", "dims": {"b": 0}}
    )


def test_profile_runs_kbopt_profile_and_keeps_fake_figures_out_of_the_devlog(
    project: Path,
) -> None:
    ctx = ctx_for(project, roles.PROFILER)
    out = ok(ctx, "profile_kernel", {"kernel": "toy", "version": "toy_v1", "backend": "fake"})
    assert out["ok"], out["stderr"]
    assert "--backend fake" in out["command"]  # no --config: the spec's first trial point
    assert "## Profile: toy toy_v1" in out["stdout"]
    # stand-in figures of the fake backend are not measurements: no devlog gets them
    assert not (project / "docs" / "kernels" / "toy.md").exists()
    assert "one configuration per call" in err(
        ctx, "profile_kernel", {"kernel": "toy", "version": "toy_v1", "config": "all"}
    )


def test_profile_names_the_gap_when_the_command_is_missing(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kbopt.agents import tools

    monkeypatch.setattr(tools, "_kbopt_has_command", lambda name: False)
    msg = err(
        ctx_for(project, roles.PROFILER), "profile_kernel", {"kernel": "toy", "version": "v1"}
    )
    assert msg.startswith("profiling is not available:")


def test_route_and_delegate_outside_a_run(project: Path) -> None:
    ctx = ctx_for(project, roles.ORCHESTRATOR)
    assert ok(ctx, "route_request", {"request": "Générer un kernel TileIR"})["stages"] == [
        roles.TRITON,
        roles.TILEIR,
    ]
    assert "outside a run" in err(ctx, "delegate", {"specialist": roles.CUTE, "task": "x"})
    assert "specialist" in err(
        ctx, "delegate", {"specialist": "kernel-cuda-specialist", "task": "x"}
    )


def test_every_tool_has_a_clean_schema() -> None:
    for spec in TOOLS.values():
        schema = spec.schema()
        assert schema["input_schema"]["type"] == "object"
        assert "$defs" not in json.dumps(schema) and "$ref" not in json.dumps(schema)
        assert spec.description and spec.cli


def test_discard_backup_keeps_the_change_and_pending_lists_open_backups(project: Path) -> None:
    from kbopt.agents.tools import pending_backups

    ctx = ctx_for(project, roles.TRITON)
    path = "kernels/toy/toy_v1.py"
    ok(ctx, "backup_file", {"path": path})
    ok(ctx, "edit_file", {"path": path, "old": "BLOCK = 64", "new": "BLOCK = 128"})
    assert pending_backups(project) == [path]
    assert ok(ctx, "discard_backup", {"path": path})["backup"] == "discarded"
    assert pending_backups(project) == []
    assert "BLOCK = 128" in (project / path).read_text()
    assert "no backup" in err(ctx, "discard_backup", {"path": path})


def test_kb7_update_tools_go_through_the_store(project: Path) -> None:
    from kbopt.lint import lint

    ctx = ctx_for(project, roles.ORCHESTRATOR)
    draft = ok(
        ctx, "draft_entry", {"kind": "anti-pattern", "name": "my-new-idea", "language": "triton"}
    )
    assert draft["markdown"].startswith(
        "---\nname: my-new-idea\nkind: anti-pattern\nlanguage: triton"
    )
    assert "already exists" in err(
        ctx, "draft_entry", {"kind": "optimization", "name": "split-kv-decode"}
    )
    ok(
        ctx,
        "narrow_conditions",
        {"name": "split-kv-decode", "triggers": ["kv_len >= 1024"], "pitfall": "short caches lose"},
    )
    entry = Store(project).get("split-kv-decode")
    assert "kv_len >= 1024" in [t.expression for t in entry.triggers]
    assert "short caches lose" in entry.pitfalls
    assert "unknown metric" in err(
        ctx, "narrow_conditions", {"name": "split-kv-decode", "triggers": ["speed > 1"]}
    )
    other = next(e.name for e in Store(project).entries() if e.name != "split-kv-decode")
    ok(ctx, "add_interaction", {"name": "split-kv-decode", "relation": "composes", "target": other})
    assert (other, "composes") in [
        (i.target, i.relation.value) for i in Store(project).get("split-kv-decode").interactions
    ]
    assert "relation" in err(
        ctx, "add_interaction", {"name": "split-kv-decode", "relation": "likes", "target": other}
    )
    row = {"config": "b=32, s=1, t=64", "before": "10 us", "after": "13 us", "change": "+30%"}
    moved = ok(
        ctx,
        "convert_kind",
        {
            "name": "split-kv-decode",
            "context": "Short KV caches (t=64): the combine pass costs more than the split gains.",
            "source_type": "external report",
            "source": "a named report, table 2",
            "rows": [row],
            "failure": "The combine pass costs more than the split gains on short caches.",
            "revealed_by": [{"metric": "kernel_count", "note": "the combine launch"}],
            "trigger": "kv_len <= 64",
        },
    )
    assert moved["moved_to"] == "docs/knowledge/anti-patterns/split-kv-decode.md"
    assert not (project / "docs/knowledge/optimizations/split-kv-decode.md").exists()
    assert [str(p) for p in lint(Store(project)) if "split-kv-decode" in str(p)] == []
