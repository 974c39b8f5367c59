"""SGLang's streaming sessions against the real server: /open_session, session_params on
/generate, /close_session; KV reuse turn by turn, replace / backtrack, abort rollback, limits."""

import json
import threading
import time
import uuid

from conftest import Server, sse_events

G = "/generate"
GREEDY = {"temperature": 0, "max_new_tokens": 8}


def tokens(server, text, bos):
    r = server.post("/tokenize", {"prompt": text, "add_special_tokens": bos})
    assert r.status_code == 200, r.text
    return r.json()["tokens"]


def open_session(server, **body):
    r = server.post("/open_session", {"capacity_of_str_len": 1000, **body})
    assert r.status_code == 200, r.text
    session_id = r.json()
    assert isinstance(session_id, str) and session_id
    return session_id


def close_session(server, session_id):
    r = server.post("/close_session", {"session_id": session_id})
    assert r.status_code == 200, r.text


def test_five_turns_reuse_the_session_kv(server):
    sid = open_session(server, streaming=True)
    tag = uuid.uuid4().hex[:8]  # no other test shares this history
    texts = [f"Session {tag}: let me tell you about France.", " The capital of France is",
             " The population of the city is", " A brief history of that city:",
             " Its most famous museum is"]
    turns = []  # (own ids, prompt_tokens, output ids)
    total = 0
    for i, text in enumerate(texts):
        own = tokens(server, text, bos=(i == 0))
        r = server.post(G, {"input_ids": own, "session_params": {"id": sid},
                            "sampling_params": GREEDY})
        assert r.status_code == 200, r.text
        out = r.json()
        meta = out["meta_info"]
        assert meta["finish_reason"]["type"] in ("length", "stop")
        # The prompt is every earlier turn's prompt and completion, then this turn's ids.
        assert meta["prompt_tokens"] == total + len(own), (i, meta)
        if i == 0:
            assert meta["cached_tokens"] <= 1  # at most the BOS an earlier test left cached
        else:
            # The history's KV came from the tree: all of it but the newest output token,
            # which was sampled, never fed back.
            assert meta["cached_tokens"] == total - 1, (i, meta)
        turns.append((own, meta["prompt_tokens"], out["output_ids"]))
        total = meta["prompt_tokens"] + meta["completion_tokens"]
    # The session's KV is protected from eviction while it is open.
    assert server.server_info()["internal_states"][0]["protected_tokens"] >= total - 1
    close_session(server, sid)
    assert server.post("/close_session", {"session_id": sid}).status_code == 404

    # The same outputs as plain requests whose prompt is the whole history.
    assert server.post("/flush_cache").status_code == 200
    history = []
    for own, prompt_tokens, output_ids in turns:
        history += own
        assert len(history) == prompt_tokens
        r = server.post(G, {"input_ids": history, "sampling_params": GREEDY})
        assert r.json()["output_ids"] == output_ids
        history += output_ids


