"""End-to-end fixtures: the real `radixlm serve` binary on 127.0.0.1 with the default model.

One server is started per test session (model loading dominates start-up) and stopped with
SIGTERM at the end, which must exit 0. RADIXLM_BIN names the binary (default
build/apps/radixlm), RADIXLM_DEFAULT_MODEL the model (default: the model package's file).
"""

import os
import pathlib
import signal
import socket
import subprocess
import sys
import tempfile
import time
import types

import pytest
import requests

ROOT = pathlib.Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_S = 180


def _binary():
    path = os.environ.get("RADIXLM_BIN") or str(ROOT / "build" / "apps" / "radixlm")
    if not os.path.exists(path):
        pytest.exit(f"radixlm binary not found at {path}; build it or set RADIXLM_BIN", 2)
    return path


def _model():
    return os.environ.get("RADIXLM_DEFAULT_MODEL") or "default"


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A running `radixlm serve` process."""

    def __init__(self, extra_args=(), api_key=None):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.api_key = api_key
        self.log = tempfile.NamedTemporaryFile(prefix="radixlm-serve-", suffix=".log", delete=False)
        cmd = [_binary(), "serve", "--host", "127.0.0.1", "--port", str(self.port),
               "--model-path", _model(), *extra_args]
        if api_key:
            cmd += ["--api-key", api_key]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        self._wait_ready()

    def log_tail(self, n=40):
        with open(self.log.name, "r", errors="replace") as f:
            return "".join(f.readlines()[-n:])

    def _wait_ready(self):
        deadline = time.time() + STARTUP_TIMEOUT_S
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"radixlm serve exited with {self.proc.returncode}:\n"
                                   + self.log_tail())
            try:
                if requests.get(self.url + "/health", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("radixlm serve did not become healthy:\n" + self.log_tail())

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
        """SIGTERM, then wait; returns the exit code (SIGKILL after the timeout)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


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
