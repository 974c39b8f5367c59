"""Bad input of every kind gets the right 4xx with a JSON error naming the problem; the server
keeps serving (a health check after each, a real generation after all of them)."""

import json

import pytest
import requests

G = "/generate"
C = "/v1/completions"
CHAT = "/v1/chat/completions"
USER = [{"role": "user", "content": "hi"}]


def sp(**params):
    return {"text": "hello", "sampling_params": params}


# (id, method, path, body: dict/list/str-or-bytes raw, expected status)
CASES = [
    ("malformed-json", "POST", G, b'{"text": ', 400),
    ("empty-body", "POST", G, b"", 400),
    ("body-is-array", "POST", G, [1, 2], 400),
    ("body-is-string", "POST", G, "hello", 400),
    ("no-input", "POST", G, {"sampling_params": {}}, 400),
    ("text-and-ids", "POST", G, {"text": "a", "input_ids": [1]}, 400),
    ("text-int", "POST", G, {"text": 5}, 400),
    ("text-empty-list", "POST", G, {"text": []}, 400),
    ("text-list-non-string", "POST", G, {"text": ["a", 3]}, 400),
    ("ids-string", "POST", G, {"input_ids": [1, "x"]}, 400),
    ("ids-empty", "POST", G, {"input_ids": []}, 400),
    ("ids-out-of-vocab", "POST", G, {"input_ids": [2, 999999999]}, 400),
    ("ids-negative", "POST", G, {"input_ids": [2, -4]}, 400),
    ("ids-float", "POST", G, {"input_ids": [2, 1.5]}, 400),
    ("ids-huge-int", "POST", G, {"input_ids": [2, 2**70]}, 400),
    ("params-not-object", "POST", G, {"text": "a", "sampling_params": 5}, 400),
    ("temperature-string", "POST", G, sp(temperature="hot"), 400),
    ("temperature-negative", "POST", G, sp(temperature=-1), 400),
    ("top-p-zero", "POST", G, sp(top_p=0), 400),
    ("top-p-above-one", "POST", G, sp(top_p=1.5), 400),
    ("top-k-zero", "POST", G, sp(top_k=0), 400),
    ("min-p-two", "POST", G, sp(min_p=2), 400),
    ("max-new-tokens-negative", "POST", G, sp(max_new_tokens=-1), 400),
    ("max-new-tokens-string", "POST", G, sp(max_new_tokens="10"), 400),
    ("max-new-tokens-over-context", "POST", G, sp(max_new_tokens=10**7), 400),
    ("min-over-max-new-tokens", "POST", G, sp(max_new_tokens=2, min_new_tokens=5), 400),
    ("n-zero", "POST", G, sp(n=0), 400),
    ("frequency-penalty-5", "POST", G, sp(frequency_penalty=5), 400),
    ("presence-penalty--3", "POST", G, sp(presence_penalty=-3), 400),
    ("repetition-penalty-0", "POST", G, sp(repetition_penalty=0), 400),
    ("stop-int", "POST", G, sp(stop=5), 400),
    ("stop-list-of-ints", "POST", G, sp(stop=[1]), 400),
    ("stop-token-ids-string", "POST", G, sp(stop_token_ids="x"), 400),
    ("logit-bias-bad-key", "POST", G, sp(logit_bias={"abc": 1.0}), 400),
    ("logit-bias-bad-value", "POST", G, sp(logit_bias={"5": "x"}), 400),
    ("stream-string", "POST", G, {"text": "a", "stream": "yes"}, 400),
    ("return-logprob-string", "POST", G, {"text": "a", "return_logprob": "true"}, 400),
    ("logprob-start-len--5", "POST", G,
     {"text": "a", "return_logprob": True, "logprob_start_len": -5}, 400),
    ("logprob-start-past-prompt", "POST", G,
     {"text": "a", "return_logprob": True, "logprob_start_len": 500}, 400),
    ("top-logprobs-num-negative", "POST", G, {"text": "a", "top_logprobs_num": -1}, 400),
    ("rid-int", "POST", G, {"text": "a", "rid": 5}, 400),
    ("rid-list-single", "POST", G, {"text": "a", "rid": ["x"]}, 400),
    ("rid-list-length", "POST", G, {"text": ["a", "b"], "rid": ["x"]}, 400),
    ("params-list-length", "POST", G,
     {"text": ["a", "b"], "sampling_params": [{"max_new_tokens": 1}]}, 400),
    ("prompt-longer-than-context", "POST", G, {"input_ids": [2] + [1010] * 40000}, 400),
    ("invalid-utf8", "POST", G, b'{"text": "\xff\xfe"}', 400),
    ("deep-nesting", "POST", G, b"[" * 100000, 400),
    ("completion-no-prompt", "POST", C, {"max_tokens": 1}, 400),
    ("completion-prompt-int", "POST", C, {"prompt": 5}, 400),
    ("completion-max-tokens--1", "POST", C, {"prompt": "a", "max_tokens": -1}, 400),
    ("completion-n-0", "POST", C, {"prompt": "a", "n": 0}, 400),
    ("completion-logprobs-100", "POST", C, {"prompt": "a", "logprobs": 100}, 400),
    ("completion-stream-options", "POST", C,
     {"prompt": "a", "stream_options": {"include_usage": True}}, 400),
    ("completion-temperature-string", "POST", C, {"prompt": "a", "temperature": "x"}, 400),
    ("completion-too-long", "POST", C, {"prompt": [2] + [1010] * 40000}, 400),
    ("chat-no-messages", "POST", CHAT, {"max_tokens": 1}, 400),
    ("chat-messages-empty", "POST", CHAT, {"messages": []}, 400),
    ("chat-messages-string", "POST", CHAT, {"messages": "hi"}, 400),
    ("chat-bad-role", "POST", CHAT, {"messages": [{"role": "wizard", "content": "x"}]}, 400),
    ("chat-no-role", "POST", CHAT, {"messages": [{"content": "x"}]}, 400),
    ("chat-content-int", "POST", CHAT, {"messages": [{"role": "user", "content": 3}]}, 400),
    ("chat-top-logprobs-without-logprobs", "POST", CHAT,
     {"messages": USER, "top_logprobs": 2}, 400),
    ("chat-bad-response-format", "POST", CHAT,
     {"messages": USER, "response_format": {"type": "xml"}}, 400),
    ("chat-max-tokens-over-context", "POST", CHAT, {"messages": USER, "max_tokens": 10**7}, 400),
    ("chat-alternation", "POST", CHAT,
     {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}, 400),
    ("abort-no-rid", "POST", "/abort_request", {}, 400),
    ("abort-not-json", "POST", "/abort_request", b"rid=1", 400),
    ("unknown-route", "GET", "/nope", None, 404),
    ("unknown-v1-route", "POST", "/v1/embeddings-nope", {}, 404),
    ("generate-get", "GET", G, None, 405),
    ("completions-delete", "DELETE", C, None, 405),
    ("flush-put", "PUT", "/flush_cache", None, 405),
    ("health-post", "POST", "/health", {}, 405),
]


