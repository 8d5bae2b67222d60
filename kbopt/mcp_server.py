"""`kbopt mcp`: the catalog as a Model Context Protocol server over stdio.

An agent that asks the catalog fifty questions should not start fifty processes: this
server keeps one store, one search index and one strategy table warm, and answers
MCP clients (Claude Code, or any client of the official `mcp` SDK) over stdin/stdout.

Tools
    search, show, list, recommend, vocab — the same answers as `kbopt search|show|list|
    recommend|vocab --json`;
    new_entry, record_evidence, narrow_conditions, convert_kind, add_interaction — the
    update protocol, run through the agents' own tools (`kbopt.agents.tools.call_tool`):
    the same input models, the same validation by the store, and the same role rules
    (the server speaks as one role, `--role`, the orchestrator by default: the one role
    that writes the catalog).  A refused write comes back as a tool error the model
    can read, never as a crash of the server.
Resources
    `kbopt://catalog/index.json` and `kbopt://catalog/index.md` (the catalog index, built
    from the live store), and `kbopt://entry/{name}` (one entry's Markdown file).

Nothing here prints to stdout: stdout is the protocol's channel.  Notices (an index
rebuilt after damage) go to stderr, which MCP clients show as the server's log.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kbopt.errors import KbError, ProblemList

SERVER_NAME = "kbopt"
ENTRY_URI = "kbopt://entry/"
INDEX_JSON_URI = "kbopt://catalog/index.json"
INDEX_MD_URI = "kbopt://catalog/index.md"

# MCP tool name -> the agents' tool that performs the write (role rules included).
WRITE_TOOLS = {
    "new_entry": "write_entry",
    "record_evidence": "record_evidence",
    "narrow_conditions": "narrow_conditions",
    "convert_kind": "convert_kind",
    "add_interaction": "add_interaction",
}
WRITE_DESCRIPTIONS = {
    "new_entry": "Create a catalog entry from its whole Markdown file (or, with update=true, "
    "replace one). Validated like `kbopt add`: every section filled, evidence with its "
    "provenance, filed at the path its kind and language prescribe, indexed at once.",
    "record_evidence": "Append a Performance Evidence block (source, device, versions, date, "
    "command, Config/Before/After/Change rows) to an existing entry, optionally changing "
    "its status.",
    "narrow_conditions": "Tighten an entry's When to Apply after it was shown wrong somewhere: "
    "extra contexts, `metric op value` triggers, or a pitfall.",
    "convert_kind": "Turn an optimization shown to hurt into an anti-pattern (or back), with "
    "the situation in which the opposite holds and the measurement that showed it.",
    "add_interaction": "Record how two entries interact (requires, enables, conflicts, "
    "composes, supersedes) with a one-line reason.",
}


def _schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required or [],
        "additionalProperties": False,
    }


_LANGUAGE = {"type": "string", "description": "a language (triton, cute-dsl...) or 'shared'"}
READ_TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "search": (
        "Full-text search of the optimization catalog (words are ANDed; OR, NOT, "
        '"phrases", prefix*, field:value work too). Returns ranked entries with a snippet.',
        _schema(
            {
                "query": {"type": "string", "minLength": 1},
                "kind": {"type": "string", "enum": ["optimization", "anti-pattern"]},
                "scope": {"type": "string", "enum": ["shared", "language"]},
                "language": _LANGUAGE,
                "bottleneck": {"type": "string", "enum": ["memory", "compute", "latency"]},
                "metric": {"type": "string", "description": "a canonical metric name (vocab)"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
            },
            ["query"],
        ),
    ),
    "show": (
        "One catalog entry with all its typed fields (triggers, evidence, interactions...); "
        "with moves, also what each of its moves found in the project's measured ablations.",
        _schema(
            {
                "name": {"type": "string", "minLength": 1},
                "moves": {
                    "type": "boolean",
                    "default": False,
                    "description": "add measured_moves: per move the entry declares, the "
                    "trials that beat the search's best so far, out of those that applied it, "
                    "with its preconditions held or passed over",
                },
            },
            ["name"],
        ),
    ),
    "list": (
        "Every catalog entry as a summary row, optionally of one kind or language.",
        _schema(
            {
                "kind": {"type": "string", "enum": ["optimization", "anti-pattern"]},
                "language": _LANGUAGE,
            }
        ),
    ),
    "recommend": (
        "Ranked optimizations for a profile (the profiler contract's Markdown, or an "
        "autopilot analysis), each with the metric that triggered it, plus anti-pattern "
        "warnings to read before designing.",
        _schema(
            {
                "profile": {"type": "string", "minLength": 1, "description": "profile Markdown"},
                "language": {
                    "type": "string",
                    "description": "keep shared entries plus this language's ('shared': shared "
                    "entries only; 'all': every language). Default: the profiled version's own "
                    "language (triton_v3: triton, cute_v7: cute-dsl), else shared entries only",
                },
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
            },
            ["profile"],
        ),
    ),
    "vocab": (
        "The closed vocabularies: metric names with units, kernel contexts, bottleneck "
        "classes, relations, statuses... (what triggers and entries may use).",
        _schema({}),
    ),
}


class ToolFailed(Exception):
    """A tool call the model should read and fix (bad input, refused write...)."""


class CatalogServer:
    """The catalog behind the MCP handlers: one store, warm indexes, one role."""

    def __init__(self, root: Path | None = None, role: str | None = None):
        from kbopt.agents import roles
        from kbopt.agents.remote import LocalExecutor
        from kbopt.agents.tools import ToolContext
        from kbopt.search import attach
        from kbopt.store import Store

        self.store = Store(root) if root is not None else Store()
        attach(self.store)  # writes through this server are searchable at once
        self.role = role or roles.ORCHESTRATOR
        roles.get_role(self.role)  # an unknown role is a clear error at start-up
        self.ctx = ToolContext(
            root=self.store.root,
            store=self.store,
            executor=LocalExecutor(self.store.root),
            role=self.role,
        )

    # ------------------------------------------------------------------ tools

    def tool_definitions(self) -> list[dict[str, Any]]:
        """name, description, inputSchema of every tool this role may call."""
        from kbopt.agents import roles
        from kbopt.agents.tools import TOOLS

        out = [
            {"name": name, "description": desc, "inputSchema": schema}
            for name, (desc, schema) in READ_TOOLS.items()
        ]
        allowed = roles.get_role(self.role).tools
        for name, agent_tool in WRITE_TOOLS.items():
            if agent_tool in allowed:
                schema = TOOLS[agent_tool].schema()["input_schema"]
                out.append(
                    {"name": name, "description": WRITE_DESCRIPTIONS[name], "inputSchema": schema}
                )
        return out

    def call(self, name: str, arguments: dict[str, Any] | None) -> Any:
        """The JSON result of one tool call; `ToolFailed` with a readable message else."""
        args = dict(arguments or {})
        if name in WRITE_TOOLS:
            return self._write(name, args)
        handler = _READ_HANDLERS.get(name)
        if handler is None:
            raise ToolFailed(f"unknown tool {name!r}; tools: {', '.join(_all_tool_names())}")
        try:
            return handler(self, args)
        except ProblemList as exc:
            raise ToolFailed(f"{name} failed:\n{exc}") from None
        except KbError as exc:
            raise ToolFailed(f"{name} failed: {exc}") from None

    def _write(self, name: str, args: dict[str, Any]) -> Any:
        from kbopt.agents.tools import call_tool

        outcome = call_tool(self.ctx, WRITE_TOOLS[name], args)
        if outcome.is_error:
            raise ToolFailed(outcome.content)
        return json.loads(outcome.content)

    # ------------------------------------------------------------------ resources

    def resources(self) -> list[dict[str, str]]:
        out = [
            {
                "uri": INDEX_JSON_URI,
                "name": "catalog index (JSON)",
                "description": "every entry's summary row, as `kbopt list --json`",
                "mimeType": "application/json",
            },
            {
                "uri": INDEX_MD_URI,
                "name": "catalog index (Markdown)",
                "description": "one row per optimization and anti-pattern, as catalog/ has it",
                "mimeType": "text/markdown",
            },
        ]
        for path in self.store.entry_files():
            out.append(
                {
                    "uri": ENTRY_URI + path.stem,
                    "name": path.stem,
                    "description": f"catalog entry {self.store.display(path)}",
                    "mimeType": "text/markdown",
                }
            )
        return out

    def read_resource(self, uri: str) -> tuple[str, str]:
        """(text, mime type) of a resource; `ToolFailed` for an unknown URI."""
        if uri == INDEX_JSON_URI:
            return json.dumps(_list(self, {}), indent=1, ensure_ascii=False), "application/json"
        if uri == INDEX_MD_URI:
            from kbopt.catalog_index import expected_files

            return expected_files(self.store)["optimization-catalog.md"], "text/markdown"
        if uri.startswith(ENTRY_URI):
            name = uri[len(ENTRY_URI) :]
            try:
                path = self.store.find(name)
            except KbError as exc:
                raise ToolFailed(str(exc)) from None
            if path is None:
                raise ToolFailed(f"no entry named {name!r}")
            return path.read_text(encoding="utf-8"), "text/markdown"
        raise ToolFailed(f"unknown resource {uri!r}")


# ---------------------------------------------------------------------- read tools


def _cli_json(handler: Callable[[argparse.Namespace], int], **fields: Any) -> Any:
    """Run a `kbopt` command handler as `--json` and return what it printed: the
    server's answer is the CLI's, byte for byte."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        handler(argparse.Namespace(json=True, **fields))
    return json.loads(buf.getvalue())


