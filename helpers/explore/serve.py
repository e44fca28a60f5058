"""The built explorer over HTTP on this machine (what ``python -m http.server`` does, quietly),
for ``make explore``; the page also opens from the disk without it."""
from __future__ import annotations

import socket
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from .build import ExploreError


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


def url(host: str, port: int) -> str:
    """Where a browser on this machine finds the page."""
    shown = "localhost" if host in ("127.0.0.1", "localhost", "") else socket.gethostname() if host == "0.0.0.0" else host
    return f"http://{shown}:{port}/"


def server(folder: str | Path, port: int = 8000, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """An HTTP server of ``folder`` bound to ``host``:``port`` (not started); a clear error when
    the folder holds no explorer or the port is taken."""
    folder = Path(folder)
    if not (folder / "index.html").is_file():
        raise ExploreError(f"{folder} holds no explorer (no index.html): build it first (python -m helpers explore)")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ExploreError(f"port {port!r} is not a port number: choose one from 1024 to 65535 with --port")
    try:
        return ThreadingHTTPServer((host, port), partial(_Quiet, directory=str(folder)))
    except OSError as err:
        raise ExploreError(f"cannot serve on {host}:{port} ({err.strerror or err}): choose another port with "
                           "--port N (make explore PORT=N)") from None


def in_background(folder: str | Path, port: int = 0, host: str = "127.0.0.1") -> tuple[ThreadingHTTPServer, str]:
    """Serve ``folder`` from a daemon thread (port 0: a free one); (server, its URL). Stop it
    with ``server.shutdown(); server.server_close()``."""
    srv = server(folder, port, host)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, url(host, srv.server_address[1])


def serve(folder: str | Path, port: int = 8000, host: str = "127.0.0.1") -> None:
    """Serve ``folder`` until Ctrl-C, after printing its URL."""
    srv = server(folder, port, host)
    print(f"serving the explorer at {url(host, srv.server_address[1])} (Ctrl-C stops)", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        print("stopped")
    finally:
        srv.server_close()
