"""API pages written from the imported modules, without sphinx.ext.autodoc.

Autodoc re-parses every module's source (for member order, overloads and comment
docs), formats each signature and re-imports each object, all while Sphinx reads the
page: with ~90 modules that was more than half of a full site build.  Here the page
is written once, at generation time, as the reStructuredText autodoc itself would
emit (``py:module`` / ``py:class`` / ``py:method`` ... with the docstrings), from
`inspect` on the imported module:

- members: the public classes and functions a module defines (its ``__all__`` when it
  has one), in definition order (a class without a docstring too, since signatures
  name it); a class's public methods and properties that carry a docstring;
- signatures with the annotations as written in the source (kbopt modules use
  ``from __future__ import annotations``), defaults shortened when their repr is not
  worth reading;
- a docstring that is not valid reStructuredText (kbopt's are written for people
  reading the code: Markdown-ish tables, backticks) is shown verbatim rather than
  garbled or breaking the strict build.

The cross-reference targets are the same as autodoc's (``kbopt.store.Store.append_evidence``).
"""

from __future__ import annotations

import enum
import importlib
import inspect
import re
from collections.abc import Callable, Iterator
from typing import Any

_SPHINX_ROLE = re.compile(r":(?:[\w-]+:)?[\w-]+:(?=`)")
_LONG_DEFAULT = 60


def rst_problems(text: str) -> list[str]:
    """docutils' complaints about a docstring read as reStructuredText (empty if clean).

    Sphinx's own roles (``:class:`X```) are not known to bare docutils; they are read
    as plain interpreted text for the check, which is what decides validity here.
    """
    from docutils import nodes
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    doctree = new_document("<docstring>", _settings())
    Parser().parse(_SPHINX_ROLE.sub("", text), doctree)
    return [msg.astext() for msg in doctree.findall(nodes.system_message) if msg["level"] >= 2]


_SETTINGS: list[Any] = []


def _settings() -> Any:
    """docutils settings for a quiet parse, built once (building them costs more than
    parsing a docstring)."""
    if not _SETTINGS:
        import io

        from docutils.frontend import get_default_settings
        from docutils.parsers.rst import Parser

        settings = get_default_settings(Parser)
        settings.report_level = 5
        settings.halt_level = 5
        settings.warning_stream = io.StringIO()
        _SETTINGS.append(settings)
    return _SETTINGS[0]


def docstring_lines(doc: str | None) -> list[str]:
    """A docstring as reST lines: as written when docutils reads it cleanly, else a
    literal block."""
    text = inspect.cleandoc(doc or "")
    if not text:
        return []
    lines = text.splitlines()
    if rst_problems(text):
        return ["::", "", *["    " + line if line.strip() else "" for line in lines]]
    return lines


