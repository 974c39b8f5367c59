"""Prefill/decode disaggregation behind SGLang's gateway in PD mode (docs/disaggregation.md).

One `radixlm serve --disaggregation-mode prefill` and one `--disaggregation-mode decode` on
127.0.0.1, and `smg launch --pd-disaggregation --prefill URL BOOTSTRAP_PORT --decode URL` in
front: the gateway injects bootstrap_host / bootstrap_port / bootstrap_room and sends each
request to both; the prefill server computes the prompt and hands its KV over UCX to the decode
server, which answers. Greedy outputs must equal a single plain server's. A prefill server that
is gone gives the client a clear 5xx error, not a hang. Skipped when smg cannot run here or
this radixlm was built without UCX.
"""

import json
import os
import subprocess
import threading
import time

import pytest
import requests

from conftest import Server, _binary, _model, sse_events
from gateway import Gateway, smg_binary
from processes import free_port, start_on_free_port

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
    # More greedy prompts: the issue asks for >= 20 compared at temperature 0.
    "The three primary colors are",
    "Translate to French: Good morning, how are you?",
    "A recipe for pancakes needs",
    "The largest planet in the solar system is",
    "Once upon a time, in a small village,",
    "SELECT name FROM users WHERE",
    "The opposite of hot is",
    "Water boils at a temperature of",
    "Three reasons to learn a second language:",
    "import numpy as np\nx = np.",
    "The first law of thermodynamics states that",
    "My favourite book is",
    "Q: What is 12 times 12?\nA:",
    "Dear hiring manager,",
]
MAX_NEW = 24

# Requests whose outputs through the pair must equal a single plain server's: n > 1 (seeded and
# greedy; smg sends one room for /generate and /v1/completions, n rooms for a chat request),
# batches (a list of input_ids or of prompts: one room, one transfer per prompt), streaming and
# constrained ones. "{model}" is the served model name, "{ids}" the ids of two prompts.
CASES = {
    "generate_n3_seeded": ("/generate", {"text": PROMPTS[1], "sampling_params": {
        "n": 3, "temperature": 0.8, "sampling_seed": 7, "max_new_tokens": 16}}),
    "generate_n2_greedy": ("/generate", {"text": PROMPTS[6], "sampling_params": {
        "n": 2, "temperature": 0, "max_new_tokens": 16}}),
    "generate_batch_ids": ("/generate", {"input_ids": "{ids}", "sampling_params": {
        "temperature": 0, "max_new_tokens": 16}}),
    "generate_batch_ids_n2_seeded": ("/generate", {"input_ids": "{ids}", "sampling_params": {
        "n": 2, "temperature": 0.9, "sampling_seed": 21, "max_new_tokens": 12}}),
    "generate_stream_n2_seeded": ("/generate", {"text": PROMPTS[3], "stream": True,
                                                "sampling_params": {
        "n": 2, "temperature": 0.8, "sampling_seed": 3, "max_new_tokens": 16}}),
    "generate_json_greedy": ("/generate", {"text": "A person as JSON:", "sampling_params": {
        "json_schema": json.dumps({"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 12}, "age": {"type": "integer"}},
            "required": ["name", "age"]}),
        "temperature": 0, "max_new_tokens": 32}}),
    "generate_stream_greedy": ("/generate", {"text": PROMPTS[9], "stream": True,
                                             "sampling_params": {
        "temperature": 0, "max_new_tokens": 16}}),
    "generate_regex_n2_seeded": ("/generate", {"text": "My phone number is", "sampling_params": {
        "n": 2, "regex": r"\(\d{3}\) \d{3}-\d{4}", "temperature": 0.8, "sampling_seed": 5,
        "max_new_tokens": 24}}),
    "chat_n2_seeded": ("/v1/chat/completions", {
        "model": "{model}", "messages": [{"role": "user", "content": "Name a color."}],
        "n": 2, "temperature": 0.7, "seed": 11, "max_tokens": 16}),
    "completions_batch_n2_seeded": ("/v1/completions", {
        "model": "{model}", "prompt": [PROMPTS[0], PROMPTS[2]], "n": 2, "temperature": 0.7,
        "seed": 13, "max_tokens": 16}),
    "completions_stream_batch": ("/v1/completions", {
        "model": "{model}", "prompt": [PROMPTS[4], PROMPTS[5]], "temperature": 0,
        "max_tokens": 12, "stream": True}),
}


