"""The web page and the radix-tree routes it reads: GET / and its assets, GET /radix_tree
(snapshot shape, hit counts, max_nodes), GET /radix_tree/events (SSE), the API key and
--disable-web-ui. The page itself is driven in a browser by test_web_browser.py."""

import json
import socket
import threading
import time

import pytest
import requests

from conftest import Server


def tree(server, **params):
    r = server.get("/radix_tree", params=params)
    assert r.status_code == 200, r.text
    return r.json()


def generate(server, text, max_new_tokens=4):
    r = server.post("/generate", json={"text": text, "sampling_params": {
        "temperature": 0, "max_new_tokens": max_new_tokens}})
    assert r.status_code == 200, r.text
    return r.json()


class EventCollector:
    """Reads (name, data) SSE events of a streamed response on a thread, as they arrive."""

    def __init__(self, response):
        self.response = response
        self.events = []
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        name = "message"
        try:
            for line in self.response.iter_lines(decode_unicode=True):
                if line.startswith("event:"):
                    name = line[len("event:"):].strip()
                elif line.startswith("data:"):
                    with self.cond:
                        self.events.append((name, json.loads(line[len("data:"):].strip())))
                        self.cond.notify_all()
                    name = "message"
        except (requests.RequestException, AttributeError, ValueError):
            pass  # closed by the test

    def wait_for(self, count, timeout_s):
        """The events once there are at least `count` (or all there are at the timeout)."""
        deadline = time.time() + timeout_s
        with self.cond:
            while len(self.events) < count and time.time() < deadline:
                self.cond.wait(timeout=max(0.0, deadline - time.time()))
            return list(self.events)

    def close(self):
        # Shut the socket down first: close() alone waits for the reader thread's pending read,
        # which returns only with the server's next keep-alive comment (15 s).
        sock = getattr(getattr(self.response.raw, "connection", None), "sock", None)
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
        self.response.close()


def test_page_and_assets_are_served(server):
    r = requests.get(server.url + "/", timeout=30)
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/html")
    assert "<title>radixlm</title>" in r.text
    for asset, kind in [("/app.js", "text/javascript"), ("/tree.js", "text/javascript"),
                        ("/style.css", "text/css")]:
        a = requests.get(server.url + asset, timeout=30)
        assert a.status_code == 200, asset
        assert a.headers["Content-Type"].startswith(kind)
        assert asset in r.text  # the page links it
    # Nothing is loaded from elsewhere.
    assert "http://" not in r.text and "https://" not in r.text


def test_snapshot_shape(server):
    generate(server, "The radix tree keeps every prefix once.")
    snap = tree(server, max_nodes=20000)
    for key in ["version", "clock", "num_nodes", "total_tokens", "evictable_tokens",
                "protected_tokens", "pool", "cache_hit_tokens", "prefill_tokens",
                "cache_hit_rate", "evictions_total", "evicted_tokens_total", "truncated",
                "nodes", "evictions", "max_nodes"]:
        assert key in snap, key
    assert snap["max_nodes"] == 20000
    assert tree(server)["max_nodes"] == 500  # the default
    assert snap["pool"]["size"] > 0
    assert snap["pool"]["used"] == snap["pool"]["size"] - snap["pool"]["free"]
    nodes = snap["nodes"]
    assert nodes[0]["parent"] == -1 and nodes[0]["prefix_tokens"] == 0
    assert snap["num_nodes"] >= 1 and len(nodes) >= 2
    assert nodes[0]["subtree"]["tokens"] == snap["total_tokens"]
    for i, n in enumerate(nodes[1:], start=1):
        assert 0 <= n["parent"] < i
        for key in ["id", "kind", "tokens", "lock_ref", "hit_count", "last_access", "children",
                    "collapsed", "subtree", "text"]:
            assert key in n, key
    # The snippets are text of the prompt (the first node holds its start, BOS and all).
    assert any("radix" in n["text"] for n in nodes)


