"""stop_regex on /generate, /v1/completions and /v1/chat/completions (streaming too): the output
stops at the first match Python's re.search finds in the greedy text, cut at the match's start."""

import re

import openai
import pytest

from conftest import sse_events

PROMPT = "1, 2, 3, 4, 5, 6,"
N = 24


@pytest.fixture(scope="module")
def full_text(server):
    """The greedy continuation without any stop condition."""
    r = server.post("/generate", {"text": PROMPT,
                                  "sampling_params": {"temperature": 0, "max_new_tokens": N}})
    assert r.status_code == 200, r.text
    text = r.json()["text"]
    assert len(text) >= 8, text
    return text


def pattern_for(text):
    """A pattern with a class and a quantifier that first matches in the middle of `text`."""
    k = len(text) // 2
    return re.escape(text[k]) + "[^\\n]{0,2}?" + re.escape(text[k + 1])


def expected(text, pattern):
    m = re.search(pattern, text)
    assert m is not None
    return text[:m.start()], text[:m.end()]


def test_generate_stops_at_the_first_match(server, full_text):
    pattern = pattern_for(full_text)
    cut, kept = expected(full_text, pattern)
    params = {"temperature": 0, "max_new_tokens": N, "stop_regex": pattern}
    out = server.post("/generate", {"text": PROMPT, "sampling_params": params}).json()
    assert out["text"] == cut
    assert out["meta_info"]["finish_reason"] == {"type": "stop", "matched": pattern}
    # no_stop_trim keeps the match; a list of patterns works, the earliest match wins.
    params.update(no_stop_trim=True, stop_regex=["zzz+", pattern])
    out = server.post("/generate", {"text": PROMPT, "sampling_params": params}).json()
    assert out["text"] == kept
    assert out["meta_info"]["finish_reason"]["matched"] == pattern


def test_generate_stream_never_emits_what_the_match_cuts(server, full_text):
    pattern = pattern_for(full_text)
    cut, _ = expected(full_text, pattern)
    r = server.post("/generate", {"text": PROMPT, "stream": True, "sampling_params": {
        "temperature": 0, "max_new_tokens": N, "stop_regex": [pattern]}}, stream=True)
    assert r.status_code == 200
    events = sse_events(r)
    texts = [e["text"] for e in events]
    # Cumulative text: every chunk extends the previous one and none goes past the cut.
    for a, b in zip(texts, texts[1:]):
        assert b.startswith(a)
    assert all(cut.startswith(t) for t in texts)
    assert texts[-1] == cut
    assert events[-1]["meta_info"]["finish_reason"]["matched"] == pattern


def test_openai_routes_take_stop_regex(server, full_text):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
    model = client.models.list().data[0].id
    pattern = pattern_for(full_text)
    cut, _ = expected(full_text, pattern)
    r = client.completions.create(model=model, prompt=PROMPT, max_tokens=N, temperature=0,
                                  extra_body={"stop_regex": pattern})
    assert r.choices[0].text == cut
    assert r.choices[0].finish_reason == "stop"
    chunks = list(client.completions.create(model=model, prompt=PROMPT, max_tokens=N,
                                            temperature=0, stream=True,
                                            extra_body={"stop_regex": pattern}))
    assert "".join(c.choices[0].text for c in chunks if c.choices) == cut
    # Chat: a pattern that any text matches stops at once, with an empty message.
    chat = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Say hello."}], max_tokens=8,
        temperature=0, extra_body={"stop_regex": "[\\s\\S]"})
    assert chat.choices[0].finish_reason == "stop"
    assert chat.choices[0].message.content == ""


@pytest.mark.parametrize("route,body", [
    ("/generate", {"text": "a", "sampling_params": {"stop_regex": "(ab"}}),
    ("/generate", {"text": "a", "sampling_params": {"stop_regex": ["x", "a(?=b)"]}}),
    ("/v1/completions", {"prompt": "a", "stop_regex": "[z-a]"}),
    ("/v1/completions", {"prompt": "a", "stop_regex": 5}),
])
def test_bad_patterns_are_400_naming_the_field(server, route, body):
    r = server.post(route, body)
    assert r.status_code == 400, r.text
    assert "stop_regex" in r.text