def test_sglang_replace_and_backtrack(server):
    """SGLang's test_session_control flow: rid + offset -1 + replace, then a backtrack."""
    chunks = ["Let me tell you something about Spain.", " The capital of Spain is",
              " The population of the city is", " A brief history about that city is"]
    ids = [tokens(server, c, bos=(i == 0)) for i, c in enumerate(chunks)]
    params = {"temperature": 0, "no_stop_trim": True, "skip_special_tokens": False}
    sid = open_session(server)
    r = server.post("/open_session", {"capacity_of_str_len": 1000, "session_id": sid})
    assert r.status_code == 400 and "already open" in r.json()["error"]["message"]

    rid, first_rid = None, None
    outputs = []
    total = 0  # the previous turn's prompt + completion
    for i, chunk in enumerate(ids):
        max_new = 12 if i > 0 else 1
        r = server.post(G, {"input_ids": chunk,
                            "session_params": {"id": sid, "rid": rid, "offset": -1,
                                               "replace": True},
                            "sampling_params": {**params, "max_new_tokens": max_new},
                            "return_logprob": True, "logprob_start_len": total - 1})
        assert r.status_code == 200, r.text
        out = r.json()
        meta = out["meta_info"]
        rid = meta["id"]
        first_rid = first_rid or rid
        # offset -1 drops the previous turn's newest token, then this chunk follows.
        assert meta["prompt_tokens"] == max(total - 1, 0) + len(chunk)
        if i > 0:
            outputs.append(out["output_ids"])
            # All of the history came from the tree, but the rows input logprobs need
            # (from logprob_start_len - 1 on), which are recomputed.
            assert meta["cached_tokens"] == total - 2, meta
            assert len(meta["input_token_logprobs"]) == meta["prompt_tokens"] - (total - 1)
        total = meta["prompt_tokens"] + meta["completion_tokens"]
    start = total

    # logprob_start_len past the composed prompt: refused.
    r = server.post(G, {"input_ids": ids[-1],
                        "session_params": {"id": sid, "rid": rid, "offset": -1, "replace": True},
                        "sampling_params": {**params, "max_new_tokens": 4},
                        "return_logprob": True, "logprob_start_len": start + len(ids[-1])})
    assert r.status_code == 400, r.text
    assert "logprob_start_len" in r.json()["error"]["message"]

    # Backtrack to the first turn; the later turns are dropped.
    r = server.post(G, {"input_ids": ids[-1],
                        "session_params": {"id": sid, "rid": first_rid, "offset": -1,
                                           "replace": True},
                        "sampling_params": {**params, "max_new_tokens": 12}})
    assert r.status_code == 200, r.text
    outputs.append(r.json()["output_ids"])
    r = server.post(G, {"input_ids": ids[-1],
                        "session_params": {"id": sid, "rid": rid, "offset": -1, "replace": True},
                        "sampling_params": {**params, "max_new_tokens": 12}})
    assert r.status_code == 400 and "not a turn of session" in r.json()["error"]["message"]

    close_session(server, sid)
    r = server.post(G, {"input_ids": ids[-1],
                        "session_params": {"id": sid, "rid": first_rid, "offset": -1,
                                           "replace": True},
                        "sampling_params": {**params, "max_new_tokens": 12}})
    assert r.status_code == 400 and "is not open" in r.json()["error"]["message"]

    # Without a session: the same prompts built by hand give the same outputs.
    plain = []
    input_ids = []
    first_prompt = None
    for i, chunk in enumerate(ids):
        input_ids += chunk
        out = server.post(G, {"input_ids": input_ids,
                              "sampling_params": {**params,
                                                  "max_new_tokens": 12 if i > 0 else 1}}).json()
        if i > 0:
            plain.append(out["output_ids"])
        input_ids += out["output_ids"][:-1]
        if i == 0:
            first_prompt = list(input_ids)
    out = server.post(G, {"input_ids": first_prompt + ids[-1],
                          "sampling_params": {**params, "max_new_tokens": 12}}).json()
    plain.append(out["output_ids"])
    assert outputs == plain


def test_streaming_turn_and_abort_rollback(server):
    sid = open_session(server, streaming=True)
    tag = uuid.uuid4().hex[:8]
    first = tokens(server, f"Notes {tag}: the river flows", bos=True)
    r = server.post(G, {"input_ids": first, "session_params": {"id": sid},
                        "sampling_params": GREEDY})
    meta = r.json()["meta_info"]
    total = meta["prompt_tokens"] + meta["completion_tokens"]

    # A streamed turn, aborted while it runs: the session rolls back to the first turn.
    own = tokens(server, " and then", bos=False)
    body = {"input_ids": own, "rid": f"long-{tag}", "stream": True,
            "session_params": {"id": sid},
            "sampling_params": {"temperature": 0, "max_new_tokens": 400, "ignore_eos": True}}
    events = []
    with server.post(G, body, stream=True) as resp:
        assert resp.status_code == 200
        for line in resp.iter_lines():
            if not line:
                continue
            payload = line.decode("utf-8")[len("data: "):]
            if payload == "[DONE]":
                break
            events.append(json.loads(payload))
            if len(events) == 1:  # it runs: abort it
                abort = server.post("/abort_request", {"rid": f"long-{tag}"})
                assert abort.json()["success"] is True
    assert events[-1]["meta_info"]["finish_reason"]["type"] == "abort"
    assert events[-1]["meta_info"]["completion_tokens"] < 400

    # A streamed turn that completes continues from the first turn only.
    body = {"input_ids": own, "stream": True, "session_params": {"id": sid},
            "sampling_params": GREEDY}
    with server.post(G, body, stream=True) as resp:
        events = sse_events(resp)
    meta = events[-1]["meta_info"]
    assert meta["prompt_tokens"] == total + len(own)
    # (The aborted turn's KV of the same prompt is in the tree too, unpinned.)
    assert meta["cached_tokens"] >= total - 1
    close_session(server, sid)


