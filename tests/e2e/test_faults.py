"""Faults a real network brings, against the real server over raw sockets: clients that send
slowly (in time: answered; too slowly: cut off), chunked request bodies (well-formed: served;
malformed: 400), oversized headers and bodies (431 / 413), clients that vanish mid-request,
a client that never reads its stream (bounded buffering, then abort), many idle connections,
and SIGTERM while requests run (drain: in-flight ones finish, new ones get 503, exit 0).

Every fault is followed by a check that the server still answers, and those that touch
generation by a check that the KV pool comes back whole (nothing leaked)."""

import json
import re
import resource
import signal
import socket
import threading
import time

import pytest
import requests

from conftest import SANITIZER, Server, sse_events

KEEP_ALIVE_S = 3
READ_TIMEOUT_S = 6
STREAM_BUFFER = 256 << 10
MAX_BODY = 1 << 20


@pytest.fixture(scope="module")
def srv():
    s = Server(extra_args=["--keep-alive-timeout", str(KEEP_ALIVE_S),
                           "--read-timeout", str(READ_TIMEOUT_S),
                           "--write-timeout", "60",
                           "--max-stream-buffer-bytes", str(STREAM_BUFFER),
                           "--max-request-bytes", str(MAX_BODY)])
    yield s
    assert s.stop() == 0, s.log_tail()


def connect(server, rcvbuf=None):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:  # before connect, so the advertised window stays small
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(60)
    sock.connect(("127.0.0.1", server.port))
    return sock


def request_head(path, length=None, extra=b""):
    head = b"POST " + path.encode() + b" HTTP/1.1\r\nHost: localhost\r\n" \
           b"Content-Type: application/json\r\n" + extra
    if length is not None:
        head += b"Content-Length: %d\r\n" % length
    return head + b"\r\n"


def read_response(sock):
    """Reads one complete response (Content-Length or chunked); returns (status, body bytes)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before a response head: {data!r}"
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    status = int(head.split(b" ")[1])
    length = re.search(rb"(?i)content-length: *(\d+)", head)
    if length:
        while len(rest) < int(length.group(1)):
            rest += sock.recv(65536)
        return status, rest[:int(length.group(1))]
    while not rest.endswith(b"0\r\n\r\n"):
        chunk = sock.recv(65536)
        assert chunk, "connection closed inside a chunked response"
        rest += chunk
    return status, rest


def closed_by_server(sock, timeout):
    """True once the server closes the connection (EOF or reset) within `timeout` seconds."""
    sock.settimeout(timeout)
    try:
        while sock.recv(65536):
            pass
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def quick_generate(server):
    r = server.post("/generate", {"text": "The capital of France is",
                                  "sampling_params": {"max_new_tokens": 2, "temperature": 0}})
    assert r.status_code == 200, r.text
    assert r.json()["meta_info"]["completion_tokens"] >= 1


def pool_state(server):
    info = server.server_info()
    state = info["internal_states"][0]
    busy = state["live_requests"] + info["num_running_reqs"] + info["num_waiting_reqs"]
    return state["pool_free_tokens"], state["tree_tokens"], busy


def wait_idle(server, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        free, tree, busy = pool_state(server)
        if busy == 0:
            return free, tree
        time.sleep(0.1)
    raise AssertionError(f"requests still live after {timeout}s: {server.server_info()}")


def assert_kv_whole(server, baseline):
    """After a flush the pool's free count is what it was at `baseline` (also after a flush)."""
    wait_idle(server)
    assert server.post("/flush_cache").status_code == 200
    assert wait_idle(server) == baseline


@pytest.fixture
def kv_baseline(srv):
    wait_idle(srv)
    assert srv.post("/flush_cache").status_code == 200
    return wait_idle(srv)


# ---- slow clients ----------------------------------------------------------------------------

def test_a_body_dribbled_byte_by_byte_is_answered_and_blocks_no_one(srv):
    body = json.dumps({"text": "Slowly: the capital of France is",
                       "sampling_params": {"max_new_tokens": 3, "temperature": 0}}).encode()
    sock = connect(srv)
    sock.sendall(request_head("/generate", len(body)))
    sock.sendall(body[:10])
    # While this request is half-sent, other clients are served.
    quick_generate(srv)
    for byte in body[10:]:
        sock.sendall(bytes([byte]))
        time.sleep(0.005)
    status, reply = read_response(sock)
    sock.close()
    assert status == 200, reply
    assert json.loads(reply)["meta_info"]["completion_tokens"] >= 1