def fill(value, model, ids):
    if value == "{model}":
        return model
    if value == "{ids}":
        return ids
    if isinstance(value, dict):
        return {k: fill(v, model, ids) for k, v in value.items()}
    return value


def run_case(url, route, body):
    """The case's outputs, one text per sample in index order."""
    r = requests.post(url + route, json=body, timeout=300, stream=body.get("stream", False))
    assert r.status_code == 200, (route, r.text)
    if body.get("stream"):
        last = {}
        for event in sse_events(r):
            if route == "/generate":
                last[event.get("index", 0)] = event["text"]  # cumulative
            else:
                for choice in event["choices"]:
                    last[choice["index"]] = last.get(choice["index"], "") + choice["text"]
        return [last[i] for i in sorted(last)]
    out = r.json()
    if route == "/generate":
        items = out if isinstance(out, list) else [out]
        for item in items:
            meta = item["meta_info"]
            assert meta["finish_reason"]["type"] != "abort", meta
        return [item["text"] for item in items]
    choices = sorted(out["choices"], key=lambda c: c["index"])
    if route == "/v1/chat/completions":
        return [c["message"]["content"] for c in choices]
    return [c["text"] for c in choices]


def case_inputs(server):
    model = server.get("/get_model_info").json()["served_model_name"]
    r = server.post("/tokenize", json={"prompt": [PROMPTS[0], PROMPTS[2]]})
    assert r.status_code == 200, r.text
    return model, r.json()["tokens"]


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
        model, ids = case_inputs(s)
        for name, (route, body) in CASES.items():
            outs[name] = run_case(s.url, route, fill(body, model, ids))
        yield outs
    finally:
        s.stop()


def free_kv(server):
    """Free tokens of the KV pools (full-attention, sliding-window) after a cache flush."""
    assert server.post("/flush_cache").status_code == 200
    internal = server.server_info()["internal_states"][0]
    return internal["pool_free_tokens"], internal["swa_pool_free_tokens"]


class PdPair:
    """A prefill and a decode server behind smg; `extra`: flags both servers get."""

    def __init__(self, extra=()):
        self.extra = list(extra)
        # The UCX listener exits the prefill server when the bootstrap port was taken first.
        self.prefill = start_on_free_port(self._start_prefill,
                                          lambda port: f"UCX listening on 127.0.0.1:{port}")
        self.decode = Server(extra_args=[
            *self.extra, "--threads", "1", "--disaggregation-mode", "decode",
            "--disaggregation-transfer-backend", "ucx", "--disaggregation-timeout", "20"])
        self.gateway = Gateway(
            [self.prefill.url, self.decode.url], policy="round_robin",
            routing_args=["--pd-disaggregation",
                          "--prefill", self.prefill.url, str(self.bootstrap_port),
                          "--decode", self.decode.url])

        self.baseline = {"prefill": free_kv(self.prefill), "decode": free_kv(self.decode)}

    def _start_prefill(self, bootstrap_port):
        self.bootstrap_port = bootstrap_port
        return Server(extra_args=[
            *self.extra, "--threads", "1", "--disaggregation-mode", "prefill",
            "--disaggregation-bootstrap-port", str(bootstrap_port),
            "--disaggregation-transfer-backend", "ucx"])

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


def kv_transfer_totals(server):
    """(transfers, bytes, seconds) from the server's radixlm:kv_transfer_* counters."""
    values = {}
    for line in server.get("/metrics").text.splitlines():
        for name in ("kv_transfers_total", "kv_transfer_bytes_total",
                     "kv_transfer_seconds_total"):
            if line.startswith(f"radixlm:{name}{{"):
                values[name] = float(line.rsplit(" ", 1)[1])
    return (values["kv_transfers_total"], values["kv_transfer_bytes_total"],
            values["kv_transfer_seconds_total"])


def test_both_servers_count_the_kv_they_moved(pair):
    before = kv_transfer_totals(pair.decode)
    r = greedy(pair.gateway.url, PROMPTS[6], max_new_tokens=2)
    assert r.status_code == 200, r.text
    prompt_tokens = r.json()["meta_info"]["prompt_tokens"]
    transfers, nbytes, seconds = kv_transfer_totals(pair.decode)
    assert transfers == before[0] + 1
    # At least the full-attention layers' rows of every prompt position.
    assert nbytes - before[1] > prompt_tokens * 1000
    assert seconds > before[2]
    # The prefill server counts a send once it completes (just after the decode server has it).
    deadline = time.time() + 30
    while kv_transfer_totals(pair.prefill)[:2] != (transfers, nbytes):
        assert time.time() < deadline, (kv_transfer_totals(pair.prefill), transfers, nbytes)
        time.sleep(0.2)


