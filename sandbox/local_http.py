"""A local HTTP server on a daemon thread of its own that stops at once.

``socketserver``'s ``serve_forever`` looks for a shutdown request only between polls, every
``poll_interval`` (0.5 s by default), so ``shutdown()`` blocks for up to that long. The sandbox
stops a dozen servers (the Function URLs, the control API, the AWS emulator) and the tests
start and stop hundreds of stubs: polling every ``POLL_S`` makes a stop take milliseconds, for
a few idle wake-ups a second per server.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import BaseServer

POLL_S = 0.05
"""How often a serving thread checks for a stop (what ``stop()`` waits at most)."""


def serve_in_thread(server: BaseServer, name: str) -> threading.Thread:
    """Start ``server.serve_forever`` on a daemon thread polling every ``POLL_S``."""
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": POLL_S}, name=name, daemon=True
    )
    thread.start()
    return thread


class LocalHttpServer:
    """A ``ThreadingHTTPServer`` (one daemon thread per request) on ``host:port`` (0: any free
    port), served by ``start()`` until ``stop()``."""

    def __init__(
        self,
        handler: type[BaseHTTPRequestHandler],
        host: str = "127.0.0.1",
        port: int = 0,
        name: str = "local-http",
    ) -> None:
        self.server = ThreadingHTTPServer((host, port), handler)
        self.server.daemon_threads = True
        self.name = name
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        """``http://<host>:<port>/``."""
        host = self.server.server_address[0]
        shown = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://{shown}:{self.port}/"

    def start(self) -> LocalHttpServer:
        self._thread = serve_in_thread(self.server, self.name)
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self.server.shutdown()
            self._thread.join()
            self._thread = None
        self.server.server_close()
