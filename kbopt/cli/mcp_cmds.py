"""`kbopt mcp`: serve the catalog to MCP clients (Claude Code...) over stdio."""

from __future__ import annotations

import argparse
from pathlib import Path

from kbopt.cli.common import command


def register(sub: argparse._SubParsersAction) -> None:
    from kbopt.agents.roles import ROLES

    p = command(
        sub,
        "mcp",
        "Serve the catalog over the Model Context Protocol on stdin/stdout: search, show, "
        "list, recommend, vocab and the update protocol's writes, from one warm process. "
        "Register it with an MCP client (`kbopt agent export-claude` and `kbopt init` "
        "write .mcp.json for Claude Code).",
        "kbopt mcp --role orchestrator",
        json_flag=False,
    )
    p.add_argument(
        "--role",
        help="the agent role whose write rules apply (default: orchestrator, the role "
        "that records what was learned; another role gets the read tools only; roles: "
        f"{', '.join(ROLES)})",
    )
    p.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    from kbopt.agents import roles
    from kbopt.errors import KbError
    from kbopt.mcp_server import serve_stdio

    if args.role is not None and args.role not in roles.ROLES:
        raise KbError(f"unknown role {args.role!r}; roles: {', '.join(roles.ROLES)}")
    serve_stdio(Path(args.root) if args.root else None, args.role)
    return 0