def _search(server: CatalogServer, args: dict[str, Any]) -> Any:
    from kbopt.search import search

    _check_keys("search", args, READ_TOOLS["search"][1])
    limit = _int(args.get("limit", 10), "limit")
    hits = search(
        str(args.get("query", "")),
        kind=args.get("kind"),
        scope=args.get("scope"),
        language=args.get("language"),
        bottleneck=args.get("bottleneck"),
        metric=args.get("metric"),
        limit=limit,
        store=server.store,
    )
    return [h.to_dict() for h in hits]


def _show(server: CatalogServer, args: dict[str, Any]) -> Any:
    from kbopt.cli.catalog_cmds import cmd_show

    _check_keys("show", args, READ_TOOLS["show"][1])
    moves = args.get("moves", False)
    if not isinstance(moves, bool):
        raise ToolFailed(f"moves must be true or false (got {moves!r})")
    return _cli_json(cmd_show, root=str(server.store.root), name=str(args["name"]), moves=moves)


def _list(server: CatalogServer, args: dict[str, Any]) -> Any:
    from kbopt.cli.catalog_cmds import cmd_list

    _check_keys("list", args, READ_TOOLS["list"][1])
    return _cli_json(
        cmd_list,
        root=str(server.store.root),
        kind=args.get("kind"),
        language=args.get("language"),
    )


