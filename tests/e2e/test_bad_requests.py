"""Bad input of every kind gets the right 4xx with a JSON error naming the problem; the server
keeps serving (a health check after each, a real generation after all of them)."""

import json
import re

import pytest
import requests

G = "/generate"
C = "/v1/completions"
CHAT = "/v1/chat/completions"
USER = [{"role": "user", "content": "hi"}]


def sp(**params):
    return {"text": "hello", "sampling_params": params}


# (id, method, path, body: dict/list/str-or-bytes raw, expected status, names: a regex that the
# error's message or param must match, case-insensitively: the field or problem at fault)
CASES = [
    ("malformed-json", "POST", G, b'{"text": ', 400, r"json"),
    ("empty-body", "POST", G, b"", 400, r"empty"),
    ("body-is-array", "POST", G, [1, 2], 400, r"object"),
    ("body-is-string", "POST", G, "hello", 400, r"object"),
    ("no-input", "POST", G, {"sampling_params": {}}, 400, r"input_ids"),
    ("text-and-ids", "POST", G, {"text": "a", "input_ids": [1]}, 400, r"input_ids"),
    ("text-int", "POST", G, {"text": 5}, 400, r"\btext\b"),
    ("text-empty-list", "POST", G, {"text": []}, 400, r"\btext\b"),
    ("text-list-non-string", "POST", G, {"text": ["a", 3]}, 400, r"text\[1\]"),
    ("ids-string", "POST", G, {"input_ids": [1, "x"]}, 400, r"input_ids\[1\]"),
    ("ids-empty", "POST", G, {"input_ids": []}, 400, r"input_ids"),
    ("ids-out-of-vocab", "POST", G, {"input_ids": [2, 999999999]}, 400, r"vocabulary"),
    ("ids-negative", "POST", G, {"input_ids": [2, -4]}, 400, r"vocabulary"),
    ("ids-float", "POST", G, {"input_ids": [2, 1.5]}, 400, r"input_ids\[1\]"),
    ("ids-huge-int", "POST", G, {"input_ids": [2, 2**70]}, 400, r"input_ids\[1\]"),
    ("params-not-object", "POST", G, {"text": "a", "sampling_params": 5}, 400, r"sampling_params"),
    ("temperature-string", "POST", G, sp(temperature="hot"), 400, r"temperature"),
    ("temperature-negative", "POST", G, sp(temperature=-1), 400, r"temperature"),
    ("top-p-zero", "POST", G, sp(top_p=0), 400, r"top_p"),
    ("top-p-above-one", "POST", G, sp(top_p=1.5), 400, r"top_p"),
    ("top-k-zero", "POST", G, sp(top_k=0), 400, r"top_k"),
    ("min-p-two", "POST", G, sp(min_p=2), 400, r"min_p"),
    ("max-new-tokens-negative", "POST", G, sp(max_new_tokens=-1), 400, r"max_new_tokens"),
    ("max-new-tokens-string", "POST", G, sp(max_new_tokens="10"), 400, r"max_new_tokens"),
    ("max-new-tokens-over-context", "POST", G, sp(max_new_tokens=10**7), 400, r"context length"),
    ("min-over-max-new-tokens", "POST", G, sp(max_new_tokens=2, min_new_tokens=5),
     400, r"min_new_tokens"),
    ("n-zero", "POST", G, sp(n=0), 400, r"\bn\b"),
    ("frequency-penalty-5", "POST", G, sp(frequency_penalty=5), 400, r"frequency_penalty"),
    ("presence-penalty--3", "POST", G, sp(presence_penalty=-3), 400, r"presence_penalty"),
    ("repetition-penalty-0", "POST", G, sp(repetition_penalty=0), 400, r"repetition_penalty"),
    ("stop-int", "POST", G, sp(stop=5), 400, r"\bstop\b"),
    ("stop-list-of-ints", "POST", G, sp(stop=[1]), 400, r"\bstop\b"),
    ("stop-token-ids-string", "POST", G, sp(stop_token_ids="x"), 400, r"stop_token_ids"),
    ("logit-bias-bad-key", "POST", G, sp(logit_bias={"abc": 1.0}), 400, r"logit_bias"),
    ("logit-bias-bad-value", "POST", G, sp(logit_bias={"5": "x"}), 400, r"logit_bias"),
    ("stream-string", "POST", G, {"text": "a", "stream": "yes"}, 400, r"\bstream\b"),
    ("return-logprob-string", "POST", G, {"text": "a", "return_logprob": "true"},
     400, r"return_logprob"),
    ("logprob-start-len--5", "POST", G,
     {"text": "a", "return_logprob": True, "logprob_start_len": -5}, 400, r"logprob_start_len"),
    ("logprob-start-past-prompt", "POST", G,
     {"text": "a", "return_logprob": True, "logprob_start_len": 500}, 400, r"logprob_start_len"),
    ("top-logprobs-num-negative", "POST", G, {"text": "a", "top_logprobs_num": -1},
     400, r"top_logprobs_num"),
    ("rid-int", "POST", G, {"text": "a", "rid": 5}, 400, r"\brid\b"),
    ("rid-list-single", "POST", G, {"text": "a", "rid": ["x"]}, 400, r"\brid\b"),
    ("rid-list-length", "POST", G, {"text": ["a", "b"], "rid": ["x"]}, 400, r"\brid\b"),
    ("params-list-length", "POST", G,
     {"text": ["a", "b"], "sampling_params": [{"max_new_tokens": 1}]}, 400, r"sampling_params"),
    ("prompt-longer-than-context", "POST", G, {"input_ids": [2] + [1010] * 40000},
     400, r"context length"),
    ("invalid-utf8", "POST", G, b'{"text": "\xff\xfe"}', 400, r"json|utf-?8"),
    ("deep-nesting", "POST", G, b"[" * 100000, 400, r"nest|deep"),
    ("completion-no-prompt", "POST", C, {"max_tokens": 1}, 400, r"\bprompt\b"),
    ("completion-prompt-int", "POST", C, {"prompt": 5}, 400, r"\bprompt\b"),
    ("completion-max-tokens--1", "POST", C, {"prompt": "a", "max_tokens": -1}, 400, r"max_tokens"),
    ("completion-n-0", "POST", C, {"prompt": "a", "n": 0}, 400, r"\bn\b"),
    ("completion-logprobs-100", "POST", C, {"prompt": "a", "logprobs": 100}, 400, r"\blogprobs\b"),
    ("completion-stream-options", "POST", C,
     {"prompt": "a", "stream_options": {"include_usage": True}}, 400, r"stream_options"),
    ("completion-temperature-string", "POST", C, {"prompt": "a", "temperature": "x"},
     400, r"temperature"),
    ("completion-too-long", "POST", C, {"prompt": [2] + [1010] * 40000}, 400, r"context length"),
    ("chat-no-messages", "POST", CHAT, {"max_tokens": 1}, 400, r"\bmessages\b"),
    ("chat-messages-empty", "POST", CHAT, {"messages": []}, 400, r"\bmessages\b"),
    ("chat-messages-string", "POST", CHAT, {"messages": "hi"}, 400, r"\bmessages\b"),
    ("chat-bad-role", "POST", CHAT, {"messages": [{"role": "wizard", "content": "x"}]},
     400, r"\brole\b"),
    ("chat-no-role", "POST", CHAT, {"messages": [{"content": "x"}]}, 400, r"\brole\b"),
    ("chat-content-int", "POST", CHAT, {"messages": [{"role": "user", "content": 3}]},
     400, r"\bcontent\b"),
    ("chat-top-logprobs-without-logprobs", "POST", CHAT,
     {"messages": USER, "top_logprobs": 2}, 400, r"top_logprobs"),
    ("chat-bad-response-format", "POST", CHAT,
     {"messages": USER, "response_format": {"type": "xml"}}, 400, r"response_format"),
    ("chat-max-tokens-over-context", "POST", CHAT, {"messages": USER, "max_tokens": 10**7},
     400, r"context length"),
    ("chat-alternation", "POST", CHAT,
     {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]},
     400, r"alternate"),
    ("abort-no-rid", "POST", "/abort_request", {}, 400, r"\brid\b"),
    ("abort-not-json", "POST", "/abort_request", b"rid=1", 400, r"json"),
    ("unknown-route", "GET", "/nope", None, 404, r"/nope"),
    ("unknown-v1-route", "POST", "/v1/embeddings-nope", {}, 404, r"/v1/embeddings-nope"),
    ("generate-get", "GET", G, None, 405, r"\bGET\b.*/generate"),
    ("completions-delete", "DELETE", C, None, 405, r"\bDELETE\b.*/v1/completions"),
    ("flush-put", "PUT", "/flush_cache", None, 405, r"\bPUT\b.*/flush_cache"),
    ("health-post", "POST", "/health", {}, 405, r"\bPOST\b.*/health"),
]