def test_streaming_sessions_refuse_offset_replace_and_drop_keeping_their_history(server):
    """SGLang's streaming sessions only continue their last turn: offset, replace and
    drop_previous_output are refused (SGLang's test_preabort_recovery), and the next plain turn
    still continues from the last complete one."""
    sid = open_session(server, streaming=True)
    tag = uuid.uuid4().hex[:8]
    r = server.post(G, {"input_ids": tokens(server, f"Story {tag}: a wizard", bos=True),
                        "session_params": {"id": sid}, "sampling_params": GREEDY})
    assert r.status_code == 200, r.text
    meta = r.json()["meta_info"]
    total = meta["prompt_tokens"] + meta["completion_tokens"]
    own = tokens(server, " This should be refused.", bos=True)
    for extra, field in [({"offset": 1}, "offset"), ({"offset": -1}, "offset"),
                         ({"rid": meta["id"], "replace": True}, "replace"),
                         ({"drop_previous_output": True}, "drop_previous_output")]:
        r = server.post(G, {"input_ids": own, "session_params": {"id": sid, **extra},
                            "sampling_params": GREEDY})
        assert r.status_code == 400, (extra, r.text)
        message = r.json()["error"]["message"]
        assert f"session_params.{field}" in message and "streaming" in message, message
    # offset 0 keeps everything, as in SGLang.
    own = tokens(server, " What happens next?", bos=True)
    r = server.post(G, {"input_ids": own, "session_params": {"id": sid, "offset": 0},
                        "sampling_params": GREEDY})
    assert r.status_code == 200, r.text
    assert r.json()["meta_info"]["prompt_tokens"] == total + len(own) - 1  # BOS dropped
    close_session(server, sid)


