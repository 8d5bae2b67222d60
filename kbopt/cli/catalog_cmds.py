"""Catalog commands: new, add, show, list, lint, catalog, vocab."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbopt.cli.common import check_or_regenerate, command, print_json, store_from
from kbopt.errors import KbError
from kbopt.layers import BUNDLED, PROJECT
from kbopt.vocab import Kind, Language, closed_vocabularies

if TYPE_CHECKING:  # loaded by the commands that use them, not to build the parser
    from kbopt.model import Entry
    from kbopt.store import LoadResult, Store


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "new",
        "Scaffold a new entry from the template at its path in docs/knowledge/.",
        "kbopt new optimization split-kv-combine --language triton",
    )
    p.add_argument(
        "kind",
        choices=[k.value for k in Kind],
        help="an optimization (a change to try) or an anti-pattern (a change to avoid)",
    )
    p.add_argument(
        "name", help="the entry's name: lowercase letters and digits, words joined by single dashes"
    )
    p.add_argument(
        "--language",
        choices=[lang.value for lang in Language],
        help="the language the entry is about (default: none, a shared entry)",
    )
    p.set_defaults(func=cmd_new)

    p = command(
        sub,
        "add",
        "Validate an entry file written anywhere and file it at its path in docs/knowledge/.",
        "kbopt add /tmp/my-entry.md",
    )
    p.add_argument("file", help="the entry's Markdown file, or - for standard input")
    p.add_argument(
        "--update",
        action="store_true",
        help="replace an existing entry of the same name (a bundled one: override it here)",
    )
    p.set_defaults(func=cmd_add)

    p = command(
        sub,
        "show",
        "Print one entry (Markdown, or its typed fields with --json).",
        "kbopt show split-kv-decode --json",
    )
    p.add_argument("name", help="the entry's name, e.g. split-kv-decode (`kbopt list` lists them)")
    p.add_argument(
        "--moves",
        action="store_true",
        help="add what each of the entry's moves found in this project's measured ablations "
        "(results/ablation/): trials that beat the search's best so far, out of those that "
        "applied it, with its preconditions held or passed over",
    )
    p.set_defaults(func=cmd_show)

    p = command(
        sub,
        "list",
        "List the entries (the project's and the bundled ones), optionally filtered.",
        "kbopt list --kind anti-pattern --json",
    )
    p.add_argument("--kind", choices=[k.value for k in Kind], help="only entries of this kind")
    p.add_argument("--language", help="a language, or 'shared'")
    p.set_defaults(func=cmd_list)

    p = command(
        sub,
        "lint",
        "Check every entry; exit 1 and name file:line for each problem.",
        "kbopt lint --json",
    )
    p.set_defaults(func=cmd_lint)

    p = command(
        sub,
        "catalog",
        "Regenerate catalog/ from the entries, or check it is current.",
        "kbopt catalog --check",
    )
    p.add_argument("--check", action="store_true", help="fail (exit 1) when catalog/ is stale")
    p.set_defaults(func=cmd_catalog)

    p = command(
        sub,
        "vocab",
        "Print the closed vocabularies (metrics, contexts, relations...).",
        "kbopt vocab --json",
    )
    p.set_defaults(func=cmd_vocab)


def cmd_new(args: argparse.Namespace) -> int:
    store = store_from(args)
    language = Language(args.language) if args.language else None
    path = store.add_scaffold(Kind(args.kind), args.name, language)
    shown = store.display(path)
    if args.json:
        print_json({"id": args.name, "path": shown, "layer": PROJECT})
    else:
        print(f"created {shown}: fill in the TODOs, then `kbopt lint`")
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    from kbopt.textio import read_source

    store = store_from(args)
    text, shown = read_source(args.file)  # a regular file, or `-`: standard input
    path = store.add_text(text, shown, overwrite=args.update)
    entry = store.read_file(path)
    # What `kbopt lint` will flag in this entry, said at once (the entry is kept).
    from kbopt.entry_checks import anti_pattern_helps, generalization_problems

    warnings = [m for m, _ in generalization_problems(entry)] + [
        f"anti-pattern evidence says the pattern helps ({r.config!r}: {r.change})"
        for r in anti_pattern_helps(entry)
    ]
    if args.json:
        print_json({**_row(store, entry, path), "warnings": warnings})
    else:
        print(f"{'updated' if args.update else 'added'} {store.display(path)}")
        for warning in warnings:
            print(
                f"warning: {store.display(path)}: {warning} (kbopt lint reports it)",
                file=sys.stderr,
            )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    store = store_from(args)
    path = store.find(args.name)
    entry = store.get(args.name)
    measured = _measured_moves(store, entry) if args.moves else None
    if args.json:
        assert path is not None  # get() raised otherwise
        data = entry.model_dump(mode="json")
        data["id"] = entry.name
        data["scope"] = entry.scope.value
        data.update(_where(store, path))
        if measured is not None:
            data["measured_moves"] = measured
        print_json(data)
    else:
        from kbopt.template import render_entry

        sys.stdout.write(render_entry(entry))
        if measured is not None:
            sys.stdout.write(_measured_moves_text(measured))
    return 0


def _measured_moves(store: Store, entry: Any) -> list[dict[str, Any]]:
    """Per move the entry declares, its record in the project's measured ablations."""
    from kbopt.workflow.move_record import entry_move_rows, record_for

    return [
        {
            "move": row["move"],
            "held": {"trials": row["held"][0], "advanced": row["held"][1]},
            "passed_over": {"trials": row["passed_over"][0], "advanced": row["passed_over"][1]},
        }
        for row in entry_move_rows(record_for(store.root), entry)
    ]


