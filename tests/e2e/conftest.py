"""End-to-end fixtures: the real `radixlm serve` binary on 127.0.0.1 with the default model.

One server is started per test session (model loading dominates start-up) and stopped with
SIGTERM at the end, which must exit 0. RADIXLM_BIN names the binary (default
build/apps/radixlm), RADIXLM_DEFAULT_MODEL the model (default: the model package's file).

RADIXLM_E2E_SANITIZER=1 (scripts/test.sh, with a binary built with ASan + UBSan): every
server stopped must exit 0 with no sanitizer report (LeakSanitizer's among them) in its log,
and is given four times as long to stop.
"""

import os
import pathlib
import re
import sys
import types

import pytest
import requests

from processes import LoggedProcess, free_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_S = 180
SANITIZER = os.environ.get("RADIXLM_E2E_SANITIZER") == "1"
# The first line of an ASan / LSan / UBSan report.
SANITIZER_REPORT = re.compile(r"ERROR: (Address|Leak)Sanitizer|: runtime error: |"
                              r"SUMMARY: (Address|Leak|UndefinedBehavior)Sanitizer")


def _binary():
    path = os.environ.get("RADIXLM_BIN") or str(ROOT / "build" / "apps" / "radixlm")
    if not os.path.exists(path):
        pytest.exit(f"radixlm binary not found at {path}; build it or set RADIXLM_BIN", 2)
    return path


def _model():
    return os.environ.get("RADIXLM_DEFAULT_MODEL") or "default"


class Server(LoggedProcess):
    """A running `radixlm serve` process."""

    def __init__(self, extra_args=(), api_key=None, wrapper=()):
        """wrapper: a command line the server runs under (it must exec the rest)."""
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.api_key = api_key
        cmd = [*wrapper, _binary(), "serve", "--host", "127.0.0.1", "--port", str(self.port),
               "--model-path", _model(), *extra_args]
        if api_key:
            cmd += ["--api-key", api_key]
        super().__init__(cmd, "radixlm-serve-")
        self.wait_until(self._healthy, STARTUP_TIMEOUT_S, "radixlm serve", "become healthy")

    def _healthy(self):
        try:
            return requests.get(self.url + "/health", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    def headers(self):
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def get(self, path, **kwargs):
        kwargs.setdefault("timeout", 120)
        kwargs.setdefault("headers", self.headers())
        return requests.get(self.url + path, **kwargs)

    def post(self, path, json=None, **kwargs):
        kwargs.setdefault("timeout", 120)
        kwargs.setdefault("headers", self.headers())
        return requests.post(self.url + path, json=json, **kwargs)

    def server_info(self):
        r = self.get("/get_server_info")
        r.raise_for_status()
        return r.json()

    def stop(self, timeout=30):
        """SIGTERM, then wait; returns the exit code (SIGKILL after the timeout). Under
        RADIXLM_E2E_SANITIZER=1, AssertionError when the server did not exit 0 or its log holds
        a sanitizer report."""
        code = super().stop(timeout * 4 if SANITIZER else timeout)
        if SANITIZER:
            self.check_sanitizers(code)
        return code

    def check_sanitizers(self, code):
        text = self.log_text()
        report = SANITIZER_REPORT.search(text)
        if report is not None:
            start = text.rfind("\n", 0, report.start()) + 1
            raise AssertionError(f"sanitizer report from radixlm serve (exit {code}, log "
                                 f"{self.log.name}):\n" + text[start:start + 20000])
        if code != 0:
            raise AssertionError(f"radixlm serve exited with {code} under the sanitizers:\n"
                                 + self.log_tail(80))


@pytest.fixture(scope="session")
def server():
    s = Server()
    yield s
    code = s.stop()
    assert code == 0, "radixlm serve did not exit cleanly on SIGTERM:\n" + s.log_tail()


@pytest.fixture(scope="session")
def sgl(server):
    """SGLang's frontend, importable without torch, bound to the session's server."""
    name = "sglang.srt.utils.hf_transformers_patches"
    if name not in sys.modules:
        stub = types.ModuleType(name)
        stub.apply_all = lambda *a, **k: None
        sys.modules[name] = stub
    import sglang

    sglang.set_default_backend(sglang.RuntimeEndpoint(server.url))
    return sglang


def sse_events(response):
    """The JSON payloads of an SSE response (stops at [DONE]); asserts [DONE] was seen."""
    import json

    events = []
    for line in response.iter_lines(decode_unicode=False):
        if not line:
            continue
        line = line.decode("utf-8")
        assert line.startswith("data: "), line
        payload = line[len("data: "):]
        if payload == "[DONE]":
            return events
        events.append(json.loads(payload))
    raise AssertionError("stream ended without data: [DONE]")
