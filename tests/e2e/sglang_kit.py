"""SGLang's own client-side API test kits (`sglang.test.kits`, PyPI sglang==0.5.23 installed
--no-deps from scripts/requirements-nodeps.txt), pointed at a real `radixlm serve` on 127.0.0.1.

The kits are unittest mixins that need only `self.base_url` (plus, for some, `self.process`,
`self.model`, `self.client`, `self.tokenizer`). SGLang pairs them with fixtures that launch its
own server; here `RadixlmServerCase` launches `radixlm serve` instead. The test methods run
unchanged from the installed package.

What is not SGLang's code (said here so nothing passes for what it is not):
- `install_import_stubs()` replaces, in `sys.modules`, the few SGLang modules the kits import
  only for their launch machinery and that import torch at module level:
  `sglang.test.test_utils` (kept: its `run_logprob_check`, compiled from the installed file;
  the launch helpers raise if called), `sglang.srt.utils` / `.common` (`kill_process_tree`),
  `sglang.srt.utils.hf_transformers_utils` (`get_tokenizer`, see below), `sglang.test.run_eval`.
- `ServerTokenizer` stands in for the HF tokenizer the streaming-session fixture loads: it asks
  the server's `/tokenize` (`add_special_tokens` true, as `tokenizer.encode` does) and finds
  `bos_token_id` as the id `/tokenize` prepends.

`kit_classes()` returns the assembled test classes, each with the server flags it runs under
(SGLang's fixtures set the same conditions with environment variables or flags: a waiting
timeout with one running request, a running timeout, a 512-token context) and, for two kits,
a smaller generation length through the kit's own knob (CPU_* below).
"""

import ast
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time
import types
import unittest

import requests

from processes import start_on_free_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_S = 180
# Knobs the kits expose as class attributes (SGLang's test classes set them per model).
CPU_PAUSE_MAX_NEW_TOKENS = 128  # kit default 512
# The running request must outlast the waiting timeout (1 s below) on a fast CPU (384 tokens:
# about 2.5 s at 150 tok/s) and finish within the kit's 60 s on a slow one.
CPU_WAITING_TIMEOUT_MAX_NEW_TOKENS = 384  # kit default 512


