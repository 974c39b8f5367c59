"""Prefill/decode disaggregation behind SGLang's gateway in PD mode (docs/disaggregation.md).

One `radixlm serve --disaggregation-mode prefill` and one `--disaggregation-mode decode` on
127.0.0.1, and `smg launch --pd-disaggregation --prefill URL BOOTSTRAP_PORT --decode URL` in
front: the gateway injects bootstrap_host / bootstrap_port / bootstrap_room and sends each
request to both; the prefill server computes the prompt and hands its KV over UCX to the decode
server, which answers. Greedy outputs must equal a single plain server's. A prefill server that
is gone gives the client a clear 5xx error, not a hang. Skipped when smg cannot run here or
this radixlm was built without UCX.
"""

import os
import subprocess
import time

import pytest
import requests

from conftest import Server, _binary, _model
from gateway import Gateway, free_port, smg_binary

SMG, SMG_MISSING = smg_binary()


def _ucx_built():
    out = subprocess.run([_binary(), "serve", "--model-path", _model(), "--port", "1",
                          "--disaggregation-mode", "decode", "--disaggregation-timeout", "0"],
                         capture_output=True, text=True, timeout=120)
    # Timeout 0 is refused after the transfer backend is checked: UCX's absence shows first.
    return "built without UCX" not in out.stderr


pytestmark = [pytest.mark.skipif(SMG is None, reason=SMG_MISSING or ""),
              pytest.mark.skipif(not _ucx_built(), reason="radixlm was built without UCX")]

os.environ.setdefault("UCX_TLS", "tcp,shm,self")  # no RDMA hardware needed; inherited below

PROMPTS = [
    "The capital of France is",
    "Write a haiku about the sea:",
    "List three prime numbers greater than 100:",
    "In 1969, the first humans to walk on the Moon were",
    "def fibonacci(n):\n    ",
    "Explain in one sentence why the sky is blue.",
    # Longer than Gemma-3's sliding window (512): the record carries the windowed layers' KV
    # for the last positions only, and the decode server's tree holds the rest as tombstones.
    "Summarize the following notes in one line.\n" + "".join(
        f"Note {i}: the shipment of part {i * 7} left warehouse {i % 5} on day {i}.\n"
        for i in range(60)),
]
MAX_NEW = 24


def greedy(url, text, max_new_tokens=MAX_NEW, timeout=300):
    return requests.post(url + "/generate", timeout=timeout, json={
        "text": text, "sampling_params": {"max_new_tokens": max_new_tokens, "temperature": 0}})


@pytest.fixture(scope="module")
def reference():
    s = Server(extra_args=["--threads", "1"])
    try:
        outs = {}
        for p in PROMPTS:
            r = greedy(s.url, p)
            assert r.status_code == 200, r.text
            outs[p] = r.json()
        yield outs
    finally:
        s.stop()


class PdPair:
    def __init__(self):
        self.bootstrap_port = free_port()
        self.prefill = Server(extra_args=[
            "--threads", "1", "--disaggregation-mode", "prefill",
            "--disaggregation-bootstrap-port", str(self.bootstrap_port),
            "--disaggregation-transfer-backend", "ucx"])
        self.decode = Server(extra_args=[
            "--threads", "1", "--disaggregation-mode", "decode",
            "--disaggregation-transfer-backend", "ucx", "--disaggregation-timeout", "20"])
        self.gateway = Gateway(
            [self.prefill.url, self.decode.url], policy="round_robin",
            routing_args=["--pd-disaggregation",
                          "--prefill", self.prefill.url, str(self.bootstrap_port),
                          "--decode", self.decode.url])

    def stop(self):
        self.gateway.stop()
        self.prefill.stop()
        self.decode.stop()


@pytest.fixture(scope="module")
def pair():
    p = PdPair()
    yield p
    p.stop()


def test_servers_report_their_disaggregation_mode(pair):
    assert pair.prefill.get("/get_server_info").json()["disaggregation_mode"] == "prefill"
    assert pair.decode.get("/get_model_info").json()["disaggregation_mode"] == "decode"


def test_greedy_outputs_through_the_gateway_equal_a_single_server(pair, reference):
    for p in PROMPTS:
        r = greedy(pair.gateway.url, p)
        assert r.status_code == 200, (p, r.text, pair.decode.log_tail())
        body = r.json()
        assert body["text"] == reference[p]["text"], p
        assert body["meta_info"]["completion_tokens"] == \
            reference[p]["meta_info"]["completion_tokens"]
        # The decode server found the transferred prompt in its tree: it computed at most the
        # last prompt position (to sample the first token) of the prompt itself.
        meta = body["meta_info"]
        assert meta["cached_tokens"] >= meta["prompt_tokens"] - 1, meta


def test_the_prefill_server_computed_the_prompts(pair):
    internal = pair.prefill.server_info()["internal_states"][0]
    assert internal["finished_requests"] >= len(PROMPTS)
    assert internal["prefill_tokens"] > 0


def test_a_request_without_a_bootstrap_room_is_refused_by_a_pd_server(pair):
    r = greedy(pair.decode.url, "Hello")
    assert r.status_code == 400, r.text
    assert "bootstrap_room" in r.text


def test_a_decode_request_whose_room_never_arrives_times_out_cleanly(pair):
    # Straight to the decode server, naming a room the prefill server never computes.
    start = time.time()
    r = requests.post(pair.decode.url + "/generate", timeout=120, json={
        "text": "Hello there", "sampling_params": {"max_new_tokens": 4, "temperature": 0},
        "bootstrap_host": "127.0.0.1", "bootstrap_port": pair.bootstrap_port,
        "bootstrap_room": 12345})
    assert r.status_code == 503, r.text
    assert "timed out" in r.text and "12345" in r.text, r.text
    assert time.time() - start < 60
    # And the decode server keeps serving paired requests.
    r = greedy(pair.gateway.url, PROMPTS[0])
    assert r.status_code == 200, r.text


def test_a_killed_prefill_server_gives_a_clear_error_not_a_hang():
    p = PdPair()
    try:
        assert greedy(p.gateway.url, PROMPTS[0]).status_code == 200
        p.prefill.proc.kill()
        p.prefill.proc.wait()
        start = time.time()
        r = greedy(p.gateway.url, PROMPTS[1], timeout=120)
        assert r.status_code >= 500, r.text
        assert time.time() - start < 60
        # The decode server itself stays healthy.
        assert requests.get(p.decode.url + "/health", timeout=10).status_code == 200
    finally:
        p.stop()