def test_headers_trickling_in_are_cut_off_and_others_are_served(srv):
    sock = connect(srv)
    head = b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Pad: " + b"a" * 4000 + b"\r\n\r\n"
    sent, cut = 0, False
    deadline = time.time() + 10 * KEEP_ALIVE_S
    while not cut and time.time() < deadline:
        try:
            sock.sendall(head[sent:sent + 1])
            sent += 1
        except (BrokenPipeError, ConnectionResetError):
            cut = True
        if sent == 5:  # other clients are served while this header trickles in
            quick_generate(srv)
        time.sleep(0.05)
        cut = cut or closed_by_server(sock, 0.001)
    sock.close()
    assert cut, f"a header trickling in for {10 * KEEP_ALIVE_S}s was never cut off"
    assert sent < len(head)
    quick_generate(srv)


def test_a_stalled_body_is_cut_off(srv):
    sock = connect(srv)
    sock.sendall(request_head("/generate", 100) + b'{"text": ')
    assert closed_by_server(sock, 10 * READ_TIMEOUT_S)
    sock.close()
    quick_generate(srv)


# ---- chunked request bodies, size limits -----------------------------------------------------

def chunked(parts):
    return b"".join(b"%x\r\n" % len(p) + p + b"\r\n" for p in parts) + b"0\r\n\r\n"


def test_a_chunked_request_body_is_accepted(srv):
    body = json.dumps({"text": "The capital of France is",
                       "sampling_params": {"max_new_tokens": 3, "temperature": 0}}).encode()
    expected = srv.post("/generate", json.loads(body)).json()["text"]
    sock = connect(srv)
    sock.sendall(request_head("/generate", extra=b"Transfer-Encoding: chunked\r\n"))
    for part in [body[:7], body[7:30], body[30:]]:  # chunks sent separately, as a client would
        sock.sendall(chunked([part])[:-5])
        time.sleep(0.05)
    sock.sendall(b"0\r\n\r\n")
    status, reply = read_response(sock)
    sock.close()
    assert status == 200, reply
    assert json.loads(reply)["text"] == expected
    # A generator body makes requests send Transfer-Encoding: chunked too (OpenAI route).
    r = requests.post(srv.url + "/v1/completions", timeout=60,
                      data=iter([b'{"model": "default", ', b'"prompt": "Hi", "max_tokens": 2}']))
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] >= 1


@pytest.mark.parametrize("raw", [
    b"zz\r\n{}\r\n0\r\n\r\n",                # chunk size is not hex
    b"5\r\n{\"text\"\r\n0\r\n\r\n",          # chunk longer than its size
    b"2\r\n{}XX0\r\n\r\n",                   # no CRLF after the chunk data
], ids=["bad-size", "overlong-chunk", "missing-crlf"])
def test_malformed_chunked_encoding_is_400(srv, raw):
    sock = connect(srv)
    sock.sendall(request_head("/generate", extra=b"Transfer-Encoding: chunked\r\n") + raw)
    status, reply = read_response(sock)
    sock.close()
    assert status == 400, reply
    assert "malformed HTTP request" in json.loads(reply)["error"]["message"]
    quick_generate(srv)