@pytest.mark.parametrize("case", list(CASES))
def test_n_samples_batches_streams_and_grammars_equal_a_single_server(pair, reference, case):
    route, body = CASES[case]
    model, ids = case_inputs(pair.decode)
    outputs = run_case(pair.gateway.url, route, fill(body, model, ids))
    assert outputs == reference[case], (case, pair.decode.log_tail())


def test_n_samples_share_one_transfer_and_every_pin_is_released(pair):
    # n = 3 for one prompt: the prefill server computes it once (one request, one token); the
    # decode server imports it once and every sample finds it cached.
    before = pair.prefill.server_info()["internal_states"][0]["finished_requests"]
    r = requests.post(pair.gateway.url + "/generate", timeout=300, json={
        "text": "Count slowly from one to ten:", "sampling_params": {
            "n": 3, "temperature": 0.9, "sampling_seed": 1, "max_new_tokens": 8}})
    assert r.status_code == 200, r.text
    samples = r.json()
    assert len(samples) == 3
    for sample in samples:
        meta = sample["meta_info"]
        assert meta["cached_tokens"] >= meta["prompt_tokens"] - 1, meta
    after = pair.prefill.server_info()["internal_states"][0]["finished_requests"]
    assert after - before == 1
    # Nothing stays pinned, and both servers' KV pools are back at their baseline once the
    # (unpinned, evictable) cached prefixes are flushed.
    # (Pins are released after the step that ends the last sample: poll briefly.)
    deadline = time.time() + 30
    while pair.decode.server_info()["internal_states"][0]["protected_tokens"] != 0:
        assert time.time() < deadline, pair.decode.server_info()["internal_states"][0]
        time.sleep(0.2)
    assert free_kv(pair.prefill) == pair.baseline["prefill"]
    assert free_kv(pair.decode) == pair.baseline["decode"]


def test_a_batch_with_fewer_rooms_than_prompts_is_a_400(pair):
    r = requests.post(pair.decode.url + "/generate", timeout=60, json={
        "input_ids": [[2, 651], [2, 818]], "sampling_params": {"max_new_tokens": 4},
        "bootstrap_host": "127.0.0.1", "bootstrap_port": pair.bootstrap_port,
        "bootstrap_room": [1]})
    assert r.status_code == 400, r.text
    assert "bootstrap_room has 1 entries, fewer than the request's 2 prompts" in r.text


