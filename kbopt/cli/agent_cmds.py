"""`kbopt agent ...`: run the agents, route a request, call a tool, export Claude Code files."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kbopt.cli.common import (
    check_or_regenerate,
    command,
    positive_float,
    positive_int,
    print_json,
    sm_version,
    store_from,
)
from kbopt.errors import KbError


def register(sub: argparse._SubParsersAction) -> None:
    from kbopt.agents.designer import register as register_agent_designer
    from kbopt.agents.roles import DELEGATES, ROLES

    register_agent_designer()  # `kbopt cycle ... --designer agent[:language]`
    group = sub.add_parser(
        "agent",
        help="Agents on the Anthropic API: run, autopilot, route, tools, Claude Code export.",
        description="Agents on the Anthropic API: run, autopilot, route, tools, Claude Code export.",
        epilog='Example: kbopt agent route "Generate a TileIR kernel for SwiGLU" --json',
    )
    agent_sub = group.add_subparsers(dest="agent_command", metavar="AGENT_COMMAND")
    agent_sub.required = True

    p = command(
        agent_sub,
        "run",
        "User-specified mode: the orchestrator plans, delegates, validates and reports.",
        'kbopt agent run "Apply CUDA Graph to train.py" --sm 90',
    )
    p.add_argument("request", help="what to do, in plain words (quote it)")
    _run_options(p)
    p.set_defaults(func=cmd_run)

    p = command(
        agent_sub,
        "autopilot",
        "Autopilot mode: from an analysis (Primary bottleneck / Evidence / Recommendations).",
        "kbopt agent autopilot ANALYSIS.md --sm 90",
    )
    p.add_argument(
        "analysis",
        type=Path,
        help="the analysis file (Primary bottleneck: / Evidence: / Recommendations:)",
    )
    _run_options(p)
    p.set_defaults(func=cmd_autopilot)

    p = command(
        agent_sub,
        "route",
        "Which specialist(s) a request goes to under the routing rules, and which rule decided.",
        'kbopt agent route "Convert the Triton kernel to TileIR" --sm 100 --json',
    )
    p.add_argument("request", help="the request to route, in plain words (quote it)")
    p.add_argument("--sm", type=sm_version, help="target GPU SM version (80, 90, 100...)")
    p.add_argument("--existing-triton", action="store_true", help="a Triton kernel exists already")
    p.add_argument(
        "--to",
        metavar="SPECIALIST",
        help="check a delegation of this request to SPECIALIST: exit 1 with the rule if "
        f"refused (one of: {', '.join(DELEGATES)})",
    )
    p.set_defaults(func=cmd_route)

    p = command(
        agent_sub,
        "tool",
        "Call one agent tool with a JSON input (what Claude Code agents and skills use).",
        'kbopt agent tool list_exports --role orchestrator --input \'{"module": "kbopt.store"}\'',
    )
    p.add_argument("name", help="the tool (`kbopt agent tools --role ROLE` lists a role's)")
    p.add_argument("--input", default="{}", help="the tool input as a JSON object (default: {})")
    p.add_argument(
        "--role",
        required=True,
        choices=list(ROLES),
        help="the agent calling the tool: only that role's tools are available to it",
    )
    p.set_defaults(func=cmd_tool)

    p = command(
        agent_sub,
        "check-task",
        "Claude Code's hook before each Task call: block (exit 2) a delegation the routing "
        "rules forbid, reading the call as JSON on standard input.",
        'echo \'{"tool_name": "Task", "tool_input": {...}}\' | kbopt agent check-task',
        json_flag=False,
    )
    p.set_defaults(func=cmd_check_task)

    p = command(
        agent_sub,
        "check-edit",
        "Claude Code's hook before each Edit, Write, MultiEdit or NotebookEdit call: block "
        "(exit 2) a change to an existing project file that has no backup (backup_file), "
        "reading the call as JSON on standard input.",
        'echo \'{"tool_name": "Edit", "tool_input": {"file_path": "..."}}\' | kbopt agent check-edit',
        json_flag=False,
    )
    p.set_defaults(func=cmd_check_edit)

    p = command(
        agent_sub,
        "tools",
        "List the agent tools, their input schemas and the roles that have them.",
        "kbopt agent tools --role orchestrator --json",
    )
    p.add_argument(
        "--role",
        choices=list(ROLES),
        help="only this role's tools (default: every tool)",
    )
    p.set_defaults(func=cmd_tools)

    p = command(
        agent_sub,
        "export-claude",
        "Write .claude/agents/*.md and .claude/skills/*/SKILL.md from the roles, or check them.",
        "kbopt agent export-claude --check",
    )
    p.add_argument("--check", action="store_true", help="exit 1 when the files are stale")
    p.set_defaults(func=cmd_export_claude)


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print what the orchestrator would receive (prompt, task, tools); no API call",
    )
    p.add_argument("--sm", type=sm_version, help="target GPU SM version, for hardware routing")
    p.add_argument("--existing-triton", action="store_true", help="a Triton kernel exists already")
    p.add_argument(
        "--model", type=_model_id, help="model id (default: KBOPT_AGENT_MODEL or the built-in)"
    )
    # The defaults are AgentConfig's (a test checks), written out: importing the runner
    # to build the parser would slow down every command.
    p.add_argument(
        "--max-tokens",
        type=positive_int,
        help="max output tokens per model call (default: KBOPT_AGENT_MAX_TOKENS or 8192)",
    )
    p.add_argument(
        "--max-turns",
        type=positive_int,
        help="max model calls per agent conversation (default: KBOPT_AGENT_MAX_TURNS or 40)",
    )
    p.add_argument(
        "--max-delegations",
        type=positive_int,
        help="max delegations per run (default: KBOPT_AGENT_MAX_DELEGATIONS or 30)",
    )
    p.add_argument(
        "--price",
        action="append",
        default=[],
        help="model=input,output in $ per million tokens, for the cost line (repeatable; "
        "default: KBOPT_AGENT_PRICES, then the built-in list prices)",
    )
    p.add_argument(
        "--connect-timeout",
        type=positive_float,
        metavar="SECONDS",
        help="give up connecting to the API after SECONDS (default: KBOPT_AGENT_CONNECT_TIMEOUT "
        "or 10)",
    )
    p.add_argument(
        "--read-timeout",
        type=positive_float,
        metavar="SECONDS",
        help="give up on an API reply after SECONDS (default: KBOPT_AGENT_READ_TIMEOUT or 300); "
        "kbopt --timeout bounds the whole run",
    )
    p.add_argument(
        "--remote",
        type=Path,
        metavar="CONTEXT.json",
        help="a JSON file holding the Remote Execution Context (host, job_id, workdir...) "
        "where the tools run; default: the file KBOPT_REMOTE names",
    )
    p.add_argument(
        "--transcript",
        type=Path,
        help="where to write the run's events as JSON lines (default: .kbopt-cache/agent-runs/)",
    )


def _model_id(text: str) -> str:
    """An argparse `type=`: a model id is one word (an empty one reaches the API as such)."""
    if not text.strip() or len(text.split()) != 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a model id (e.g. claude-sonnet-4-6)")
    return text.strip()


def _prices(args: argparse.Namespace) -> dict[str, Any]:
    """The --price options, checked: a dry run refuses what the real run would."""
    from kbopt.agents.runner import parse_prices

    prices: dict[str, Any] = {}
    for text in args.price:
        prices.update(parse_prices(text, "--price"))
    return prices


def _runner(args: argparse.Namespace) -> Any:
    # The key is checked first: without one, nothing else is read or imported.
    from kbopt.agents.runner import AgentConfig, make_client

    config = AgentConfig.from_env(
        model=args.model,
        max_tokens=args.max_tokens,
        max_turns=args.max_turns,
        max_delegations=args.max_delegations,
        sm=args.sm,
        existing_triton=args.existing_triton or None,
        connect_timeout_s=args.connect_timeout,
        read_timeout_s=args.read_timeout,
    )
    client = make_client(config=config)
    from kbopt.agents.remote import RemoteContext, make_executor
    from kbopt.agents.runner import AgentRunner
    from kbopt.agents.tools import ToolContext

    config.prices.update(_prices(args))
    remote = RemoteContext.load(args.remote) if args.remote else RemoteContext.from_env()
    store = store_from(args)
    ctx = ToolContext(root=store.root, store=store, executor=make_executor(store.root, remote))
    log = (lambda m: print(m, file=sys.stderr)) if not args.json else None
    return AgentRunner(client, config, ctx, remote=remote, log=log)


def _report(args: argparse.Namespace, runner: Any, result: Any) -> int:
    import datetime as dt

    cfg = runner.config
    # Every run leaves its transcript (tasks, tool calls, results, reports) for the record.
    transcript = args.transcript or (
        runner.ctx.root
        / ".kbopt-cache"
        / "agent-runs"
        / f"{dt.datetime.now(dt.UTC).strftime('%Y%m%dT%H%M%SZ')}.jsonl"
    )
    transcript.parent.mkdir(parents=True, exist_ok=True)
    transcript.write_text(
        "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in result.transcript),
        encoding="utf-8",
    )
    state = runner.ctx.state
    if args.json:
        print_json(
            {
                "report": result.text,
                "stopped": result.stopped,
                "contract_ok": result.contract_ok,
                "delegations": state.delegations,
                "refusals": state.refusals,
                "files_written": state.files_written,
                "pending_backups": result.pending_backups,
                "transcript": str(transcript),
                "usage": result.usage.as_dict(cfg.model, cfg.prices),
            }
        )
    else:
        print(result.text)
        print()
        print(result.usage.line(cfg.model, cfg.prices))
        print(f"transcript: {transcript}", file=sys.stderr)
        if not result.contract_ok:
            print("warning: the report does not follow its output contract", file=sys.stderr)
        for path in result.pending_backups:
            print(
                f"warning: {path} is still backed up: keep it "
                "(`kbopt agent tool discard_backup`) or revert it (`... revert_file`)",
                file=sys.stderr,
            )
    return 0 if result.stopped == "end_turn" else 1


def _dry_run(args: argparse.Namespace, task: str) -> int:
    from kbopt.agents.remote import RemoteContext
    from kbopt.agents.roles import ORCHESTRATOR, ROLES
    from kbopt.agents.runner import AgentConfig

    role = ROLES[ORCHESTRATOR]
    cfg = AgentConfig.from_env(model=args.model)
    _prices(args)  # what the real run would refuse, refused here too
    # What the orchestrator would receive, the Remote Execution Context block included.
    remote = RemoteContext.load(args.remote) if args.remote else RemoteContext.from_env()
    if remote is not None:
        task = f"{task}\n\n{remote.block()}"
    data = {
        "model": cfg.model,
        "role": role.name,
        "tools": list(role.tools),
        "task": task,
        "system": role.system_prompt(),
        "remote": remote.model_dump(mode="json") if remote is not None else None,
    }
    if args.json:
        print_json(data)
    else:
        print(f"model: {cfg.model}\ntools: {', '.join(role.tools)}\n\n{task}")
    return 0


def _config_for_prompt(args: argparse.Namespace) -> Any:
    from kbopt.agents.runner import AgentConfig

    return AgentConfig.from_env(sm=args.sm, existing_triton=args.existing_triton or None)


def cmd_run(args: argparse.Namespace) -> int:
    if args.dry_run:
        from kbopt.agents.runner import user_mode_prompt

        return _dry_run(args, user_mode_prompt(args.request, _config_for_prompt(args)))
    runner = _runner(args)
    return _report(args, runner, runner.run_request(args.request))


def cmd_autopilot(args: argparse.Namespace) -> int:
    from kbopt.contracts.analysis import Analysis
    from kbopt.textio import read_text

    text = read_text(args.analysis)

    analysis = Analysis.parse(text, path=str(args.analysis))  # fails before any API call
    if args.dry_run:
        from kbopt.agents.autoplan import plan, render_plan
        from kbopt.agents.runner import autopilot_prompt

        steps = plan(
            analysis, store_from(args), sm=args.sm, existing_triton=bool(args.existing_triton)
        )
        return _dry_run(args, autopilot_prompt(analysis, render_plan(analysis, steps)))
    runner = _runner(args)
    return _report(args, runner, runner.run_autopilot(text, path=str(args.analysis)))


def cmd_route(args: argparse.Namespace) -> int:
    from kbopt.agents.routing import DelegationRefused, check_delegation, route

    if args.to:
        try:
            r = check_delegation(
                args.to, args.request, sm=args.sm, existing_triton=args.existing_triton
            )
        except DelegationRefused as exc:
            if args.json:
                print_json({"accepted": False, "rule": exc.rule, "message": str(exc)})
            else:
                print(str(exc), file=sys.stderr)
            return 1
        if args.json:
            print_json({"accepted": True, "route": r.as_dict() if r else None})
        else:
            print(f"accepted: {args.to}" + (f" (rule {r.rule})" if r else ""))
        return 0
    r = route(args.request, sm=args.sm, existing_triton=args.existing_triton)
    if args.json:
        print_json(r.as_dict())
    else:
        also = f"  (or {', '.join(r.alternatives)})" if r.alternatives else ""
        print(" -> ".join(r.stages) + also)
        print(f"rule {r.rule}: {r.reason}")
    return 0


def cmd_tool(args: argparse.Namespace) -> int:
    from kbopt.agents.remote import RemoteContext, make_executor
    from kbopt.agents.tools import TOOLS, ToolContext, call_tool

    if args.name not in TOOLS:
        raise KbError(f"unknown tool {args.name!r}; tools: {', '.join(TOOLS)}")
    try:
        raw = json.loads(args.input)
    except json.JSONDecodeError as exc:
        raise KbError(f"--input is not JSON: {exc.msg} (column {exc.colno})") from None
    role = args.role  # required: a tool runs with its caller's tool set, never a guessed one
    store = store_from(args)
    remote = RemoteContext.from_env()
    ctx = ToolContext(
        root=store.root, store=store, executor=make_executor(store.root, remote), role=role
    )
    outcome = call_tool(ctx, args.name, raw)
    if args.json:
        try:
            result: Any = json.loads(outcome.content)
        except json.JSONDecodeError:
            result = outcome.content
        data: dict[str, Any] = {"ok": not outcome.is_error, "result": result}
        if outcome.is_error:  # every failure under --json carries `error`, as elsewhere
            data["error"] = [outcome.content]
        print_json(data)
    else:
        print(outcome.content, file=sys.stderr if outcome.is_error else sys.stdout)
    return 1 if outcome.is_error else 0


def _hook_payload() -> Any:
    """The tool call Claude Code gives a hook, as JSON on standard input."""
    raw = sys.stdin.buffer.read(4 * 1024 * 1024 + 1)
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise KbError("the hook input on standard input is not JSON") from None


def cmd_check_task(args: argparse.Namespace) -> int:
    from kbopt.agents.claude_hooks import check_task

    payload = _hook_payload()
    why = check_task(payload)
    if why is None:
        return 0
    print(why, file=sys.stderr)  # Claude Code shows this to the agent and blocks the call
    return 2


def cmd_check_edit(args: argparse.Namespace) -> int:
    from kbopt.agents.claude_hooks import check_edit
    from kbopt.store import find_project_root

    payload = _hook_payload()
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    start = Path(args.root) if getattr(args, "root", None) else Path(cwd or ".")
    why = check_edit(payload, find_project_root(start))
    if why is None:
        return 0
    print(why, file=sys.stderr)  # Claude Code shows this to the agent and blocks the call
    return 2


def cmd_tools(args: argparse.Namespace) -> int:
    from kbopt.agents.roles import ROLES, get_role
    from kbopt.agents.tools import TOOLS

    names = list(get_role(args.role).tools) if args.role else list(TOOLS)
    rows = [
        {
            **TOOLS[n].schema(),
            "cli": TOOLS[n].cli,
            "roles": [r.name for r in ROLES.values() if n in r.tools],
        }
        for n in names
    ]
    if args.json:
        print_json(rows)
    else:
        for row in rows:
            print(f"{row['name']:<16} {', '.join(row['roles'])}")
            print(f"{'':<16} {row['description']}")
    return 0


def cmd_export_claude(args: argparse.Namespace) -> int:
    from kbopt.agents.claude_export import export, stale

    root = store_from(args).root
    return check_or_regenerate(
        args,
        label=".claude/",
        stale_prefix="",
        command_hint="kbopt agent export-claude",
        stale=lambda: stale(root),
        regenerate=lambda: export(root),
    )