def send(server, method, path, body):
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return requests.request(method, server.url + path, data=data, timeout=60,
                            headers={"Content-Type": "application/json"})


def test_there_are_at_least_50_distinct_cases():
    assert len({c[0] for c in CASES}) == len(CASES) >= 50


@pytest.mark.parametrize("name,method,path,body,status", CASES, ids=[c[0] for c in CASES])
def test_bad_request(server, name, method, path, body, status):
    r = send(server, method, path, body)
    assert r.status_code == status, r.text[:300]
    error = r.json()["error"]
    assert isinstance(error["message"], str) and error["message"]
    assert error["code"] == status
    assert server.get("/health").status_code == 200


def test_oversized_body_is_413(server):
    body = b'{"text": "' + b"a" * (17 << 20) + b'"}'
    r = requests.post(server.url + G, data=body, timeout=60,
                      headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert "limit" in r.json()["error"]["message"]


def test_unsupported_features_are_501_with_a_reason(server):
    r = server.post(G, {"text": "a", "image_data": "cat.png"})
    assert r.status_code == 501 and "image" in r.json()["error"]["message"]
    r = server.post(CHAT, {"messages": USER, "tools": [{"type": "function",
                                                        "function": {"name": "f"}}]})
    assert r.status_code == 501 and "tool" in r.json()["error"]["message"]


def test_server_still_generates_after_bad_input(server):
    r = server.post(G, {"text": "Still alive?", "sampling_params": {"max_new_tokens": 2}})
    assert r.status_code == 200 and r.json()["meta_info"]["completion_tokens"] >= 1
    assert server.proc.poll() is None
