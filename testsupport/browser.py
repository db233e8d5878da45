"""One headless Chromium for many documents, driven over the DevTools protocol on a pipe.

``--remote-debugging-pipe`` makes Chromium read commands on fd 3 and write answers on fd 4,
each a JSON message ended by a NUL byte (Chrome DevTools Protocol,
https://chromedevtools.github.io/devtools-protocol/). No port, no network, no extra package:
one browser process renders every page and mail of a test run, each in a fresh tab at the
size asked for, and measures it with a script run in the page.

The browser is whichever Chromium or Chrome ``testsupport.tools.browser`` finds.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testsupport import tools

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
    "--remote-debugging-pipe",
)
PHONE = (390, 844)
DESKTOP = (1280, 900)

# Measured in the page: what a person sees in the first screen, and what overflows it.
_MEASURE = """(() => {
  const d = document.documentElement, b = document.body;
  const hidden = el => el.closest('.detail');
  const primary = [...document.querySelectorAll('[data-primary]')].map(el => {
    const r = el.getBoundingClientRect();
    return {text: el.innerText.trim(), top: r.top + scrollY, bottom: r.bottom + scrollY,
            left: r.left, right: r.right};
  });
  const owner = [];
  const walk = document.createTreeWalker(b, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (!hidden(n.parentElement) && n.textContent.trim()) owner.push(n.textContent);
  }
  const links = [...document.querySelectorAll('a[href]')].map(a => a.innerText.trim());
  return {
    lang: d.getAttribute('lang') || '',
    scrollWidth: Math.max(d.scrollWidth, b ? b.scrollWidth : 0),
    innerWidth: innerWidth, innerHeight: innerHeight,
    text: b ? b.innerText : '', ownerText: owner.join(' '),
    primary: primary, links: links,
    height: Math.max(d.scrollHeight, b ? b.scrollHeight : 0),
  };
})()"""


@dataclass(frozen=True)
class Rendering:
    """What one document looked like at one size."""

    width: int
    height: int
    lang: str
    scroll_width: int
    inner_width: int
    inner_height: int
    text: str
    owner_text: str
    """The visible text outside ``.detail`` lines (what an owner reads)."""
    primary: list[dict[str, Any]]
    links: list[str]
    page_height: int
    png: bytes | None = None


class BrowserError(RuntimeError):
    pass


class Browser:
    """A Chromium process and its pipe; ``render`` opens one tab per document."""

    def __init__(self, binary: str | None = None) -> None:
        binary = binary or tools.browser()  # ToolMissing when there is none
        self.profile = tempfile.mkdtemp(prefix="see-chromium-")
        to_browser_r, self._write = os.pipe()
        self._read, from_browser_w = os.pipe()

        def fds() -> None:  # the browser reads fd 3 and writes fd 4
            os.dup2(to_browser_r, 100)
            os.dup2(from_browser_w, 101)
            os.dup2(100, 3)
            os.dup2(101, 4)

        self.proc = subprocess.Popen(  # noqa: S603 - the browser binary with fixed flags
            [binary, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4, to_browser_r, from_browser_w),
            preexec_fn=fds,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []

    # The protocol ---------------------------------------------------------------------------

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._receive()
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def _receive(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise BrowserError("chromium closed its pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return dict(json.loads(raw))

    def _wait_event(self, method: str, session: str) -> None:
        for i, event in enumerate(self.events):
            if event.get("method") == method and event.get("sessionId") == session:
                del self.events[i]
                return
        while True:
            event = self._receive()
            if event.get("method") == method and event.get("sessionId") == session:
                return
            self.events.append(event)

    # Rendering ------------------------------------------------------------------------------

    def render(self, html: str, size: tuple[int, int], *, screenshot: bool = False, full: bool = False) -> Rendering:
        """``html`` in a new tab of ``size`` (a phone is emulated as a mobile device, so the
        page's viewport meta applies as on a phone), measured, then closed."""
        width, height = size
        path = Path(self.profile) / f"doc{self._next}.html"
        path.write_text(html, encoding="utf-8")
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        try:
            self.send("Page.enable", {}, session)
            self.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
                session,
            )
            self.send("Page.navigate", {"url": path.as_uri()}, session)
            self._wait_event("Page.loadEventFired", session)
            found = self.send(
                "Runtime.evaluate", {"expression": _MEASURE, "returnByValue": True}, session
            )["result"]["value"]
            png = None
            if screenshot:
                params: dict[str, Any] = {"format": "png"}
                if full:
                    params["captureBeyondViewport"] = True
                    params["clip"] = {"x": 0, "y": 0, "width": width, "height": max(height, found["height"]), "scale": 1}
                png = base64.b64decode(self.send("Page.captureScreenshot", params, session)["data"])
            return Rendering(
                width, height, found["lang"], found["scrollWidth"], found["innerWidth"],
                found["innerHeight"], found["text"], found["ownerText"], found["primary"],
                found["links"], found["height"], png,
            )
        finally:
            self.send("Target.closeTarget", {"targetId": target})
            path.unlink(missing_ok=True)

    def close(self) -> None:
        with suppress(BrowserError):
            self.send("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._write)
        os.close(self._read)
        shutil.rmtree(self.profile, ignore_errors=True)


@contextmanager
def browser() -> Iterator[Browser]:
    b = Browser()
    try:
        yield b
    finally:
        b.close()