@pytest.mark.parametrize("flags, names", [
    (["--enable-hierarchical-cache", "--hicache-storage-backend", "file",
      "--hicache-storage-dir", "/tmp"], "--enable-hierarchical-cache"),
    (["--speculative-algorithm", "NGRAM"], "--speculative-algorithm NGRAM"),
])
@pytest.mark.parametrize("mode", ["prefill", "decode"])
def test_pd_with_the_disk_tier_or_speculative_decoding_is_refused_at_start_up(mode, flags, names):
    out = subprocess.run([_binary(), "serve", "--model-path", _model(), "--port", str(free_port()),
                          "--disaggregation-mode", mode, *flags],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert f"--disaggregation-mode {mode} with {names} is not built" in out.stderr, out.stderr


@pytest.mark.parametrize("timeout", ["0", "-1", "nan", "1e300"])
def test_a_bad_transfer_timeout_is_refused_at_start_up(timeout):
    out = subprocess.run([_binary(), "serve", "--model-path", _model(), "--port", str(free_port()),
                          "--disaggregation-mode", "decode", "--disaggregation-timeout", timeout],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert "--disaggregation-timeout must be > 0 and at most 1e9 seconds" in out.stderr, out.stderr


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
    assert free_kv(pair.decode) == pair.baseline["decode"]  # nothing held for the lost room
    # And the decode server keeps serving paired requests.
    r = greedy(pair.gateway.url, PROMPTS[0])
    assert r.status_code == 200, r.text


def test_a_client_that_goes_away_mid_stream_frees_its_pages(pair):
    # Straight to the pair (a gateway may or may not pass a disconnect on): the decode
    # request streams, the prefill request computes the same room, and the client reads one
    # event and closes the connection while the decode server is still generating.
    room = 4242
    fields = {"bootstrap_host": "127.0.0.1", "bootstrap_port": pair.bootstrap_port,
              "bootstrap_room": room}
    with requests.post(pair.decode.url + "/generate", stream=True, timeout=120, json={
            "text": PROMPTS[6], "stream": True, **fields, "sampling_params": {
                "max_new_tokens": 3000, "temperature": 0, "ignore_eos": True}}) as r:
        rp = requests.post(pair.prefill.url + "/generate", timeout=120, json={
            "text": PROMPTS[6], **fields, "sampling_params": {"max_new_tokens": 400,
                                                              "temperature": 0}})
        assert rp.status_code == 200, rp.text
        assert r.status_code == 200, r.text
        first = next(line for line in r.iter_lines() if line)
        assert first.startswith(b"data: "), first
    # The decode server notices the closed connection, aborts the request and unpins its
    # prefix: after a flush every page is free again, long before 3,000 tokens could have been
    # generated on one thread.
    deadline = time.time() + 20
    while True:
        flushed = pair.decode.post("/flush_cache").status_code == 200
        internal = pair.decode.server_info()["internal_states"][0]
        free = (internal["pool_free_tokens"], internal["swa_pool_free_tokens"])
        if flushed and free == pair.baseline["decode"]:
            break
        assert time.time() < deadline, (free, pair.baseline["decode"])
        time.sleep(0.5)
    assert greedy(pair.gateway.url, PROMPTS[0]).status_code == 200


def kill_mid_request(server, request):
    """Runs request() in a thread, SIGKILLs server 0.3 s later and waits for the request to
    end (asserting it does not hang): {"response": ...} or {"error": the client's exception,
    e.g. the gateway closing the connection}."""
    outcome = {}

    def send():
        try:
            outcome["response"] = request()
        except requests.RequestException as e:
            outcome["error"] = e

    t = threading.Thread(target=send)
    t.start()
    time.sleep(0.3)
    server.proc.kill()
    server.proc.wait()
    t.join(150)
    assert not t.is_alive(), "the client's request hung after the server died"
    return outcome


def test_a_killed_prefill_server_gives_a_clear_error_not_a_hang():
    p = PdPair()
    try:
        assert greedy(p.gateway.url, PROMPTS[0]).status_code == 200
        # Killed while a request is in flight (the long prompt: the decode server has the
        # bootstrap fields and waits for the KV), then a request after it.
        outcome = kill_mid_request(p.prefill, lambda: greedy(p.gateway.url, PROMPTS[6],
                                                             timeout=120))
        assert "response" in outcome, outcome
        assert outcome["response"].status_code >= 500, outcome["response"].text
        start = time.time()
        r = greedy(p.gateway.url, PROMPTS[1], timeout=120)
        assert r.status_code >= 500, r.text
        assert time.time() - start < 60
        # The decode server itself stays healthy and holds no page for the failed requests.
        assert requests.get(p.decode.url + "/health", timeout=10).status_code == 200
        assert free_kv(p.decode) == p.baseline["decode"]
    finally:
        p.stop()


def test_a_decode_server_killed_mid_request_leaves_the_prefill_server_serving():
    p = PdPair()
    try:
        assert greedy(p.gateway.url, PROMPTS[0]).status_code == 200
        # The long prompt, with many tokens to decode: the decode server dies while the request
        # is in flight (its KV on the way or being decoded from).
        outcome = kill_mid_request(p.decode, lambda: greedy(p.gateway.url, PROMPTS[6],
                                                            max_new_tokens=200, timeout=120))
        if "response" in outcome:
            assert outcome["response"].status_code >= 500, outcome["response"].text
        # The prefill server keeps serving: healthy, every page back after a flush (the
        # prompts it computed are ordinary cached prefixes), and it still answers a request
        # that names a room (its record then waits for a decode server that never asks).
        assert requests.get(p.prefill.url + "/health", timeout=10).status_code == 200
        assert free_kv(p.prefill) == p.baseline["prefill"]
        r = requests.post(p.prefill.url + "/generate", timeout=120, json={
            "text": PROMPTS[2], "sampling_params": {"max_new_tokens": 4, "temperature": 0},
            "bootstrap_host": "127.0.0.1", "bootstrap_port": p.bootstrap_port,
            "bootstrap_room": 777})
        assert r.status_code == 200, r.text
        assert free_kv(p.prefill) == p.baseline["prefill"]
    finally:
        p.stop()