def _stub(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module


def _not_here(what):
    def fail(*args, **kwargs):
        raise RuntimeError(f"{what} launches SGLang's own server; not available against radixlm")

    return fail


def _real_test_utils_function(test_utils_path, name, namespace):
    """Compiles one top-level function of the installed sglang/test/test_utils.py."""
    tree = ast.parse(pathlib.Path(test_utils_path).read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            code = compile(ast.Module(body=[node], type_ignores=[]), test_utils_path, "exec")
            exec(code, namespace)
            return namespace[name]
    raise RuntimeError(f"{name} not found in {test_utils_path}")


def install_import_stubs():
    """Makes the kits importable without torch / transformers (see the module docstring)."""
    if "sglang.test.test_utils" in sys.modules:
        return
    import importlib.util

    _stub("sglang.srt.utils.hf_transformers_patches", apply_all=lambda *a, **k: None)
    spec = importlib.util.find_spec("sglang")
    if spec is None:
        raise RuntimeError("sglang is not installed (pip install --no-deps -r "
                           "scripts/requirements-nodeps.txt)")
    package_dir = pathlib.Path(spec.origin).parent
    utils = _stub("sglang.srt.utils")
    utils.__path__ = [str(package_dir / "srt" / "utils")]
    kill = _not_here("kill_process_tree")
    utils.kill_process_tree = kill
    _stub("sglang.srt.utils.common", kill_process_tree=kill)
    _stub("sglang.srt.utils.hf_transformers_utils", get_tokenizer=_not_here("get_tokenizer"))
    _stub("sglang.test.run_eval", run_eval=_not_here("run_eval"))

    from typing import Tuple

    test_utils_path = str(package_dir / "test" / "test_utils.py")
    namespace = {"requests": requests, "unittest": unittest, "Tuple": Tuple}
    run_logprob_check = _real_test_utils_function(test_utils_path, "run_logprob_check", namespace)
    test_utils = _stub(
        "sglang.test.test_utils",
        CustomTestCase=unittest.TestCase,
        DEFAULT_SMALL_MODEL_NAME_FOR_TEST="default",
        DEFAULT_TIMEOUT_FOR_SERVER_LAUNCH=STARTUP_TIMEOUT_S,
        DEFAULT_URL_FOR_TEST="http://127.0.0.1:0",
        popen_launch_server=_not_here("popen_launch_server"),
        terminate_and_kill_process_tree=_not_here("terminate_and_kill_process_tree"),
        run_logprob_check=run_logprob_check,
        is_in_ci=lambda: False,
        is_in_amd_ci=lambda: False,
        write_github_step_summary=lambda *a, **k: None,
    )
    return test_utils


class ServerTokenizer:
    """`encode` and `bos_token_id` through the server's /tokenize (the same ids /generate uses)."""

    def __init__(self, base_url):
        self.base_url = base_url
        with_special = self._tokenize("a", True)
        without = self._tokenize("a", False)
        self.bos_token_id = (with_special[0]
                             if len(with_special) == len(without) + 1 else None)

    def _tokenize(self, text, add_special_tokens):
        r = requests.post(self.base_url + "/tokenize",
                          json={"prompt": text, "add_special_tokens": add_special_tokens},
                          timeout=60)
        r.raise_for_status()
        return r.json()["tokens"]

    def encode(self, text):
        return self._tokenize(text, True)


def radixlm_binary():
    return os.environ.get("RADIXLM_BIN") or str(ROOT / "build" / "apps" / "radixlm")


class RadixlmServerCase(unittest.TestCase):
    """One `radixlm serve` per test class, with the class's `server_args`."""

    server_args = ()

    @classmethod
    def setUpClass(cls):
        start_on_free_port(cls._start,
                           lambda port: f"127.0.0.1:{port}: Address already in use")
        models = requests.get(cls.base_url + "/v1/models", timeout=10).json()
        cls.model = models["data"][0]["id"]
        cls.tokenizer = ServerTokenizer(cls.base_url)
        import openai

        cls.client = openai.Client(api_key="EMPTY", base_url=cls.base_url + "/v1")

    @classmethod
    def _start(cls, port):
        """Starts the server on `port` and waits until it is healthy; RuntimeError (with the
        log's text when it exited) if it does not become healthy."""
        cls.base_url = f"http://127.0.0.1:{port}"
        cls.server_log = tempfile.NamedTemporaryFile(prefix="radixlm-sglang-kit-",
                                                     suffix=".log", delete=False)
        model = os.environ.get("RADIXLM_DEFAULT_MODEL") or "default"
        cmd = [radixlm_binary(), "serve", "--host", "127.0.0.1", "--port", str(port),
               "--model-path", model, *cls.server_args]
        cls.process = subprocess.Popen(cmd, stdout=cls.server_log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL)
        deadline = time.time() + STARTUP_TIMEOUT_S
        while True:
            if cls.process.poll() is not None:
                with open(cls.server_log.name, errors="replace") as f:
                    log = f.read()
                raise RuntimeError(f"radixlm serve exited with {cls.process.returncode}; "
                                   f"log: {cls.server_log.name}\n{log[-4000:]}")
            try:
                if requests.get(cls.base_url + "/health", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.time() > deadline:
                cls.tearDownClass()
                raise RuntimeError(f"radixlm serve did not become healthy; "
                                   f"log: {cls.server_log.name}")
            time.sleep(0.2)

    @classmethod
    def tearDownClass(cls):
        if cls.process.poll() is None:
            cls.process.send_signal(signal.SIGTERM)
            try:
                cls.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                cls.process.kill()
                cls.process.wait()

    @classmethod
    def flush_cache(cls):
        requests.post(cls.base_url + "/flush_cache", timeout=60)


def kit_classes():
    """The assembled test classes: {name: class}, in run order."""
    install_import_stubs()
    from sglang.test.kits.abort_timeout_kit import (AbortAllMixin, RunningTimeoutTwoWaveMixin,
                                                    WaitingTimeoutMixin)
    from sglang.test.kits.basic_api_contract_kit import BasicAPIContractMixin
    from sglang.test.kits.basic_decode_correctness_kit import BasicDecodeCorrectnessMixin
    from sglang.test.kits.basic_scheduler_stress_kit import BasicSchedulerStressMixin
    from sglang.test.kits.ebnf_constrained_kit import EBNFConstrainedMixin
    from sglang.test.kits.json_constrained_kit import JSONConstrainedMixin
    from sglang.test.kits.json_mode_kit import JSONModeMixin
    from sglang.test.kits.matched_stop_kit import MatchedStopMixin
    from sglang.test.kits.pause_generation_kit import PauseResumeInPlaceMixin
    from sglang.test.kits.regex_constrained_kit import RegexConstrainedMixin
    from sglang.test.kits.spec_server_kits import SpecLogprobKit
    from sglang.test.kits.streaming_session_kit import (AbortLeakReproKitMixin,
                                                        StreamingSessionKitMixin)

    def case(name, mixin, server_args=(), **attrs):
        return name, type(name, (mixin, RadixlmServerCase),
                          {"server_args": tuple(server_args), **attrs})

    return dict([
        case("TestBasicAPIContract", BasicAPIContractMixin),
        case("TestBasicSchedulerStress", BasicSchedulerStressMixin),
        case("TestBasicDecodeCorrectness", BasicDecodeCorrectnessMixin),
        case("TestMatchedStop", MatchedStopMixin),
        case("TestRegexConstrained", RegexConstrainedMixin),
        case("TestJSONConstrained", JSONConstrainedMixin),
        case("TestJSONMode", JSONModeMixin),
        case("TestEBNFConstrained", EBNFConstrainedMixin),
        case("TestLogprob", SpecLogprobKit),
        case("TestStreamingSession", StreamingSessionKitMixin),
        # SGLang's fixture: --context-length 512 so the abort turns exceed the context.
        case("TestAbortLeakRepro", AbortLeakReproKitMixin, ["--context-length", "512"]),
        case("TestAbortAll", AbortAllMixin),
        # The kits' own length knobs, set for a CPU: their defaults (32 x 512 tokens within the
        # kit's 180 s; one 512-token request within its 60 s) assume a GPU's decode speed.
        case("TestPauseResumeInPlace", PauseResumeInPlaceMixin,
             ["--max-total-tokens", "32768", "--max-running-requests", "64"],
             pause_max_new_tokens=CPU_PAUSE_MAX_NEW_TOKENS),
        # SGLang: SGLANG_REQ_WAITING_TIMEOUT and --max-running-requests 1.
        case("TestWaitingTimeout", WaitingTimeoutMixin,
             ["--max-running-requests", "1", "--waiting-timeout", "1"],
             waiting_timeout_max_new_tokens=CPU_WAITING_TIMEOUT_MAX_NEW_TOKENS),
        # SGLang: SGLANG_REQ_RUNNING_TIMEOUT and room for both waves (16 requests).
        case("TestRunningTimeout", RunningTimeoutTwoWaveMixin,
             ["--running-timeout", "5", "--max-running-requests", "16"]),
    ])
