"""SGLang's native API against the real server: /generate shapes, streaming, logprobs, ops."""

import requests

from conftest import sse_events

GREEDY = {"temperature": 0, "max_new_tokens": 6}


def test_generate_single(server):
    r = server.post("/generate", {"text": "The capital of France is", "sampling_params": GREEDY})
    assert r.status_code == 200, r.text
    out = r.json()
    assert isinstance(out["text"], str) and out["text"]
    assert len(out["output_ids"]) == out["meta_info"]["completion_tokens"] <= 6
    meta = out["meta_info"]
    for key in ("id", "finish_reason", "prompt_tokens", "completion_tokens", "cached_tokens",
                "e2e_latency"):
        assert key in meta
    assert meta["finish_reason"]["type"] in ("length", "stop")
    assert meta["prompt_tokens"] >= 5


def test_generate_is_deterministic_when_greedy(server):
    body = {"text": "Count: one, two,", "sampling_params": GREEDY}
    a = server.post("/generate", body).json()
    b = server.post("/generate", body).json()
    assert a["output_ids"] == b["output_ids"]
    assert b["meta_info"]["cached_tokens"] > 0  # the prompt came from the radix cache


def test_nulls_and_sglang_defaults_are_accepted(server):
    r = server.post("/generate", {
        "text": "Hello", "rid": None, "stream": False,
        "sampling_params": {"max_new_tokens": 2, "top_k": -1, "stop": [], "stop_token_ids": [],
                            "regex": None, "json_schema": None, "temperature": None,
                            "top_p": None, "min_p": None, "n": None},
    })
    assert r.status_code == 200, r.text


def test_batch_and_n_are_prompt_major(server):
    r = server.post("/generate", {"text": ["Apples are", "The sky is"],
                                  "sampling_params": {"max_new_tokens": 3, "n": 2}})
    assert r.status_code == 200, r.text
    out = r.json()
    assert isinstance(out, list) and len(out) == 4
    prompt_tokens = [o["meta_info"]["prompt_tokens"] for o in out]
    assert prompt_tokens[0] == prompt_tokens[1] and prompt_tokens[2] == prompt_tokens[3]


def test_input_ids_batch(server):
    r = server.post("/generate", {"input_ids": [[2, 9259], [2, 9259, 1010]],
                                  "sampling_params": {"max_new_tokens": 1}})
    assert r.status_code == 200, r.text
    assert [o["meta_info"]["prompt_tokens"] for o in r.json()] == [2, 3]


def test_stream_is_cumulative_and_ends_with_done(server):
    body = {"text": "Once upon a time", "sampling_params": GREEDY, "stream": True}
    with server.post("/generate", body, stream=True) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        events = sse_events(r)
    assert events
    texts = [e["text"] for e in events]
    for earlier, later in zip(texts, texts[1:]):
        assert later.startswith(earlier)
    assert events[-1]["meta_info"]["finish_reason"] is not None
    full = server.post("/generate", {"text": "Once upon a time", "sampling_params": GREEDY})
    assert full.json()["text"] == texts[-1]


def test_batch_stream_carries_index(server):
    body = {"text": ["A", "B"], "sampling_params": {"max_new_tokens": 3}, "stream": True}
    with server.post("/generate", body, stream=True) as r:
        events = sse_events(r)
    assert {e["index"] for e in events} == {0, 1}


def test_logprobs_shapes(server):
    r = server.post("/generate", {
        "text": "The quick brown fox", "sampling_params": {"max_new_tokens": 3, "temperature": 0},
        "return_logprob": True, "logprob_start_len": 0, "top_logprobs_num": 2,
        "return_text_in_logprobs": True,
    })
    assert r.status_code == 200, r.text
    meta = r.json()["meta_info"]
    inputs = meta["input_token_logprobs"]
    outputs = meta["output_token_logprobs"]
    assert len(inputs) == meta["prompt_tokens"]
    assert inputs[0][0] is None  # nothing predicts the first token
    assert len(outputs) == meta["completion_tokens"] == 3
    for logprob, token_id, text in outputs:
        assert logprob <= 0 and isinstance(token_id, int) and isinstance(text, str)
    assert all(len(top) == 2 for top in meta["output_top_logprobs"])
    # Greedy: the chosen token is the best alternative.
    assert meta["output_top_logprobs"][0][0][1] == outputs[0][1]


