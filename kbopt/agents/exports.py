"""The names a module really exports, read from its source (never guessed).

`module_file` finds the source of a dotted module (inside the project first, then the
installed packages, without importing the module itself) or takes a `.py` path inside
the project; `exported_names` parses it: `__all__` when the module declares it as a
literal, else its public top-level functions (with signatures), classes and variables.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path
from typing import Any

from kbopt.agents.errors import ToolError


def resolve_inside(root: Path, path: str) -> tuple[Path, Path]:
    """(absolute path, path relative to root); refuse anything that escapes the root.

    Symbolic links are resolved first, so a link pointing outside is refused too.
    """
    base = root.resolve()
    if any(ord(c) < 32 or c == "\x7f" for c in path):
        raise ToolError(f"path {path!r} contains a control character; refused")
    candidate = Path(path)
    full = (candidate if candidate.is_absolute() else base / candidate).resolve()
    try:
        return full, full.relative_to(base)
    except ValueError:
        raise ToolError(f"path {path!r} is outside the project root; refused") from None


def module_file(root: Path, module: str) -> Path:
    """The source file of a module: inside the project first, then the installed packages."""
    if module.endswith(".py"):
        full, _ = resolve_inside(root, module)
        if not full.is_file():
            raise ToolError(f"no such module file: {module}")
        return full
    if not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*", module):
        raise ToolError(f"{module!r} is not a dotted module name or a .py path")
    parts = module.split(".")
    for candidate in (
        root.joinpath(*parts).with_suffix(".py"),
        root.joinpath(*parts, "__init__.py"),
    ):
        if candidate.is_file():
            return candidate
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError) as exc:
        raise ToolError(f"module {module!r} not found: {exc}") from None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise ToolError(f"module {module!r} not found (no Python source for it)")
    return Path(spec.origin)


def exported_names(path: Path) -> dict[str, Any]:
    """The names a module really exports, read from its source (it is not imported).

    `__all__` when the module defines it literally; otherwise every public top-level
    function, class, variable and re-exported import.
    """
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise ToolError(f"{path}:{exc.lineno}: cannot parse: {exc.msg}") from None
    defined: dict[str, dict[str, str]] = {}
    declared: list[str] | None = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            defined[node.name] = {"kind": "function", "signature": f"({ast.unparse(node.args)})"}
        elif isinstance(node, ast.ClassDef):
            defined[node.name] = {"kind": "class"}
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    if target.id == "__all__" and node.value is not None:
                        declared = _literal_names(node.value)
                    else:
                        defined[target.id] = {"kind": "variable"}
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            if node.target.id == "__all__" and declared is not None:
                declared += _literal_names(node.value) or []
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                if name != "*":
                    defined.setdefault(name, {"kind": "imported"})
    if declared is not None:
        names = [{"name": n, **defined.get(n, {"kind": "unknown"})} for n in declared]
        return {"source": "__all__", "names": names}
    public = [
        {"name": n, **info}
        for n, info in defined.items()
        if not n.startswith("_") and info["kind"] != "imported"
    ]
    return {"source": "top-level definitions (no __all__)", "names": public}


def _literal_names(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.List | ast.Tuple):
        out = [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
        return out if len(out) == len(node.elts) else None
    return None