def test_a_chunked_body_over_the_limit_is_413(srv):
    parts = iter([b'{"text": "'] + [b"a" * 65536] * ((MAX_BODY >> 16) + 2) + [b'"}'])
    r = requests.post(srv.url + "/generate", data=parts, timeout=60,
                      headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert str(MAX_BODY) in r.json()["error"]["message"]
    quick_generate(srv)


def test_oversized_headers_are_431(srv):
    r = requests.get(srv.url + "/health", timeout=60, headers={"X-Big": "b" * (70 << 10)})
    assert r.status_code == 431
    assert "header" in r.json()["error"]["message"]
    quick_generate(srv)


# ---- clients that go away, clients that never read -------------------------------------------

def wait_live(server, n, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if server.server_info()["internal_states"][0]["live_requests"] >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} live requests after {timeout}s")


LONG = {"max_new_tokens": 3000, "ignore_eos": True}


def test_clients_that_disconnect_mid_request_are_aborted_and_free_their_kv(srv, kv_baseline):
    # A non-streaming native request, and an OpenAI chat stream closed after its first event.
    plain = connect(srv)
    body = json.dumps({"text": "A long tale:", "sampling_params": LONG}).encode()
    plain.sendall(request_head("/generate", len(body)) + body)
    chat = connect(srv)
    body = json.dumps({"model": "default", "stream": True, "max_tokens": 3000,
                       "messages": [{"role": "user", "content": "Tell a long tale."}]}).encode()
    chat.sendall(request_head("/v1/chat/completions", len(body)) + body)
    received = b""
    while b"data: {" not in received:
        received += chat.recv(65536)
    wait_live(srv, 2)
    plain.close()
    chat.close()
    assert_kv_whole(srv, kv_baseline)
    quick_generate(srv)


def rss_bytes(server):
    with open(f"/proc/{server.proc.pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1)) << 10


def test_a_client_that_never_reads_its_stream_is_aborted(srv, kv_baseline):
    # Cumulative native events with 20 top logprobs per token grow by about 1 KB a token, so the
    # socket buffers fill within a few hundred tokens and the server's own queue must stop it.
    rss0 = rss_bytes(srv)
    sock = connect(srv, rcvbuf=4096)
    body = json.dumps({"text": "Count forever:", "stream": True, "return_logprob": True,
                       "top_logprobs_num": 20, "return_text_in_logprobs": True,
                       "sampling_params": LONG}).encode()
    sock.sendall(request_head("/generate", len(body)) + body)
    wait_live(srv, 1)
    # The scheduler and other clients carry on while this one is stuck.
    deadline = time.time() + 300
    while srv.server_info()["internal_states"][0]["live_requests"] > 0:
        assert time.time() < deadline, "the unread stream was never aborted"
        quick_generate(srv)
    assert "a streaming client is not reading" in srv.log_tail(200)
    assert_kv_whole(srv, kv_baseline)
    # What was queued for it is bounded (a few buffers' worth), not the whole stream. (Not under
    # AddressSanitizer, whose quarantine holds up to 256 MB of freed memory.)
    if not SANITIZER:
        assert rss_bytes(srv) - rss0 < 64 << 20
    sock.close()


def test_many_idle_connections_are_held_then_timed_out(srv):
    n = min(600, resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 100)
    socks = [connect(srv) for _ in range(n)]
    # Half of them have made a request and now sit idle on keep-alive.
    for sock in socks[::2]:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        status, _ = read_response(sock)
        assert status == 200
    quick_generate(srv)
    for sock in socks:  # each is closed by the server once the keep-alive timeout passes
        assert closed_by_server(sock, 10 * KEEP_ALIVE_S)
        sock.close()
    quick_generate(srv)


# ---- SIGTERM --------------------------------------------------------------------------------

def test_sigterm_drains_in_flight_requests_refuses_new_ones_and_exits_0():
    s = Server(extra_args=["--graceful-shutdown-timeout", "600"])
    try:
        results = {}

        def stream(name, max_new_tokens):
            body = {"text": f"{name}: a story", "stream": True,
                    "sampling_params": {"max_new_tokens": max_new_tokens, "ignore_eos": True}}
            with requests.post(s.url + "/generate", json=body, stream=True, timeout=300) as r:
                results[name] = sse_events(r)

        def plain():
            body = {"text": "Plain: a story",
                    "sampling_params": {"max_new_tokens": 40, "ignore_eos": True}}
            results["plain"] = requests.post(s.url + "/generate", json=body, timeout=300)

        threads = [threading.Thread(target=stream, args=("short", 40)),
                   threading.Thread(target=plain),
                   threading.Thread(target=stream, args=("long", 20000))]
        for t in threads:
            t.start()
        wait_live(s, 3)
        s.proc.send_signal(signal.SIGTERM)
        deadline = time.time() + 60
        while requests.get(s.url + "/health", timeout=60).status_code != 503:
            assert time.time() < deadline, "/health never turned 503 after SIGTERM"
            time.sleep(0.05)
        refused = requests.post(s.url + "/generate", timeout=60,
                                json={"text": "new", "sampling_params": {"max_new_tokens": 1}})
        assert refused.status_code == 503
        assert "shutting down" in refused.json()["error"]["message"]
        # The two short requests run to their normal end during the drain.
        threads[0].join(timeout=300)
        threads[1].join(timeout=300)
        assert results["short"][-1]["meta_info"]["finish_reason"]["type"] == "length"
        assert results["short"][-1]["meta_info"]["completion_tokens"] == 40
        assert results["plain"].status_code == 200
        assert results["plain"].json()["meta_info"]["finish_reason"]["type"] == "length"
        # The long one is still running; a second signal aborts it and the server exits 0.
        assert threads[2].is_alive() and s.proc.poll() is None
        s.proc.send_signal(signal.SIGTERM)
        assert s.proc.wait(timeout=60) == 0, s.log_tail()
        threads[2].join(timeout=60)
        assert results["long"][-1]["meta_info"]["finish_reason"]["type"] == "abort"
        with pytest.raises(requests.ConnectionError):
            requests.get(s.url + "/health", timeout=10)
    finally:
        s.stop()
