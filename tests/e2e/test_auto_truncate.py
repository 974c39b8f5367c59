"""--allow-auto-truncate (SGLang's flag) against the real server: a prompt or max_new_tokens
past the context is cut to fit, with a warning in the server's log, instead of the 400 a
server without the flag answers. A 512-token context keeps the long requests short."""

import pytest

from conftest import Server, sse_events

CONTEXT = 512
G = "/generate"
LONG_TEXT = "hello " * 1200  # well past 512 tokens


@pytest.fixture(scope="module")
def srv():
    s = Server(extra_args=["--context-length", str(CONTEXT), "--allow-auto-truncate"])
    yield s
    assert s.stop() == 0, s.log_tail()


def generate(srv, **body):
    r = srv.post(G, body)
    assert r.status_code == 200, r.text
    return r.json()


def test_server_info_reports_the_flag(srv, server):
    info = srv.server_info()
    assert info["allow_auto_truncate"] is True
    assert info["context_length"] == CONTEXT
    assert server.server_info()["allow_auto_truncate"] is False


def test_max_new_tokens_past_the_context_is_lowered_to_what_is_left(srv):
    # SGLang's session kit asks for this; without the flag it is a 400 (below).
    out = generate(srv, text="The capital of France is",
                   sampling_params={"max_new_tokens": 100000, "temperature": 0})
    meta = out["meta_info"]
    assert meta["finish_reason"]["type"] in ("length", "stop"), meta
    assert 0 < meta["prompt_tokens"] < 16
    assert meta["completion_tokens"] <= CONTEXT - meta["prompt_tokens"]
    if meta["finish_reason"]["type"] == "length":
        assert meta["completion_tokens"] == CONTEXT - meta["prompt_tokens"], meta
    assert "truncated to fit" in srv.log_text()


def test_a_prompt_past_the_context_is_cut_to_what_fits(srv):
    out = generate(srv, text=LONG_TEXT, sampling_params={"max_new_tokens": 32, "temperature": 0})
    meta = out["meta_info"]
    assert meta["prompt_tokens"] == CONTEXT - 1, meta
    assert meta["completion_tokens"] <= 1
    assert meta["finish_reason"]["type"] in ("length", "stop"), meta
    assert "input " in srv.log_text() and f"its first {CONTEXT - 1} tokens" in srv.log_text()


def test_input_ids_streams_and_logprobs_are_cut_alike(srv):
    ids = [2] + [1000 + i % 500 for i in range(799)]
    out = generate(srv, input_ids=ids, return_logprob=True, logprob_start_len=700,
                   sampling_params={"max_new_tokens": 8, "temperature": 0})
    meta = out["meta_info"]
    assert meta["prompt_tokens"] == CONTEXT - 1, meta
    # logprob_start_len 700 was inside the prompt as sent: lowered to the kept prompt's last
    # position, so one prompt token is scored.
    assert len(meta["input_token_logprobs"]) == 1, meta["input_token_logprobs"]
    # Past the prompt as sent it is the request's own error, flag or not.
    r = srv.post(G, {"input_ids": ids, "return_logprob": True, "logprob_start_len": 800,
                     "sampling_params": {"max_new_tokens": 8}})
    assert r.status_code == 400, r.text
    assert "logprob_start_len" in r.json()["error"]["message"]

    with srv.post(G, {"input_ids": ids, "stream": True,
                      "sampling_params": {"max_new_tokens": 8, "temperature": 0}},
                  stream=True) as r:
        assert r.status_code == 200
        events = sse_events(r)
    assert events[-1]["meta_info"]["prompt_tokens"] == CONTEXT - 1


def test_openai_routes_are_cut_alike(srv):
    r = srv.post("/v1/completions", {"model": "default", "prompt": LONG_TEXT,
                                     "max_tokens": 100000, "temperature": 0})
    assert r.status_code == 200, r.text
    usage = r.json()["usage"]
    assert usage["prompt_tokens"] == CONTEXT - 1, usage
    assert usage["completion_tokens"] <= 1

    r = srv.post("/v1/completions", {"model": "default", "prompt": "Once upon a time",
                                     "max_tokens": 100000, "temperature": 0})
    assert r.status_code == 200, r.text
    body = r.json()
    usage = body["usage"]
    assert usage["completion_tokens"] <= CONTEXT - usage["prompt_tokens"]
    assert body["choices"][0]["finish_reason"] in ("length", "stop")


def test_a_session_turn_is_cut_and_the_session_goes_on(srv):
    r = srv.post("/open_session", {"capacity_of_str_len": 1000, "streaming": True})
    assert r.status_code == 200, r.text
    sid = r.json()
    try:
        first = generate(srv, text="A story about a lighthouse keeper.", session_params={"id": sid},
                         sampling_params={"max_new_tokens": 8, "temperature": 0})
        assert first["meta_info"]["prompt_tokens"] < 16
        # History + this turn's own text is past the context: cut to what fits.
        second = generate(srv, text=LONG_TEXT, session_params={"id": sid},
                          sampling_params={"max_new_tokens": 8, "temperature": 0})
        meta = second["meta_info"]
        assert meta["prompt_tokens"] == CONTEXT - 1, meta
        # The history came from the session's KV.
        assert meta["cached_tokens"] >= first["meta_info"]["prompt_tokens"], meta
        third = generate(srv, text=" The end.", session_params={"id": sid},
                         sampling_params={"max_new_tokens": 8, "temperature": 0})
        assert third["meta_info"]["prompt_tokens"] == CONTEXT - 1
        assert third["meta_info"]["cached_tokens"] >= CONTEXT - 2
    finally:
        assert srv.post("/close_session", {"session_id": sid}).status_code == 200


def test_without_the_flag_the_400_stays(server):
    r = server.post(G, {"text": "The capital of France is",
                        "sampling_params": {"max_new_tokens": 100000}})
    assert r.status_code == 400, r.text
    assert "maximum context length" in r.json()["error"]["message"]
    r = server.post("/v1/completions", {"model": "default", "prompt": "Hi",
                                        "max_tokens": 100000})
    assert r.status_code == 400, r.text
