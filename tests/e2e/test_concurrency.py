"""Many concurrent streams, and clients that vanish mid-stream (their KV must come back)."""

import concurrent.futures
import json
import socket
import time

from conftest import sse_events


def pool_accounting(server):
    info = server.server_info()
    state = info["internal_states"][0]
    return state["pool_free_tokens"], state["tree_tokens"], state["live_requests"], info


def wait_until_idle(server, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        free, tree, live, info = pool_accounting(server)
        if live == 0 and info["num_running_reqs"] == 0 and info["num_waiting_reqs"] == 0:
            return free, tree
        time.sleep(0.2)
    raise AssertionError(f"server still busy after {timeout}s: {info}")


def test_200_concurrent_streams_all_complete(server):
    def one(i):
        body = {"text": f"Stream {i % 10}: tell me about", "stream": True,
                "sampling_params": {"max_new_tokens": 4, "temperature": 0.5}}
        with server.post("/generate", body, stream=True, timeout=300) as r:
            assert r.status_code == 200
            events = sse_events(r)
        assert events[-1]["meta_info"]["finish_reason"]["type"] in ("length", "stop")
        return len(events)

    with concurrent.futures.ThreadPoolExecutor(max_workers=200) as pool:
        counts = list(pool.map(one, range(200)))
    assert len(counts) == 200 and all(c >= 1 for c in counts)


def raw_stream_request(port, body):
    payload = json.dumps(body).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=120)
    sock.sendall(b"POST /generate HTTP/1.1\r\nHost: localhost\r\n"
                 b"Content-Type: application/json\r\nContent-Length: "
                 + str(len(payload)).encode() + b"\r\n\r\n" + payload)
    return sock


def test_disconnects_mid_stream_free_their_kv(server):
    server.post("/flush_cache")
    free0, tree0 = wait_until_idle(server)
    socks = []
    # 400 tokens each: long enough to outlive the test, small enough that the scheduler's decode
    # reserve admits all 50 at once.
    for i in range(50):
        socks.append(raw_stream_request(server.port, {
            "text": f"Client {i} writes a very long story:", "stream": True,
            "sampling_params": {"max_new_tokens": 400, "ignore_eos": True}}))
    # Each stream has started (its first event arrived) before its client goes away.
    for sock in socks:
        received = b""
        while b"data: {" not in received:
            chunk = sock.recv(4096)
            assert chunk, "server closed the stream early"
            received += chunk
    free_busy, tree_busy, live_busy, _ = pool_accounting(server)
    assert live_busy > 0
    for sock in socks:
        sock.close()
    free1, tree1 = wait_until_idle(server, timeout=60)
    # No KV is held by anyone but the tree, and the pool adds up as before.
    assert free1 + tree1 == free0 + tree0
    server.post("/flush_cache")
    free2, tree2 = wait_until_idle(server)
    assert (free2, tree2) == (free0, tree0)


def test_1000_concurrent_streaming_connections(server):
    """1,000 streams open at once (raw asyncio sockets, 2 tokens each) all finish."""
    import asyncio

    async def one(i):
        payload = json.dumps({"text": f"Connection {i % 25} says", "stream": True,
                              "sampling_params": {"max_new_tokens": 2, "temperature": 0}}).encode()
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"POST /generate HTTP/1.1\r\nHost: localhost\r\n"
                     b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                     % len(payload) + payload)
        await writer.drain()
        data = b""
        while b"data: [DONE]" not in data:
            chunk = await asyncio.wait_for(reader.read(65536), timeout=300)
            if not chunk:
                break
            data += chunk
        writer.close()
        return data.startswith(b"HTTP/1.1 200") and b"data: [DONE]" in data

    async def run_all():
        return await asyncio.gather(*[one(i) for i in range(1000)])

    results = asyncio.run(run_all())
    assert sum(results) == 1000
