"""`kbopt mcp` driven by the official MCP SDK's own client over stdio.

Each test starts the real server as a subprocess (`python -m kbopt --root P mcp`) on a
copy of the catalog and talks to it with `mcp.Client`: the tools and resources an MCP
client sees, answers equal to the CLI's, a write that lands (and is searchable at
once), and writes refused by validation and by the role rules.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from kbopt.store import Store

PROFILE = (
    "## Profile: mla_decode triton_v1 | b=32, s=1, t=4096\n"
    "### Bottleneck: Memory-bound\n"
    "Root cause: few CTAs for 132 SMs. DRAM is underused.\n"
    "### Metrics\n| Metric | Value |\n|--------|-------|\n| ctas_per_sm | 0.25 |\n"
    "| dram_throughput_pct | 30 |\n"
)
ROW = {"config": "b=1", "before": "10 us", "after": "8 us", "change": "-20%"}


def _serve(root: Path, client_fn: Callable[[Client], Awaitable[Any]], *args: str) -> Any:
    env = {k: v for k, v in os.environ.items() if k != "KBOPT_CACHE_DIR"}
    env["KBOPT_BUNDLED"] = "0"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kbopt", "--root", str(root), "mcp", *args],
        env=env,
        cwd=str(root),
    )

    async def run() -> Any:
        with anyio.fail_after(120):
            async with Client(params, cache=None) as client:
                return await client_fn(client)

    return anyio.run(run)


def _json(result: Any) -> Any:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def _error(result: Any) -> str:
    assert result.is_error, result.content[0].text
    return str(result.content[0].text)


def test_reads_answer_like_the_cli(kb_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kbopt.cli import main

    async def session(client: Client) -> dict[str, Any]:
        tools = await client.list_tools()
        out: dict[str, Any] = {"tools": {t.name: t for t in tools.tools}}
        out["search"] = _json(await client.call_tool("search", {"query": "split kv", "limit": 5}))
        out["show"] = _json(await client.call_tool("show", {"name": "split-kv-decode"}))
        out["show_moves"] = _json(
            await client.call_tool("show", {"name": "split-kv-decode", "moves": True})
        )
        out["bad_moves"] = _error(
            await client.call_tool("show", {"name": "split-kv-decode", "moves": "yes"})
        )
        out["list"] = _json(await client.call_tool("list", {"kind": "anti-pattern"}))
        out["vocab"] = _json(await client.call_tool("vocab", {}))
        out["recommend"] = _json(
            await client.call_tool("recommend", {"profile": PROFILE, "language": "triton"})
        )
        out["bad_query"] = _error(await client.call_tool("search", {"query": "colour:red"}))
        out["bad_arg"] = _error(await client.call_tool("search", {"query": "x", "colour": 1}))
        out["no_entry"] = _error(await client.call_tool("show", {"name": "no-such-entry"}))
        resources = await client.list_resources()
        out["resources"] = [str(r.uri) for r in resources.resources]
        entry = await client.read_resource("kbopt://entry/split-kv-decode")
        out["entry_text"] = entry.contents[0].text  # type: ignore[union-attr]
        index = await client.read_resource("kbopt://catalog/index.json")
        out["index"] = json.loads(index.contents[0].text)  # type: ignore[union-attr]
        return out

    got = _serve(kb_copy, session)
    names = set(got["tools"])
    assert {"search", "show", "list", "recommend", "vocab"} <= names
    assert {"new_entry", "record_evidence", "narrow_conditions"} <= names
    assert {"convert_kind", "add_interaction"} <= names
    assert got["tools"]["search"].input_schema["required"] == ["query"]

    def cli(*argv: str) -> Any:
        capsys.readouterr()
        assert main(["--root", str(kb_copy), *argv, "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    assert got["search"] == cli("search", "split kv", "--limit", "5")
    assert got["show"] == cli("show", "split-kv-decode")
    assert got["show_moves"] == cli("show", "split-kv-decode", "--moves")
    assert "measured_moves" in got["show_moves"] and "measured_moves" not in got["show"]
    assert "moves must be true or false" in got["bad_moves"]
    assert got["list"] == cli("list", "--kind", "anti-pattern")
    assert got["vocab"] == cli("vocab")
    assert got["recommend"]["opportunities"], "the catalog has split-KV for small grids"
    assert got["recommend"]["bottleneck"] == "memory"
    assert "unknown field 'colour'" in got["bad_query"]
    assert "unknown argument" in got["bad_arg"] and "colour" in got["bad_arg"]
    assert "no entry named 'no-such-entry'" in got["no_entry"]
    assert "kbopt://catalog/index.json" in got["resources"]
    assert "kbopt://entry/split-kv-decode" in got["resources"]
    on_disk = kb_copy / "docs/knowledge/optimizations/split-kv-decode.md"
    assert got["entry_text"] == on_disk.read_text(encoding="utf-8")
    assert {r["id"] for r in got["index"]} == {p.stem for p in Store(kb_copy).entry_files()}


def test_a_write_lands_and_bad_writes_are_refused(kb_copy: Path) -> None:
    from kbopt.template import render_entry

    before = len(Store(kb_copy).get("split-kv-decode").evidence)
    entry = Store(kb_copy).get("split-kv-decode").model_copy(update={"name": "unsourced-x"})
    unsourced = render_entry(entry.model_copy(update={"evidence": []}))

    async def session(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["written"] = _json(
            await client.call_tool(
                "record_evidence",
                {
                    "name": "split-kv-decode",
                    "source_type": "external report",
                    "source": "zanzibar benchmark report, table 3",
                    "rows": [ROW],
                },
            )
        )
        # Indexed at once: the next search in the same warm server finds the new words.
        out["found"] = _json(await client.call_tool("search", {"query": "zanzibar"}))
        out["unsourced"] = _error(await client.call_tool("new_entry", {"markdown": unsourced}))
        out["no_rows"] = _error(
            await client.call_tool(
                "record_evidence",
                {"name": "split-kv-decode", "source_type": "external report", "source": "x"},
            )
        )
        out["local_without_command"] = _error(
            await client.call_tool(
                "record_evidence",
                {
                    "name": "split-kv-decode",
                    "source_type": "local experiment",
                    "source": "x",
                    "rows": [ROW],
                },
            )
        )
        out["unknown_target"] = _error(
            await client.call_tool(
                "add_interaction",
                {"name": "split-kv-decode", "relation": "composes", "target": "no-such-entry"},
            )
        )
        return out

    got = _serve(kb_copy, session)
    assert got["written"]["updated"].endswith("split-kv-decode.md")
    assert [h["id"] for h in got["found"]] == ["split-kv-decode"]
    assert len(Store(kb_copy).get("split-kv-decode").evidence) == before + 1
    assert "Performance Evidence" in got["unsourced"]
    assert not (kb_copy / "docs/knowledge/optimizations/unsourced-x.md").exists()
    assert "rows" in got["no_rows"]
    assert "Command:" in got["local_without_command"]
    assert "no-such-entry" in got["unknown_target"]


def test_a_role_without_catalog_writes_is_refused(kb_copy: Path) -> None:
    before = (kb_copy / "docs/knowledge/optimizations/split-kv-decode.md").read_bytes()

    async def session(client: Client) -> dict[str, Any]:
        tools = await client.list_tools()
        refused = await client.call_tool(
            "record_evidence",
            {
                "name": "split-kv-decode",
                "source_type": "external report",
                "source": "x",
                "rows": [ROW],
            },
        )
        return {"tools": [t.name for t in tools.tools], "refused": _error(refused)}

    got = _serve(kb_copy, session, "--role", "kernel-designer")
    assert "record_evidence" not in got["tools"] and "search" in got["tools"]
    assert "not available to kernel-designer" in got["refused"]
    after = (kb_copy / "docs/knowledge/optimizations/split-kv-decode.md").read_bytes()
    assert after == before


def test_unknown_role_is_a_clear_error(kb_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kbopt.cli import main

    assert main(["--root", str(kb_copy), "mcp", "--role", "wizard"]) == 2
    assert "unknown role 'wizard'" in capsys.readouterr().err


def test_every_request_read_is_answered_even_after_input_closes(kb_copy: Path) -> None:
    """Raw JSON-RPC lines written at once, then end of input: each request gets its
    answer (the SDK alone cancelled those still running), and a line that is not
    JSON-RPC gets the protocol's error instead of silence."""
    import subprocess

    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    lines = [
        json.dumps(init),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "garbage{",
        json.dumps({"jsonrpc": "2.0", "id": 2, "methodx": "ping"}),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "search", "arguments": {"query": "split"}},
            }
        ),
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "no/such/method"}),
        json.dumps({"jsonrpc": "2.0", "id": 5, "method": "ping"}),
    ]
    env = {k: v for k, v in os.environ.items() if k != "KBOPT_CACHE_DIR"}
    env["KBOPT_BUNDLED"] = "0"
    done = subprocess.run(
        [sys.executable, "-m", "kbopt", "--root", str(kb_copy), "mcp"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    replies = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert set(replies) == {None, 1, 2, 3, 4, 5}, done.stdout
    assert replies[None]["error"]["code"] == -32700 and replies[2]["error"]["code"] == -32600
    assert "split" in replies[3]["result"]["content"][0]["text"]
    assert replies[4]["error"]["code"] == -32601 and replies[5]["result"] == {}
    assert "Parse error" in done.stderr