def _recommend(server: CatalogServer, args: dict[str, Any]) -> Any:
    from kbopt.contracts.profile import Profile
    from kbopt.ranking import default_language
    from kbopt.strategy import recommend

    _check_keys("recommend", args, READ_TOOLS["recommend"][1])
    profile = Profile.parse(str(args["profile"]))
    language = args.get("language")
    result = recommend(
        profile,
        language=default_language(profile.version) if language is None else language,
        limit=_int(args.get("limit", 10), "limit"),
        store=server.store,
    )
    return result.to_dict()


def _vocab(server: CatalogServer, args: dict[str, Any]) -> Any:
    from kbopt.cli.catalog_cmds import cmd_vocab

    _check_keys("vocab", args, READ_TOOLS["vocab"][1])
    return _cli_json(cmd_vocab, root=str(server.store.root))


_READ_HANDLERS: dict[str, Callable[[CatalogServer, dict[str, Any]], Any]] = {
    "search": _search,
    "show": _show,
    "list": _list,
    "recommend": _recommend,
    "vocab": _vocab,
}


def _all_tool_names() -> list[str]:
    return [*READ_TOOLS, *WRITE_TOOLS]


def _check_keys(tool: str, args: dict[str, Any], schema: dict[str, Any]) -> None:
    """Unknown or missing arguments are the caller's mistake, said plainly."""
    props = schema["properties"]
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise ToolFailed(
            f"{tool}: unknown argument(s) {', '.join(unknown)}; allowed: "
            + (", ".join(props) or "none")
        )
    missing = [k for k in schema.get("required", []) if k not in args]
    if missing:
        raise ToolFailed(f"{tool}: missing argument(s) {', '.join(missing)}")
    for key, spec in props.items():
        value = args.get(key)
        if value is None:
            continue
        if spec.get("type") == "string" and not isinstance(value, str):
            raise ToolFailed(f"{tool}: {key} must be a string")
        if "enum" in spec and value not in spec["enum"]:
            raise ToolFailed(f"{tool}: {key} must be one of {', '.join(spec['enum'])}")


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolFailed(f"{name} must be an integer (got {value!r})")
    return value


# ---------------------------------------------------------------------- the MCP server