def _default(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    text = repr(value)
    if len(text) > _LONG_DEFAULT or text.startswith("<") or "\n" in text:
        return "..."
    return text


def _strip_annotated(text: str) -> str:
    """``typing.Annotated[X, MinLen(1)]`` -> ``X``: the constraints are for validation."""
    for prefix in ("typing.Annotated[", "Annotated["):
        while prefix in text:
            start = text.index(prefix)
            depth, i, comma = 0, start + len(prefix), -1
            for i in range(start + len(prefix), len(text)):
                ch = text[i]
                if ch in "[(":
                    depth += 1
                elif ch in "])":
                    if depth == 0:
                        break
                    depth -= 1
                elif ch == "," and depth == 0 and comma < 0:
                    comma = i
            inner = text[start + len(prefix) : comma if comma >= 0 else i]
            text = text[:start] + inner.strip() + text[i + 1 :]
    return text


def _annotation(ann: Any) -> str:
    if isinstance(ann, str):
        return _strip_annotated(ann)
    return _strip_annotated(inspect.formatannotation(ann))


def signature(obj: Callable[..., Any], *, drop_first: bool = False) -> str:
    """``(a: int, b: str = 'x') -> bool``, one line, or ``(...)`` when there is none."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    params = list(sig.parameters.values())
    if drop_first and params:
        params = params[1:]
    parts: list[str] = []
    seen_kw_only = False
    for i, p in enumerate(params):
        if p.kind is p.KEYWORD_ONLY and not seen_kw_only:
            seen_kw_only = True
            parts.append("*")
        if p.kind is p.VAR_POSITIONAL:
            seen_kw_only = True
            text = f"*{p.name}"
        elif p.kind is p.VAR_KEYWORD:
            text = f"**{p.name}"
        else:
            text = p.name
        if p.annotation is not p.empty:
            text += f": {_annotation(p.annotation)}"
        if p.default is not p.empty:
            text += (
                f" = {_default(p.default)}"
                if p.annotation is not p.empty
                else (f"={_default(p.default)}")
            )
        parts.append(text)
        if p.kind is p.POSITIONAL_ONLY and (
            i + 1 == len(params) or params[i + 1].kind is not p.POSITIONAL_ONLY
        ):
            parts.append("/")
    out = f"({', '.join(parts)})"
    if sig.return_annotation is not sig.empty:
        out += f" -> {_annotation(sig.return_annotation)}"
    return " ".join(out.split())


def _own_doc(obj: Any) -> str | None:
    doc = obj.__dict__.get("__doc__") if isinstance(obj, type) else getattr(obj, "__doc__", None)
    return doc if isinstance(doc, str) and doc.strip() else None


def _module_members(module: Any) -> Iterator[tuple[str, Any]]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    for name in names:
        obj = getattr(module, name, None)
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and getattr(
            obj, "__module__", None
        ) == module.__name__:
            yield name, obj


def _indent(lines: list[str], level: int) -> list[str]:
    pad = "   " * level
    return [pad + line if line.strip() else "" for line in lines]


def _function(name: str, func: Any, directive: str, level: int, options: list[str]) -> list[str]:
    doc = docstring_lines(_own_doc(func))
    if not doc:
        return []
    drop = directive == "method" and ":staticmethod:" not in options
    head = f".. py:{directive}:: {name}{signature(func, drop_first=drop)}"
    if inspect.iscoroutinefunction(func):
        options = [*options, ":async:"]
    return _indent([head, *[f"   {o}" for o in options], "", *_indent(doc, 1), ""], level)


def _class_members(cls: type) -> list[str]:
    lines: list[str] = []
    for name, attr in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(attr, property):
            doc = docstring_lines(_own_doc(attr))
            if doc:
                ann = ""
                ret = inspect.signature(attr.fget).return_annotation if attr.fget else None
                if ret not in (None, inspect.Signature.empty):
                    ann = f"   :type: {_annotation(ret)}"
                lines += _indent([f".. py:property:: {name}", *([ann] if ann else []), ""], 1)
                lines += [*_indent(doc, 2), ""]
        elif isinstance(attr, staticmethod):
            lines += _function(name, attr.__func__, "method", 1, [":staticmethod:"])
        elif isinstance(attr, classmethod):
            lines += _function(name, attr.__func__, "method", 1, [":classmethod:"])
        elif inspect.isfunction(attr):
            lines += _function(name, attr, "method", 1, [])
    return lines


def _class(name: str, cls: type) -> list[str]:
    own = _own_doc(cls)
    if own and own.startswith(f"{cls.__name__}("):
        own = "A record of the fields in its signature."  # dataclasses' generated docstring
    doc = docstring_lines(own)
    kind = "exception" if issubclass(cls, BaseException) else "class"
    sig = ""
    if kind == "class" and not issubclass(cls, enum.Enum):
        sig = signature(cls)
        sig = "" if sig == "(...)" else sig.split(" -> ")[0]
    return [f".. py:{kind}:: {name}{sig}", "", *_indent(doc, 1), "", *_class_members(cls)]


def render_api_rst(module_name: str, *, members: bool = True) -> str:
    """The reST for one module's page: its docstring and (with `members`) its public
    classes and functions."""
    module = importlib.import_module(module_name)
    lines = [f".. py:module:: {module_name}", "", *docstring_lines(module.__doc__), ""]
    if members:
        for name, obj in _module_members(module):
            if inspect.isclass(obj):
                lines += _class(name, obj)
            else:
                lines += _function(name, obj, "function", 0, [])
    return "\n".join(lines).rstrip() + "\n"