def test_max_new_tokens_zero_scores_the_prompt(server):
    r = server.post("/generate", {"text": ["Paris is in France", "Paris is in Spain"],
                                  "sampling_params": {"max_new_tokens": 0},
                                  "return_logprob": True, "logprob_start_len": 2,
                                  "return_text_in_logprobs": True})
    assert r.status_code == 200, r.text
    for out in r.json():
        assert out["output_ids"] == []
        lps = out["meta_info"]["input_token_logprobs"]
        assert len(lps) == out["meta_info"]["prompt_tokens"] - 2
        assert all(lp[0] is not None and lp[2] is not None for lp in lps)


def test_ops_routes(server):
    assert server.get("/health").status_code == 200
    assert server.get("/health_generate").status_code == 200
    for path in ("/model_info", "/get_model_info"):
        info = server.get(path).json()
        assert info["is_generation"] is True
        assert info["model_path"].endswith(".gguf")
        assert info["architectures"] == ["Gemma3ForCausalLM"]
        # radixlm's additions: what a remote client needs to render chats like the server.
        assert info["arch"] == "gemma3" and isinstance(info["chat_template"], str)
    for path in ("/server_info", "/get_server_info"):
        info = server.get(path).json()
        assert info["pool_size"] > 0 and "tree_tokens" in info
        internal = info["internal_states"][0]
        for key in ("pool_size", "pool_free_tokens", "tree_tokens"):
            assert info[key] == internal[key], key  # the flattened copy agrees
        assert isinstance(info["pool_free_tokens"], int)
        assert 0 < info["pool_free_tokens"] <= info["pool_size"]
    assert server.post("/flush_cache").status_code == 200
    abort = server.post("/abort_request", {"rid": "no-such-request"})
    assert abort.status_code == 200 and abort.json()["success"] is False


def _idle_server_info(server):
    """/get_server_info once no request is live, running or waiting (a finished request's KV
    goes back to the pool or into the tree around the time its response is sent)."""
    import time

    deadline = time.time() + 30
    while True:
        info = server.server_info()
        if (info["num_running_reqs"], info["num_waiting_reqs"],
                info["internal_states"][0]["live_requests"]) == (0, 0, 0):
            return info
        assert time.time() < deadline, info
        time.sleep(0.05)


def test_kv_pool_accounting(server):
    assert server.post("/flush_cache").status_code == 200
    start = _idle_server_info(server)
    size = start["pool_size"]
    # Flushed and idle: every slot is free and the tree holds nothing.
    assert start["pool_free_tokens"] == size and start["tree_tokens"] == 0, start
    r = server.post("/generate", {"text": "Pool accounting: the quick brown fox jumps over",
                                  "sampling_params": {"max_new_tokens": 4, "temperature": 0}})
    assert r.status_code == 200, r.text
    meta = r.json()["meta_info"]
    after = _idle_server_info(server)
    internal = after["internal_states"][0]
    # The finished request's tokens are cached in the tree, taken from the pool: nothing leaked,
    # nothing is pinned by a finished request.
    assert after["pool_size"] == size
    assert after["tree_tokens"] > 0 and after["pool_free_tokens"] < size, after
    assert after["tree_tokens"] <= meta["prompt_tokens"] + meta["completion_tokens"]
    assert after["pool_free_tokens"] + after["tree_tokens"] == size, after
    assert internal["pool_used_tokens"] == after["tree_tokens"]
    assert internal["protected_tokens"] == 0
    # Flushing returns every slot to the pool size reported at start.
    assert server.post("/flush_cache").status_code == 200
    end = _idle_server_info(server)
    assert end["pool_free_tokens"] == size and end["tree_tokens"] == 0, end


def test_abort_request_ends_a_running_request(server):
    import threading

    result = {}

    def run():
        result["r"] = server.post("/generate", {
            "text": "Write a long story.", "rid": "abort-me",
            "sampling_params": {"max_new_tokens": 2000, "ignore_eos": True}})

    t = threading.Thread(target=run)
    t.start()
    for _ in range(100):
        if server.post("/abort_request", {"rid": "abort-me"}).json()["success"]:
            break
        threading.Event().wait(0.05)
    t.join(timeout=60)
    assert result["r"].status_code == 200
    assert result["r"].json()["meta_info"]["finish_reason"]["type"] == "abort"