def build_server(catalog: CatalogServer) -> Any:
    """The low-level MCP server (official SDK) whose handlers call `catalog`."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    import kbopt

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(**t) for t in catalog.tool_definitions()])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            result = catalog.call(params.name, params.arguments)
        except ToolFailed as exc:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=str(exc))], is_error=True
            )
        text = json.dumps(result, ensure_ascii=False, default=str)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[types.Resource(**r) for r in catalog.resources()]
        )

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        from mcp.shared.exceptions import MCPError

        try:
            text, mime = catalog.read_resource(str(params.uri))
        except ToolFailed as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=params.uri, mime_type=mime, text=text)]
        )

    return Server(
        SERVER_NAME,
        version=kbopt.__version__,
        instructions=(
            "kbopt's catalog of GPU kernel optimizations and anti-patterns. Search or "
            "recommend before designing a change; write back what you learned with the "
            f"update tools (role: {catalog.role})."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def serve_stdio(root: Path | None = None, role: str | None = None) -> None:
    """Run the server on stdin/stdout until the client closes the connection."""
    import anyio
    from mcp.server.stdio import stdio_server

    t0 = time.perf_counter()
    catalog = CatalogServer(root, role)
    catalog.call("search", {"query": "kernel", "limit": 1})  # open the index before serving
    server = build_server(catalog)
    warm_ms = (time.perf_counter() - t0) * 1000

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await serve_streams(server, read_stream, write_stream)

    print(
        f"kbopt mcp: serving {catalog.store.root} as {catalog.role} ({warm_ms:.0f} ms to warm up)",
        file=sys.stderr,
        flush=True,
    )
    anyio.run(run)


# After the client closes its end, how long requests already read may still take to be
# answered before the server gives up on them.
ANSWER_GRACE_S = 60.0


async def serve_streams(server: Any, read_stream: Any, write_stream: Any) -> None:
    """`server.run` between the transport's streams and two of ours, because the SDK
    alone (1) drops a line that is not JSON-RPC without a word, so a client waiting for
    its answer hangs: here it gets the JSON-RPC error (-32700 parse error, -32600
    invalid request) and stderr a note; (2) cancels the requests still running when the
    client closes its end (a client that writes its requests and closes its stdin got
    their answers or not, by timing): here the server reads its end of input only once
    every request read has been answered (at most ANSWER_GRACE_S later)."""
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    to_server, server_reads = anyio.create_memory_object_stream[Any](0)
    server_writes, from_server = anyio.create_memory_object_stream[Any](0)
    unanswered: Counter[Any] = Counter()  # request id -> requests read, not yet answered

    async def inbound() -> None:
        async with read_stream, to_server:
            async for item in read_stream:
                if isinstance(item, Exception):
                    reply = invalid_message_reply(item)
                    print(f"kbopt mcp: {reply.error.message}", file=sys.stderr, flush=True)
                    await write_stream.send(SessionMessage(reply))
                    continue
                if isinstance(item.message, types.JSONRPCRequest):
                    unanswered[item.message.id] += 1
                await to_server.send(item)
            with anyio.move_on_after(ANSWER_GRACE_S):
                while +unanswered:
                    await anyio.sleep(0.01)
            if +unanswered:
                ids = ", ".join(repr(i) for i in +unanswered)
                print(f"kbopt mcp: input closed; gave up on request(s) {ids}", file=sys.stderr)

    async def outbound() -> None:
        async with from_server:
            async for item in from_server:
                message = item.message
                answer = isinstance(message, types.JSONRPCResponse | types.JSONRPCError)
                if answer and unanswered[message.id] > 0:
                    unanswered[message.id] -= 1
                await write_stream.send(item)

    async with anyio.create_task_group() as tg:
        tg.start_soon(inbound)
        tg.start_soon(outbound)
        await server.run(server_reads, server_writes, server.create_initialization_options())
    await write_stream.aclose()  # what server.run did to the transport's stream


def invalid_message_reply(exc: Exception) -> Any:
    """The JSON-RPC error answering a line that is not a JSON-RPC message: a parse error
    for text that is not JSON, an invalid request for JSON that is not a message (with
    the request's id when it has a usable one, so the client's wait ends)."""
    import mcp_types as types
    from pydantic import ValidationError

    errors = exc.errors() if isinstance(exc, ValidationError) else []
    if not errors or any(e["type"] == "json_invalid" for e in errors):
        code, text = types.PARSE_ERROR, "Parse error: a line that is not JSON"
    else:
        code, text = types.INVALID_REQUEST, "Invalid Request: JSON that is not a JSON-RPC message"
    request_id = None
    for e in errors:
        given = e.get("input")
        if isinstance(given, dict) and type(given.get("id")) in (int, str):
            request_id = given["id"]
            break
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=text)
    )
