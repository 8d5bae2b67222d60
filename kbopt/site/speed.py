"""Two caches that keep a full build of the site fast, with the same output.

- English stemming for the search index: Sphinx stems every word of every page
  (~40,000 calls with the pure-Python Snowball stemmer) though few are distinct;
  :class:`CachedEnglish` remembers each word's stem.
- Python cross-references: each type named in an API signature that is not a kbopt
  object (``str``, ``Path``...) makes Sphinx's Python domain scan every documented
  object for a name ending the same way; :class:`CachedPythonDomain` remembers each
  answer for the rest of the build (the objects no longer change once reading ends).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sphinx.domains.python import PythonDomain
from sphinx.search.en import SearchEnglish

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment


class CachedEnglish(SearchEnglish):
    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        self._stems: dict[str, str] = {}

    def stem(self, word: str) -> str:
        stem = self._stems.get(word)
        if stem is None:
            stem = self._stems[word] = super().stem(word)
        return stem


class CachedPythonDomain(PythonDomain):
    def find_obj(
        self,
        env: BuildEnvironment,
        modname: str,
        classname: str,
        name: str,
        type: str | None,
        searchmode: int = 0,
    ) -> list[tuple[str, Any]]:
        cache: dict[tuple[Any, ...], list[tuple[str, Any]]] = self.__dict__.setdefault(
            "_kbopt_found", {}
        )
        # The number of objects is part of the key: an answer given while pages are
        # still being read is not reused once more objects exist.
        key = (modname, classname, name, type, searchmode, len(self.objects))
        found = cache.get(key)
        if found is None:
            found = cache[key] = super().find_obj(env, modname, classname, name, type, searchmode)
        return list(found)


def install(app: Sphinx) -> None:
    app.add_search_language(CachedEnglish)
    app.add_domain(CachedPythonDomain, override=True)