def test_metrics(server):
    server.post("/generate", {"text": "metrics", "sampling_params": {"max_new_tokens": 2}})
    r = server.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    text = r.text
    for name in ("prompt_tokens_total", "generation_tokens_total", "cached_tokens_total",
                 "cache_hit_rate", "num_running_reqs", "num_queue_reqs", "token_usage",
                 "num_retracted_reqs_total", "time_to_first_token_seconds_bucket",
                 "inter_token_latency_seconds_bucket", "e2e_request_latency_seconds_count"):
        assert f"radixlm:{name}" in text, name
    generated = [line for line in text.splitlines()
                 if line.startswith("radixlm:generation_tokens_total")]
    assert float(generated[0].rsplit(" ", 1)[1]) > 0


def _mapping_rss_bytes(pid, path):
    """Resident bytes of the process's mappings of `path` (/proc/PID/smaps), or None."""
    try:
        with open(f"/proc/{pid}/smaps") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    total, inside, found = 0, False, False
    for line in lines:
        fields = line.split()
        if fields and "-" in fields[0] and len(fields) >= 5:  # a mapping's header line
            inside = len(fields) >= 6 and fields[5] == path
            found = found or inside
        elif inside and fields[0] == "Rss:":
            total += int(fields[1]) * 1024
    return total if found else None


def test_memory_by_kind(server):
    """Resident bytes by kind in /get_server_info and /metrics: the weights cost about their
    file's bytes, once (the packed matrices' pages of the mapping are released)."""
    import os

    assert server.post("/generate", {"text": "memory",
                                     "sampling_params": {"max_new_tokens": 2}}).status_code == 200
    model_path = server.get("/get_model_info").json()["model_path"]
    file_bytes = os.path.getsize(model_path)
    memory = server.server_info()["memory"]
    for key in ("weights_bytes", "kv_pool_bytes", "scratch_bytes", "rss_bytes"):
        assert isinstance(memory[key], int) and memory[key] > 0, (key, memory)
    # Packed layouts are never larger than the GGUF's blocks by much (scales, 16-row groups);
    # the embedding table counts once, as the tied output head.
    assert 0.3 * file_bytes < memory["weights_bytes"] <= 2 * file_bytes, (memory, file_bytes)
    # The packed copies are written at load, so they are resident.
    assert memory["rss_bytes"] >= 0.9 * memory["weights_bytes"], memory
    # The mapping keeps only the header and what loading last touched: norms are copied at
    # load and embedding rows read with pread, so a forward pass maps none of the file back in.
    mapped = _mapping_rss_bytes(server.proc.pid, os.path.realpath(model_path))
    if mapped is not None:
        assert mapped < 0.25 * file_bytes, (mapped, file_bytes)
    text = server.get("/metrics").text
    for kind, key in (("weights", "weights_bytes"), ("kv_pool", "kv_pool_bytes"),
                      ("scratch", "scratch_bytes"), ("rss", "rss_bytes")):
        lines = [line for line in text.splitlines()
                 if line.startswith("radixlm:memory_bytes{") and f'kind="{kind}"' in line]
        assert len(lines) == 1, (kind, lines)
        value = float(lines[0].rsplit(" ", 1)[1])
        if kind == "rss":
            assert value > 0
        else:
            assert value == memory[key], (kind, value, memory)


def test_tokenize_matches_generate_and_chat(server):
    text = "The capital of France is"
    tok = server.post("/tokenize", {"prompt": text})
    assert tok.status_code == 200, tok.text
    t = tok.json()
    gen = server.post("/generate", {"text": text, "sampling_params": {"max_new_tokens": 0}}).json()
    assert t["count"] == len(t["tokens"]) == gen["meta_info"]["prompt_tokens"]
    assert t["tokens"][0] == 2  # gemma's BOS, as /generate adds it
    detok = server.post("/v1/detokenize", {"tokens": t["tokens"]}).json()
    assert detok["text"] == text
    assert server.post("/v1/tokenize", {"prompt": text, "add_special_tokens": False}).json()[
        "tokens"] == t["tokens"][1:]
    messages = [{"role": "user", "content": "Name three colors."}]
    chat_ids = server.post("/v1/tokenize", {"messages": messages}).json()
    chat = server.post("/v1/chat/completions",
                       {"model": "default", "messages": messages, "max_tokens": 1}).json()
    assert chat_ids["count"] == chat["usage"]["prompt_tokens"]
    bad = server.post("/detokenize", {"tokens": [1, 10**9]})
    assert bad.status_code == 400 and "not in the vocabulary" in bad.json()["error"]["message"]