def test_session_errors_are_4xx_json():
    s = Server(extra_args=["--max-open-sessions", "2"])
    try:
        a = open_session(s)
        open_session(s, session_id="named")
        r = s.post("/open_session", {"capacity_of_str_len": 10})
        assert r.status_code == 400
        assert "--max-open-sessions" in r.json()["error"]["message"]
        close_session(s, "named")
        open_session(s)

        for body, needle in [
            ({"text": "a", "session_params": {"id": "nope"}}, "is not open"),
            ({"text": "a", "session_params": {"rid": "x"}}, "session_params.id is required"),
            ({"text": "a", "session_params": "s"}, "session_params"),
            ({"text": ["a", "b"], "session_params": {"id": a}}, "single prompt"),
            ({"text": "a", "session_params": {"id": a, "replace": "yes"}}, "replace"),
            ({"text": "a", "session_params": {"id": a},
              "sampling_params": {"n": 2, "temperature": 0.5}}, "n = 1"),
        ]:
            r = s.post(G, body)
            assert r.status_code == 400, (body, r.text)
            assert needle in r.json()["error"]["message"], (body, r.text)
        r = s.post("/close_session", {"session_id": "nope"})
        assert r.status_code == 404 and "not open" in r.json()["error"]["message"]
        assert s.post("/close_session", {}).status_code == 400
        assert s.post("/open_session", {"capacity_of_str_len": -1}).status_code == 400
        # A streamed refusal ends with an abort carrying the reason.
        with s.post(G, {"text": "a", "stream": True, "session_params": {"id": "nope"}},
                    stream=True) as resp:
            events = sse_events(resp)
        finish = events[-1]["meta_info"]["finish_reason"]
        assert finish["type"] == "abort" and finish["status_code"] == 400
        # Concurrent turns of one session that name no earlier turn all run.
        results = []

        def turn(i):
            r = s.post(G, {"text": f"turn {i}", "session_params": {"id": a},
                           "sampling_params": {"max_new_tokens": 2, "temperature": 0}})
            results.append(r.status_code)

        threads = [threading.Thread(target=turn, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == [200] * 4
    finally:
        assert s.stop() == 0


def test_openai_routes_take_session_params(server):
    """SGLang's OpenAI requests carry session_params too: a completion continues the session."""
    sid = open_session(server, streaming=True)
    tag = uuid.uuid4().hex[:8]
    first = server.post("/v1/completions", {"model": "default", "prompt": f"Log {tag}: it rained",
                                            "max_tokens": 5, "temperature": 0,
                                            "session_params": {"id": sid}})
    assert first.status_code == 200, first.text
    usage = first.json()["usage"]
    total = usage["prompt_tokens"] + usage["completion_tokens"]
    own = tokens(server, " and then", bos=False)
    second = server.post("/v1/completions", {"model": "default", "prompt": own, "max_tokens": 5,
                                             "temperature": 0, "session_params": {"id": sid}})
    assert second.status_code == 200, second.text
    assert second.json()["usage"]["prompt_tokens"] == total + len(own)
    for path, body in [("/v1/completions", {"prompt": "x"}),
                       ("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}]})]:
        r = server.post(path, {"model": "default", "max_tokens": 2,
                               "session_params": {"id": "no-such-session"}, **body})
        assert r.status_code == 400 and "is not open" in r.json()["error"]["message"], r.text
    r = server.post("/v1/completions", {"model": "default", "prompt": ["a", "b"], "max_tokens": 2,
                                        "session_params": {"id": sid}})
    assert r.status_code == 400 and "single prompt" in r.json()["error"]["message"]
    close_session(server, sid)


def wait_until_idle(server, timeout=60):
    """Waits until the server holds no live request (an abort or a disconnect has landed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.server_info()["internal_states"][0]["live_requests"] == 0:
            return
        time.sleep(0.05)
    raise AssertionError("requests still live after the client went away")


def start_long_turn(server, sid, own, rid, **session_params):
    """A streamed session turn that runs long: returns (response, its first event)."""
    body = {"input_ids": own, "rid": rid, "stream": True,
            "session_params": {"id": sid, **session_params},
            "sampling_params": {"temperature": 0, "max_new_tokens": 400, "ignore_eos": True}}
    resp = server.post(G, body, stream=True)
    assert resp.status_code == 200, resp.text
    lines = resp.iter_lines()
    for line in lines:
        if line:
            return resp, lines, json.loads(line.decode("utf-8")[len("data: "):])
    raise AssertionError("the stream ended before its first event")


def test_a_streaming_session_runs_one_turn_at_a_time_and_survives_a_disconnect(server):
    """SGLang's rule: a second request on a streaming session while one runs is a 400
    ("Streaming session ... already has an active request."); a client that disconnects
    mid-stream aborts its turn, and the session rolls back to its last complete turn."""
    sid = open_session(server, streaming=True)
    tag = uuid.uuid4().hex[:8]
    first = tokens(server, f"Diary {tag}: the morning was", bos=True)
    r = server.post(G, {"input_ids": first, "session_params": {"id": sid},
                        "sampling_params": GREEDY})
    assert r.status_code == 200, r.text
    meta = r.json()["meta_info"]
    total = meta["prompt_tokens"] + meta["completion_tokens"]
    own = tokens(server, " and later", bos=False)

    resp, _, event = start_long_turn(server, sid, own, f"long-{tag}")
    assert "finish_reason" not in event["meta_info"] or event["meta_info"]["finish_reason"] is None
    for body in [{"input_ids": own, "session_params": {"id": sid}, "sampling_params": GREEDY},
                 {"input_ids": own, "session_params": {"id": sid, "rid": meta["id"]},
                  "sampling_params": GREEDY}]:
        busy = server.post(G, body)
        assert busy.status_code == 400, busy.text
        message = busy.json()["error"]["message"]
        assert f"Streaming session {sid} already has an active request" in message, message
        assert f"long-{tag}" in message
    resp.close()  # the client goes away mid-stream
    wait_until_idle(server)

    # The disconnect aborted the turn; the session continues from its last complete turn.
    r = server.post(G, {"input_ids": own, "session_params": {"id": sid},
                        "sampling_params": GREEDY})
    assert r.status_code == 200, r.text
    meta = r.json()["meta_info"]
    assert meta["prompt_tokens"] == total + len(own)
    assert meta["cached_tokens"] >= total - 1
    close_session(server, sid)


def test_a_non_streaming_session_keeps_an_aborted_turn(server):
    """As SGLang's tree sessions: a turn aborted mid-stream stays in the session, and a later
    turn naming its rid continues from its partial output."""
    sid = open_session(server)
    tag = uuid.uuid4().hex[:8]
    first = tokens(server, f"Recipe {tag}: first, take", bos=True)
    resp, lines, _ = start_long_turn(server, sid, first, f"cut-{tag}")
    abort = server.post("/abort_request", {"rid": f"cut-{tag}"})
    assert abort.json()["success"] is True
    events = []
    for line in lines:
        payload = line.decode("utf-8")[len("data: "):] if line else ""
        if payload == "[DONE]":
            break
        if payload:
            events.append(json.loads(payload))
    resp.close()
    finish = events[-1]["meta_info"]
    assert finish["finish_reason"]["type"] == "abort"
    partial = finish["completion_tokens"]
    assert 0 < partial < 400
    own = tokens(server, " Then add", bos=False)
    r = server.post(G, {"input_ids": own, "session_params": {"id": sid, "rid": f"cut-{tag}"},
                        "sampling_params": GREEDY})
    assert r.status_code == 200, r.text
    assert r.json()["meta_info"]["prompt_tokens"] == len(first) + partial + len(own)
    close_session(server, sid)


def test_session_kv_is_bounded_by_a_small_pool():
    """Many sessions whose pinned history is several times a small pool: every turn completes
    (session pins give way, oldest first, when memory is needed: a full pool is a scheduling
    event), outputs match plain requests, and after the sessions close the pool is back to
    free-or-evictable with nothing protected."""
    s = Server(extra_args=["--max-total-tokens", "1024", "--max-open-sessions", "8"])
    try:
        # ~120 tokens a turn: 6 sessions x 3 turns hold more than twice the pool.
        base = tokens(s, "The history of the printing press begins in the fifteenth century, "
                         "when movable type changed how books were made, sold and read across "
                         "Europe, and then the rest of the world, over the following centuries."
                      * 3, bos=False)
        sids = [open_session(s, streaming=(i % 2 == 0)) for i in range(6)]
        assert s.server_info()["internal_states"][0]["open_sessions"] == 6
        histories = [[] for _ in sids]
        last_rid = [None] * len(sids)
        for turn in range(3):
            for i, sid in enumerate(sids):
                own = tokens(s, f"Session {i}, part {turn}:", bos=(turn == 0)) + base
                params = {"id": sid}
                if i % 2 == 1 and last_rid[i] is not None:
                    params["rid"] = last_rid[i]
                r = s.post(G, {"input_ids": own, "session_params": params,
                               "sampling_params": GREEDY})
                assert r.status_code == 200, r.text
                out = r.json()
                meta = out["meta_info"]
                assert meta["finish_reason"]["type"] in ("length", "stop"), meta
                histories[i] += own  # (a turn after the first has no BOS to drop)
                assert meta["prompt_tokens"] == len(histories[i]), (i, turn, meta)
                histories[i] += out["output_ids"]
                last_rid[i] = meta["id"]
        state = s.server_info()["internal_states"][0]
        assert state["reclaimed_session_pins"] > 0, state
        assert state["aborted_requests"] == 0, state
        # A session whose history was released recomputes it: the same output as a plain
        # request with the whole history as its prompt.
        own = tokens(s, " In short,", bos=False)
        r = s.post(G, {"input_ids": own, "session_params": {"id": sids[0]},
                       "sampling_params": GREEDY})
        assert r.status_code == 200, r.text
        plain = s.post(G, {"input_ids": histories[0] + own, "sampling_params": GREEDY})
        assert plain.json()["output_ids"] == r.json()["output_ids"]

        for sid in sids:
            close_session(s, sid)
        state = s.server_info()["internal_states"][0]
        assert state["open_sessions"] == 0
        assert state["protected_tokens"] == 0, state
        assert state["pool_free_tokens"] + state["evictable_tokens"] == state["pool_size"], state
        assert s.post("/flush_cache").status_code == 200
        state = s.server_info()["internal_states"][0]
        assert state["pool_free_tokens"] == state["pool_size"], state
    finally:
        assert s.stop() == 0


def test_a_session_with_a_timeout_closes_itself(server):
    """SGLang's open_session timeout: the session closes itself that long after its last turn
    started; its KV is released and later turns are refused as for a closed session."""
    assert server.post("/open_session", {"capacity_of_str_len": 10,
                                         "timeout": -1}).status_code == 400
    assert server.post("/open_session", {"capacity_of_str_len": 10,
                                         "timeout": "soon"}).status_code == 400
    def open_count():
        return server.server_info()["internal_states"][0]["open_sessions"]

    before = open_count()
    sid = open_session(server, timeout=0.5)
    r = server.post(G, {"text": "A short turn", "session_params": {"id": sid},
                        "sampling_params": {"max_new_tokens": 2, "temperature": 0}})
    assert r.status_code == 200, r.text
    deadline = time.monotonic() + 60
    while open_count() > before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert open_count() == before, "the session did not time out"
    assert server.post("/close_session", {"session_id": sid}).status_code == 404
    r = server.post(G, {"text": "too late", "session_params": {"id": sid},
                        "sampling_params": {"max_new_tokens": 2}})
    assert r.status_code == 400 and "is not open" in r.json()["error"]["message"]
