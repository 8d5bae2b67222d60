"""Imports checked against the real exports of the module they name, before a write lands.

An agent that writes `from kernels.mla_decode.cute_common import launch` without having read
`cute_common` may have guessed the name from the file name.  `check_imports` parses the new
text, and for every import of a module that lives inside the project it reads that module's
source (the same reading as the `list_exports` tool) and refuses a name the module does not
define, with the list of what it does export.  Modules outside the project (installed
packages, the standard library) are not checked: their sources are not the agent's to guess.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from kbopt.agents.errors import ToolError
from kbopt.agents.exports import exported_names

_MAX_LISTED = 40  # exports named in one refusal; a longer list is cut with a count


def _module_source(root: Path, parts: list[str]) -> Path | None:
    for candidate in (
        root.joinpath(*parts).with_suffix(".py"),
        root.joinpath(*parts, "__init__.py"),
    ):
        if candidate.is_file():
            return candidate
    return None


def _is_project_package(root: Path, top: str) -> bool:
    """`top` names a package or module of the project itself (not an installed one)."""
    return (root / top).is_dir() or (root / f"{top}.py").is_file()


def _top_level_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The module's own statements, also those under `if` / `try` / `with` at top level."""
    for node in body:
        yield node
        if isinstance(node, ast.If | ast.While | ast.For):
            yield from _top_level_statements(node.body + node.orelse)
        elif isinstance(node, ast.With):
            yield from _top_level_statements(node.body)
        elif isinstance(node, ast.Try):
            handlers = [s for h in node.handlers for s in h.body]
            yield from _top_level_statements(node.body + handlers + node.orelse + node.finalbody)


def _targets(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Tuple | ast.List):
        for elt in node.elts:
            yield from _targets(elt)


def module_bindings(path: Path) -> tuple[set[str], bool]:
    """Every name the module binds at top level, and whether it has a module `__getattr__`.

    Private and re-imported names count: importing them works, so they are not guesses.
    """
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, OSError):
        return set(), True  # an unreadable module cannot be judged: let the write through
    names: set[str] = set()
    for node in _top_level_statements(tree.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names.update(_targets(target))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.For):
            names.update(_targets(node.target))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    return names, True  # a star import: its names are not all visible here
                names.add(alias.asname or alias.name.split(".")[0])
    return names, "__getattr__" in names


def _resolve_from(rel: Path, node: ast.ImportFrom) -> list[str] | None:
    """The dotted parts of the module `node` imports from (relative imports resolved)."""
    parts = (node.module or "").split(".") if node.module else []
    if node.level == 0:
        return parts
    package = list(rel.parent.parts)
    if node.level - 1 > len(package):
        return None
    return package[: len(package) - (node.level - 1)] + parts


def _listing(path: Path) -> str:
    names = [n["name"] for n in exported_names(path)["names"]]
    if not names:
        return "it exports no public name"
    shown = ", ".join(names[:_MAX_LISTED])
    more = f" and {len(names) - _MAX_LISTED} more" if len(names) > _MAX_LISTED else ""
    return f"it exports: {shown}{more}"


def import_problems(root: Path, rel: Path, text: str, before: str | None = None) -> list[str]:
    """`path:line: message` for every import of a project module that names what is not there.

    `rel` is the written file's path inside `root` (for relative imports); an import already
    present in `before` (the file's previous text) is not judged again, so an edit elsewhere
    in a file is never refused for an old line.
    """
    try:
        tree = ast.parse(text, filename=str(rel))
    except SyntaxError:
        return []  # not Python the check can read; running its tests will say more
    old = _imported_pairs(root, rel, before) if before is not None else set()
    problems: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            parts = _resolve_from(rel, node)
            if not parts or not _is_project_package(root, parts[0]):
                continue
            dotted = ".".join(parts)
            source = _module_source(root, parts)
            if source is None:
                if (dotted, "") not in old:
                    problems.append(
                        f"{rel}:{node.lineno}: no module {dotted} in the project "
                        f"(no {'/'.join(parts)}.py or {'/'.join(parts)}/__init__.py)"
                    )
                continue
            bound, open_ended = module_bindings(source)
            for alias in node.names:
                name = alias.name
                if name == "*" or open_ended or name in bound or (dotted, name) in old:
                    continue
                if source.name == "__init__.py" and _module_source(root, [*parts, name]):
                    continue  # a submodule of the package
                problems.append(
                    f"{rel}:{node.lineno}: {dotted} has no {name!r} "
                    f"({source.relative_to(root)}); {_listing(source)}"
                )
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if not _is_project_package(root, parts[0]) or (alias.name, "") in old:
                    continue
                if _module_source(root, parts) is None:
                    problems.append(f"{rel}:{node.lineno}: no module {alias.name} in the project")
    return problems


def _imported_pairs(root: Path, rel: Path, text: str) -> set[tuple[str, str]]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    pairs: set[tuple[str, str]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            dotted = ".".join(_resolve_from(rel, node) or [])
            pairs.add((dotted, ""))
            pairs.update((dotted, a.name) for a in node.names)
        elif isinstance(node, ast.Import):
            pairs.update((a.name, "") for a in node.names)
    return pairs


def check_imports(root: Path, rel: Path, text: str, before: str | None = None) -> None:
    """Refuse (ToolError) a Python file whose imports name what their project module lacks."""
    if rel.suffix != ".py":
        return
    problems = import_problems(root.resolve(), rel, text, before)
    if problems:
        raise ToolError(
            "refused: an import names what its module does not define (read the module, or "
            "call list_exports, before writing an import):\n" + "\n".join(problems)
        )