def _measured_moves_text(rows: list[dict[str, Any]]) -> str:
    def shown(counts: dict[str, int]) -> str:
        if not counts["trials"]:
            return "not measured"
        return f"advanced in {counts['advanced']} of {counts['trials']} trials"

    lines = ["", "## Moves, as measured", ""]
    lines += [
        f"- {row['move']}: preconditions held: {shown(row['held'])}; "
        f"passed over: {shown(row['passed_over'])}"
        for row in rows
    ] or ["This entry declares no move."]
    return "\n".join(lines) + "\n"


def cmd_list(args: argparse.Namespace) -> int:
    store = store_from(args)
    result = store.load_all()
    rows = [_row(store, e, result.paths[e.name]) for e in result.entries]
    if args.kind:
        rows = [r for r in rows if r["kind"] == args.kind]
    if args.language is not None:
        known = ["shared", *(lang.value for lang in Language)]
        if args.language not in known:
            raise KbError(f"unknown language {args.language!r}; use one of: {', '.join(known)}")
        want = None if args.language == "shared" else args.language
        rows = [r for r in rows if r["language"] == want]
    rows.sort(key=lambda r: (r["kind"], r["language"] or "", r["id"]))
    if args.json:
        print_json(rows)
    else:
        layered = len(store.layers) > 1  # one layer: nothing to tell apart
        for r in rows:
            layer = f"{r['layer']:<8} " if layered else ""
            print(
                f"{r['id']:<44} {r['kind']:<13} {r['language'] or 'shared':<10} {r['impact']:<6} "
                f"{layer}{r['title']}"
            )
    for problem in result.problems:
        print(f"kbopt: warning: {problem} (run `kbopt lint`)", file=sys.stderr)
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    from kbopt.catalog_index import stale_files
    from kbopt.lint import lint

    store = store_from(args)
    problems = lint(store)
    stale = stale_files(store)
    messages = [str(p) for p in problems] + [
        f"catalog/{name}: stale; run `kbopt catalog`" for name in stale
    ]
    count = len(store.entry_files())
    layers = _layers(store, store.load_all())
    if args.json:
        print_json({"ok": not messages, "entries": count, "problems": messages, "layers": layers})
    else:
        for m in messages:
            print(m)
        print(
            f"{count} entries{_layer_counts(layers)}, {len(messages)} problem(s)", file=sys.stderr
        )
    return 1 if messages else 0


def _where(store: Store, path: Path) -> dict[str, str]:
    """Where an entry comes from: its layer and its file as a user opens it."""
    layer = store.layer_of(path).name
    return {"path": store.display(path), "layer": layer}


def _row(store: Store, entry: Entry, path: Path) -> dict[str, Any]:
    row = entry.summary()
    row.update(_where(store, path))
    return row


def _layers(store: Store, result: LoadResult) -> list[dict[str, Any]]:
    """Each layer with its folder and entries, for `lint --json`."""
    out = []
    for layer in store.layers:
        names = sorted(n for n, la in result.layers.items() if la == layer.name)
        item: dict[str, Any] = {
            "layer": layer.name,
            "path": store.display(layer.knowledge_dir),
            "entries": names,
        }
        if layer.name == PROJECT and len(store.layers) > 1:
            item["overrides"] = sorted(result.overrides)  # replace bundled entries
        out.append(item)
    return out


def _layer_counts(layers: list[dict[str, Any]]) -> str:
    if len(layers) < 2:
        return ""
    project = next(la for la in layers if la["layer"] == PROJECT)
    bundled = next(la for la in layers if la["layer"] == BUNDLED)
    replaced = len(project.get("overrides", []))
    extra = f", {replaced} replacing bundled ones" if replaced else ""
    return (
        f" ({len(project['entries'])} in the project{extra}; "
        f"{len(bundled['entries'])} bundled with kbopt, from {bundled['path']})"
    )


def cmd_catalog(args: argparse.Namespace) -> int:
    from kbopt.catalog_index import stale_files, write_catalog

    store = store_from(args)
    return check_or_regenerate(
        args,
        label="catalog/",
        stale_prefix="catalog/",
        command_hint="kbopt catalog",
        stale=lambda: stale_files(store),
        regenerate=lambda: write_catalog(store),
        left_out=lambda: [str(p) for p in store.load_all().problems],
    )


def cmd_vocab(args: argparse.Namespace) -> int:
    vocab = closed_vocabularies()
    if args.json:
        from kbopt.vocab import CONTEXTS, METRICS

        vocab_full: dict[str, object] = dict(vocab)
        from kbopt.metric_sources import produced_by

        sources = produced_by()
        vocab_full["metric"] = [
            {
                "name": m.name,
                "unit": m.unit,
                "description": m.description,
                "ncu": m.ncu,
                "produced_by": list(sources[m.name]),
            }
            for m in METRICS.values()
        ]
        vocab_full["context"] = [{"name": k, "description": v} for k, v in CONTEXTS.items()]
        print_json(vocab_full)
    else:
        for key, values in vocab.items():
            print(f"{key}: {', '.join(values)}")
    return 0