def wire(method, path, body):
    """What send() puts on the wire, to tell cases apart by what the server actually receives."""
    if body is None:
        return method, path, None
    return method, path, body if isinstance(body, bytes) else json.dumps(body).encode()


def send(server, method, path, body):
    return requests.request(method, server.url + path, data=wire(method, path, body)[2],
                            timeout=60, headers={"Content-Type": "application/json"})


def check_error(r, status, names):
    """r is `status` with the documented JSON error body, whose message or param names the
    problem; returns the message."""
    assert r.status_code == status, r.text[:300]
    assert r.headers["content-type"].startswith("application/json"), r.headers
    error = r.json()["error"]
    assert set(error) >= {"message", "type", "param", "code"}, error
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["type"], str) and error["type"]
    assert error["code"] == status
    where = error["message"] + " " + str(error["param"] or "")
    assert re.search(names, where, re.IGNORECASE), (names, error)
    return error["message"]


def test_at_least_50_distinct_bad_requests_each_get_their_own_4xx(server):
    sent = set()
    messages = set()
    for name, method, path, body, status, names in CASES:
        r = send(server, method, path, body)
        assert 400 <= r.status_code < 500, (name, r.status_code, r.text[:300])
        messages.add(check_error(r, status, names))
        sent.add(wire(method, path, body))
    # At least 50 different requests reached the server, and its answers tell the problems
    # apart rather than repeating one generic error.
    assert len(sent) >= 50, len(sent)
    assert len(messages) >= 50, sorted(messages)
    assert server.get("/health").status_code == 200


