"""Site fixtures: one strict build of a copy of the project per test session.

The build is shared by the pytest-xdist workers through a file lock in the common
temporary folder, so `pytest -n 2` builds the site once, not once per worker.
"""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import threading
import time
from collections.abc import Iterator

import pytest
from filelock import FileLock
from site_support import BuiltSite, copy_project

from kbopt.site.build import build_site


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> BuiltSite:
    base = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        base = base.parent  # shared by every xdist worker of this session
    home = base / "kbopt-site"
    marker = home / "built.json"
    with FileLock(str(base / "kbopt-site.lock"), timeout=600):
        if not marker.is_file():
            shutil.rmtree(home, ignore_errors=True)
            started = time.time()
            root = copy_project(home / "project")
            report = build_site(root, home / "html", warnings_as_errors=True)
            marker.write_text(json.dumps({"seconds": report.seconds, "built_at": started}))
    done = json.loads(marker.read_text())
    return BuiltSite(
        root=home / "project", out=home / "html", seconds=done["seconds"], built_at=done["built_at"]
    )


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def site_url(built_site: BuiltSite) -> Iterator[str]:
    """The built site served by http.server on a free localhost port."""
    handler = functools.partial(_QuietHandler, directory=str(built_site.out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
