"""The local AWS emulator: moto in server mode on 127.0.0.1, and the environment pointing at it.

Every boto3 client in the process (the sandbox's, the handlers', a developer's ``aws
--endpoint-url``) talks to the same in-process moto server. Credentials are fake, shared config
files are ignored, and ``AWS_ACCOUNT_ID_ENDPOINT_MODE=disabled`` keeps DynamoDB on the one
endpoint (account-based endpoints would bypass ``AWS_ENDPOINT_URL``).
"""

from __future__ import annotations

import logging
import os
import threading
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from socketserver import BaseServer

from components.offline.engine import ACCOUNT_ID
from sandbox.local_http import serve_in_thread

FAKE_ENV: Mapping[str, str] = {
    "AWS_ACCESS_KEY_ID": "sandbox",
    "AWS_SECRET_ACCESS_KEY": "sandbox",
    "AWS_SESSION_TOKEN": "sandbox",
    "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",
    "MOTO_ACCOUNT_ID": ACCOUNT_ID,
    # moto's own default for the SES sandbox check etc.
    "MOTO_ALLOW_NONEXISTENT_REGION": "false",
}


@dataclass
class Emulator:
    """A running moto server and the endpoint URL it answers on."""

    host: str
    port: int
    _server: BaseServer
    _thread: threading.Thread

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join()
        self._server.server_close()


def start(host: str = "127.0.0.1", port: int | None = None) -> Emulator:
    """Start moto's server app (quietly) on a thread and point this process's AWS env at it.

    What ``moto.server.ThreadedMotoServer`` starts, served by ``local_http`` so that a stop
    takes milliseconds, not up to werkzeug's 0.5 s poll (the tests start dozens).
    """
    # moto loads slowly: only on this path
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )

    # moto's server loads slowly: only on this path
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    os.environ.update(FAKE_ENV)
    os.environ.pop("AWS_PROFILE", None)
    app = DomainDispatcherApplication(create_backend_app)
    # Port 0: the system picks one as it binds. A port found free first and bound after could
    # be taken in between by another process's server (parallel test workers).
    server = make_server(host, port or 0, app, threaded=True, request_handler=MotoRequestHandler)
    chosen = server.port
    thread = serve_in_thread(server, "aws-emulator")
    endpoint = f"http://{host}:{chosen}"
    os.environ["AWS_ENDPOINT_URL"] = endpoint
    # moto keeps its state in process-wide backends: start from an empty account every time.

    reset = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")  # noqa: S310
    urllib.request.urlopen(reset, timeout=10).close()  # noqa: S310 - the local emulator
    return Emulator(host, chosen, server, thread)


@dataclass
class Attached:
    """An emulator someone else runs (``make upgrade-check``: one release's sandbox after
    another on the same state): attached to without a reset, left running at stop."""

    endpoint: str

    def stop(self) -> None:
        return None


def attach(endpoint: str) -> Attached:
    """Point this process's AWS env at a running emulator, keeping its state."""
    os.environ.update(FAKE_ENV)
    os.environ.pop("AWS_PROFILE", None)
    os.environ["AWS_ENDPOINT_URL"] = endpoint
    return Attached(endpoint)


@contextmanager
def running(host: str = "127.0.0.1", port: int | None = None) -> Iterator[Emulator]:
    """The emulator for the duration of a ``with`` block; the environment restored after."""
    saved = {k: os.environ.get(k) for k in (*FAKE_ENV, "AWS_ENDPOINT_URL", "AWS_PROFILE")}
    emulator = start(host, port)
    try:
        yield emulator
    finally:
        emulator.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