@pytest.mark.parametrize("name,method,path,body,status,names", CASES, ids=[c[0] for c in CASES])
def test_bad_request(server, name, method, path, body, status, names):
    check_error(send(server, method, path, body), status, names)
    assert server.get("/health").status_code == 200


def test_oversized_body_is_413(server):
    body = b'{"text": "' + b"a" * (17 << 20) + b'"}'
    r = requests.post(server.url + G, data=body, timeout=60,
                      headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert "limit" in r.json()["error"]["message"]


def test_unsupported_features_are_501_with_a_reason(server):
    r = server.post(G, {"text": "a", "image_data": "cat.png"})  # no --mmproj
    assert r.status_code == 400 and "--mmproj" in r.json()["error"]["message"]
    r = server.post(CHAT, {"messages": USER, "functions": [{"name": "f"}]})
    assert r.status_code == 501 and "tools" in r.json()["error"]["message"]
    r = server.post(CHAT, {"messages": USER, "function_call": "auto"})
    assert r.status_code == 501 and "tool_choice" in r.json()["error"]["message"]


def test_server_still_generates_after_bad_input(server):
    r = server.post(G, {"text": "Still alive?", "sampling_params": {"max_new_tokens": 2}})
    assert r.status_code == 200 and r.json()["meta_info"]["completion_tokens"] >= 1
    assert server.proc.poll() is None
