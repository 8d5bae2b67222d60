"""`kbopt site build` and `kbopt site serve`: the Sphinx site over the catalog."""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
from pathlib import Path

from kbopt.cli.common import command, count_limit, port_number, print_json
from kbopt.errors import KbError
from kbopt.store import find_project_root


def register(sub: argparse._SubParsersAction) -> None:
    group = sub.add_parser(
        "site",
        help="Build or serve the HTML site generated from the catalog (Sphinx).",
        description="Build or serve the HTML site generated from the catalog (Sphinx).",
        epilog="Example: kbopt site build --incremental",
    )
    site_sub = group.add_subparsers(dest="site_command", metavar="SITE_COMMAND")
    site_sub.required = True

    p = command(
        site_sub,
        "build",
        "Build the site: every entry page, the catalog table, graph, evidence, API and CLI "
        "reference (a full build unless --incremental).",
        "kbopt site build --out _build/html -W",
    )
    p.add_argument("--out", type=Path, help="output folder (default: <root>/_build/html)")
    p.add_argument(
        "--incremental",
        action="store_true",
        help="reuse the previous build: re-read only the pages whose sources changed",
    )
    p.add_argument(
        "-W",
        "--warnings-as-errors",
        action="store_true",
        help="fail (exit 2) on any Sphinx warning, as CI does",
    )
    p.add_argument("-j", "--jobs", type=count_limit, default=1, help="parallel Sphinx processes")
    p.add_argument("-v", "--verbose", action="store_true", help="show Sphinx's progress")
    p.set_defaults(func=cmd_build)

    p = command(
        site_sub,
        "serve",
        "Serve a built site on localhost (Ctrl-C stops it).",
        "kbopt site serve --port 8000",
        json_flag=False,
    )
    p.add_argument("--out", type=Path, help="built site folder (default: <root>/_build/html)")
    p.add_argument("--port", type=port_number, default=8000, help="port (0 picks a free one)")
    p.set_defaults(func=cmd_serve)


def _root(args: argparse.Namespace) -> Path:
    return Path(args.root).resolve() if getattr(args, "root", None) else find_project_root()


def cmd_build(args: argparse.Namespace) -> int:
    from kbopt.site.build import build_site

    if args.jobs < 1:
        raise KbError("--jobs must be at least 1")
    report = build_site(
        _root(args),
        args.out,
        incremental=args.incremental,
        warnings_as_errors=args.warnings_as_errors,
        jobs=args.jobs,
        verbose=args.verbose and not args.json,
    )
    if args.json:
        print_json(report.summary())
        return 0
    for line in report.warnings:
        print(line, file=sys.stderr)
    kind = "incremental" if report.incremental else "full"
    print(
        f"{kind} build: {report.entries} entries, {len(report.docs_read)} pages read, "
        f"{len(report.warnings)} warning lines, {report.seconds:.1f} s"
    )
    print(f"open {report.out / 'index.html'}  (or: kbopt site serve)")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from kbopt.site.build import default_out

    out = (args.out or default_out(_root(args))).resolve()
    if not (out / "index.html").is_file():
        raise KbError(f"no built site in {out}: run `kbopt site build` first")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(out))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    except OSError as exc:
        raise KbError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror}") from None
    host, port = server.server_address[:2]
    print(f"serving {out} at http://{host!s}:{port}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