def test_max_nodes_limits_and_validates(server):
    for i in range(3):
        generate(server, f"Distinct prompt number {i} about apples", max_new_tokens=2)
    snap = tree(server, max_nodes=2)
    assert len(snap["nodes"]) <= 2
    assert snap["truncated"] is True
    assert snap["nodes"][0]["subtree"]["tokens"] == snap["total_tokens"]
    for bad in ["0", "-1", "abc", "100000"]:
        r = server.get("/radix_tree", params={"max_nodes": bad})
        assert r.status_code == 400
        assert "max_nodes" in r.json()["error"]["message"]


def test_shared_prefix_increases_hit_counts(server):
    prefix = "Once upon a time in a land of radix trees, a scheduler shared every prefix. "
    generate(server, prefix + "First", max_new_tokens=2)
    before = tree(server, max_nodes=20000)
    hits_before = before["nodes"][0]["subtree"]["hits"]
    generate(server, prefix + "Second", max_new_tokens=2)
    after = tree(server, max_nodes=20000)
    assert after["nodes"][0]["subtree"]["hits"] > hits_before
    assert after["cache_hit_tokens"] > before["cache_hit_tokens"]
    assert after["version"] != before["version"]
    # The node holding the shared prefix was walked by the second request.
    by_id = {n["id"]: n for n in before["nodes"] if n["kind"] == "node"}
    assert any(n["kind"] == "node" and n["id"] in by_id and
               n["hit_count"] > by_id[n["id"]]["hit_count"] for n in after["nodes"])


def test_events_stream_sends_a_snapshot_then_changes(server):
    r = server.get("/radix_tree/events", params={"max_nodes": 20000}, stream=True,
                   timeout=60)
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/event-stream")
    events = EventCollector(r)
    try:
        first = events.wait_for(1, 30)
        assert first and first[0][0] == "tree"
        assert "nodes" in first[0][1]
        version = first[0][1]["version"]
        generate(server, "A brand new prompt for the event stream to notice.", 2)
        seen = events.wait_for(2, 30)
    finally:
        events.close()
    trees = [data for name, data in seen[1:] if name == "tree"]
    assert trees, f"no tree event after the tree changed: {[n for n, _ in seen]}"
    assert trees[-1]["version"] != version
    assert any("event stream" in n["text"] for n in trees[-1]["nodes"])


def test_events_are_coalesced(server):
    """A burst of requests gives a few events (at most one per 200 ms interval), not one per
    token or per request."""
    r = server.get("/radix_tree/events", stream=True, timeout=60)
    events = EventCollector(r)
    try:
        assert events.wait_for(1, 30)  # the initial snapshot
        start = time.time()
        threads = [threading.Thread(target=generate, args=(server, f"Burst {i} of requests", 8))
                   for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        time.sleep(0.5)  # the last interval's event
        elapsed = time.time() - start
        seen = events.wait_for(10**6, 0)
    finally:
        events.close()
    burst = seen[1:]
    assert burst, "no event during the burst"
    # 4 requests × (prefill + 8 decode steps) change the tree dozens of times; the stream
    # carries at most one event per 200 ms interval (plus one of slack at each end).
    assert len(burst) <= elapsed / 0.2 + 2, (len(burst), elapsed)


@pytest.fixture(scope="module")
def keyed_server():
    s = Server(extra_args=["--disable-web-ui"], api_key="sekrit")
    yield s
    assert s.stop() == 0, s.log_tail()


def test_api_key_guards_the_tree_routes(keyed_server):
    url = keyed_server.url
    assert requests.get(url + "/radix_tree", timeout=30).status_code == 401
    assert requests.get(url + "/radix_tree", timeout=30,
                        headers={"Authorization": "Bearer wrong"}).status_code == 401
    r = requests.get(url + "/radix_tree/events", timeout=30, stream=True)
    assert r.status_code == 401
    r.close()
    assert keyed_server.get("/radix_tree").status_code == 200
    r = keyed_server.get("/radix_tree/events", stream=True, timeout=60)
    assert r.status_code == 200
    events = EventCollector(r)
    try:
        assert events.wait_for(1, 30)[0][0] == "tree"
    finally:
        events.close()


def test_disable_web_ui_answers_404_json(keyed_server):
    for path in ["/", "/app.js", "/index.html"]:
        r = requests.get(keyed_server.url + path, timeout=30)
        assert r.status_code == 404, path
        assert "error" in r.json()
