"""POST /pause_generation (abort / retract / in_place) and /continue_generation with 32
concurrent clients: while paused no token arrives and new requests queue; after continue the
greedy outputs equal those of a run that was never paused."""

import concurrent.futures
import json
import threading
import time

import pytest
import requests

from conftest import Server

N = 32
MAX_NEW = 48


@pytest.fixture(scope="module")
def srv():
    s = Server(extra_args=["--max-total-tokens", "32768", "--max-running-requests", "64"])
    yield s
    assert s.stop() == 0, s.log_tail()


def body(i, stream):
    return {"text": f"Request {i}: here is a list of facts about the number {i * 7 + 3}:",
            "stream": stream,
            "sampling_params": {"max_new_tokens": MAX_NEW, "temperature": 0, "ignore_eos": True}}


def reference(srv):
    """Greedy outputs of the N requests, run concurrently and never paused."""
    def one(i):
        r = srv.post("/generate", body(i, False), timeout=300)
        assert r.status_code == 200, r.text
        return r.json()["text"]

    with concurrent.futures.ThreadPoolExecutor(max_workers=N) as pool:
        return list(pool.map(one, range(N)))


class Client(threading.Thread):
    """One /generate request; a streaming one records its progress event by event."""

    def __init__(self, srv, i, stream):
        super().__init__(daemon=True)
        self.srv, self.i, self.stream = srv, i, stream
        self.tokens = 0  # completion tokens seen so far (streaming)
        self.final = None  # the last event, or the whole response
        self.status = None
        self.done = False

    def run(self):
        try:
            if self.stream:
                with self.srv.post("/generate", body(self.i, True), stream=True, timeout=300) as r:
                    self.status = r.status_code
                    for line in r.iter_lines():
                        if not line:
                            continue
                        payload = line.decode()[len("data: "):]
                        if payload == "[DONE]":
                            break
                        event = json.loads(payload)
                        self.tokens = event["meta_info"]["completion_tokens"]
                        self.final = event
            else:
                r = self.srv.post("/generate", body(self.i, False), timeout=300)
                self.status = r.status_code
                self.final = r.json()
        finally:
            self.done = True


def start_clients(srv, stream_of):
    clients = [Client(srv, i, stream_of(i)) for i in range(N)]
    for c in clients:
        c.start()
    return clients


