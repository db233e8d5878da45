"""The local HTTP server every sandbox URL, the control API and the test stubs run on: it answers
while started, and ``stop()`` leaves no serving thread and no listening port behind."""

from __future__ import annotations

import socket
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler

import pytest

from sandbox.local_http import LocalHttpServer


class Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *args: object) -> None:
        pass


def test_a_started_server_answers_and_a_stopped_one_is_gone() -> None:
    server = LocalHttpServer(Hello, name="hello-test").start()
    assert server.url == f"http://127.0.0.1:{server.port}/"
    with urllib.request.urlopen(server.url, timeout=5) as answer:
        assert answer.read() == b"hello"
    assert "hello-test" in {t.name for t in threading.enumerate()}
    server.stop()
    assert "hello-test" not in {t.name for t in threading.enumerate()}
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", server.port), timeout=5):
        pass


def test_a_server_never_started_stops_cleanly() -> None:
    server = LocalHttpServer(Hello)
    server.stop()
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", server.port), timeout=5):
        pass