def wait_for(predicate, timeout=120, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def internal(srv):
    return srv.server_info()["internal_states"][0]


def pause(srv, mode):
    r = srv.post("/pause_generation", {"mode": mode})
    assert r.status_code == 200, r.text
    assert r.json() == {"message": "Generation paused successfully.", "status": "ok"}


def resume(srv):
    r = srv.post("/continue_generation", {})
    assert r.status_code == 200, r.text
    assert r.json() == {"message": "Generation continued successfully.", "status": "ok"}


def assert_frozen(srv, clients, seconds=2.0):
    """No stream advances and no request finishes while paused; /health answers."""
    time.sleep(0.5)  # events sent just before the pause landed may still be in flight
    progress = [c.tokens for c in clients]
    finished = [c.done for c in clients]
    assert srv.get("/health").status_code == 200
    time.sleep(seconds)
    assert [c.tokens for c in clients] == progress
    assert [c.done for c in clients] == finished
    return progress


def test_in_place_pause_freezes_32_streams_and_continue_matches_an_unpaused_run(srv):
    expected = reference(srv)
    clients = start_clients(srv, lambda i: True)
    try:
        wait_for(lambda: all(c.tokens >= 2 for c in clients), what="every stream to start")
        pause(srv, "in_place")
        state = internal(srv)
        assert state["paused"] is True
        progress = assert_frozen(srv, clients)
        assert any(p < MAX_NEW for p in progress), "every request finished before the pause"
        state = internal(srv)
        assert state["num_running_reqs"] > 0  # still running: KV kept
        assert state["retractions"] == 0
        assert srv.post("/flush_cache").status_code == 400  # running requests hold KV
        # A request sent while paused is accepted and queues.
        late = Client(srv, 0, False)
        late.start()
        wait_for(lambda: internal(srv)["num_waiting_reqs"] == 1, what="the late request to queue")
        assert not late.done
    finally:
        resume(srv)
    for c in clients + [late]:
        c.join(300)
    assert internal(srv)["paused"] is False
    for c in clients:
        assert c.status == 200
        assert c.final["meta_info"]["finish_reason"] == {"type": "length", "length": MAX_NEW}
        assert c.final["text"] == expected[c.i], c.i
    assert late.final["text"] == expected[0]


def test_retract_pause_releases_running_requests_flushes_and_continue_matches(srv):
    expected = reference(srv)
    retractions = internal(srv)["retractions"]
    clients = start_clients(srv, lambda i: i % 2 == 0)  # half streaming, half not
    streams = [c for c in clients if c.stream]
    try:
        wait_for(lambda: all(c.tokens >= 2 for c in streams), what="every stream to start")
        pause(srv, "retract")
        state = internal(srv)
        unfinished = sum(not c.done for c in clients)
        assert state["num_running_reqs"] == 0
        assert state["num_waiting_reqs"] > 0
        assert state["retractions"] > retractions
        assert state["protected_tokens"] == 0  # no request holds KV; it is all in the tree
        assert_frozen(srv, clients)
        assert unfinished > 0
        # As SGLang: the cache may be flushed now; the requests recompute their KV later.
        r = srv.post("/flush_cache")
        assert r.status_code == 200, r.text
        assert internal(srv)["tree_tokens"] == 0
    finally:
        resume(srv)
    for c in clients:
        c.join(300)
        assert c.status == 200
        assert c.final["meta_info"]["finish_reason"] == {"type": "length", "length": MAX_NEW}
        assert c.final["text"] == expected[c.i], c.i


def test_abort_pause_ends_every_request_and_new_ones_wait_for_continue(srv):
    expected = reference(srv)
    clients = start_clients(srv, lambda i: i % 2 == 1)
    streams = [c for c in clients if c.stream]
    wait_for(lambda: all(c.tokens >= 1 for c in streams), what="every stream to start")
    try:
        r = srv.post("/pause_generation", None)  # no body: SGLang's default mode, abort
        assert r.status_code == 200 and r.json()["status"] == "ok"
        for c in clients:
            c.join(60)
            assert c.done and c.status == 200
        aborted = [c for c in clients
                   if c.final["meta_info"]["finish_reason"]["type"] == "abort"]
        assert len(aborted) >= N - 2  # a request may finish just before the pause lands
        assert {c.stream for c in aborted} == {True, False}
        state = internal(srv)
        assert state["paused"] is True and state["live_requests"] == 0
        late = Client(srv, 5, True)
        late.start()
        wait_for(lambda: internal(srv)["num_waiting_reqs"] == 1, what="the late request to queue")
        time.sleep(1.0)
        assert late.tokens == 0 and not late.done
        assert srv.get("/health").status_code == 200
    finally:
        resume(srv)
    late.join(300)
    assert late.final["text"] == expected[5]


def test_continue_without_pause_and_repeated_pauses_are_harmless(srv):
    resume(srv)
    pause(srv, "in_place")
    pause(srv, "retract")
    resume(srv)
    r = srv.post("/generate", body(1, False))
    assert r.status_code == 200
    assert r.json()["meta_info"]["finish_reason"]["type"] == "length"


@pytest.mark.parametrize("payload,needle", [
    ({"mode": "inplace"}, "Invalid mode: 'inplace'"),
    ({"mode": 3}, "'mode' must be a string"),
    ([1, 2], "JSON object"),
])
def test_bad_pause_requests_are_400_with_a_json_error(srv, payload, needle):
    r = srv.post("/pause_generation", payload)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert needle in error["message"]
    assert error["param"] == "mode"
    assert internal(srv)["paused"] is False  # nothing was paused


def test_malformed_pause_body_and_wrong_method(srv):
    r = requests.post(srv.url + "/pause_generation", data="{mode", timeout=60,
                      headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "error" in r.json()
    assert srv.get("/pause_generation").status_code == 405
