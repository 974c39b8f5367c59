"""skip_special_tokens (default true): control tokens and user-defined special markers such as
Gemma-3's <start_of_image> give no text; other user-defined tokens (<table>) are text."""

import pytest

from conftest import sse_events

START_OF_IMAGE, END_OF_IMAGE, TABLE, END_OF_TURN = 255999, 256000, 168, 106


def detokenize(server, ids, skip):
    r = server.post("/detokenize", {"tokens": ids, "skip_special_tokens": skip})
    assert r.status_code == 200, r.text
    return r.json()["text"]


def test_detokenize_hides_markers_and_control_tokens_unless_asked(server):
    ids = [START_OF_IMAGE, TABLE, END_OF_TURN, END_OF_IMAGE]
    assert detokenize(server, ids, True) == "<table>"
    assert detokenize(server, ids, False) == "<start_of_image><table><end_of_turn><end_of_image>"
    r = server.post("/detokenize", {"tokens": ids})  # the default is true
    assert r.json()["text"] == "<table>"


@pytest.mark.parametrize("skip", [True, False])
def test_generate_text_is_the_detokenized_output_with_the_same_setting(server, skip):
    prompt = "1<start_of_image>2<start_of_image>3<start_of_image>4"
    params = {"max_new_tokens": 12, "temperature": 0, "skip_special_tokens": skip}
    r = server.post("/generate", {"text": prompt, "sampling_params": params})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["text"] == detokenize(server, out["output_ids"], skip)
    with server.post("/generate", {"text": prompt, "sampling_params": params, "stream": True},
                     stream=True) as s:
        events = sse_events(s)
    assert events[-1]["text"] == out["text"]


def test_openai_endpoints_accept_skip_special_tokens(server):
    for skip in (True, False):
        r = server.post("/v1/completions", {"model": "default", "prompt": "Hello", "max_tokens": 4,
                                            "temperature": 0, "skip_special_tokens": skip})
        assert r.status_code == 200, r.text
        r = server.post("/v1/chat/completions", {
            "model": "default", "messages": [{"role": "user", "content": "Hi"}],
            "max_tokens": 4, "temperature": 0, "skip_special_tokens": skip})
        assert r.status_code == 200, r.text
        assert "<start_of_image>" not in r.json()["choices"][0]["message"]["content"]


def test_skip_special_tokens_must_be_a_boolean(server):
    r = server.post("/generate", {"text": "Hi", "sampling_params": {"skip_special_tokens": "no"}})
    assert r.status_code == 400
    assert "skip_special_tokens" in r.json()["error"]["message"]
    r = server.post("/v1/completions", {"model": "default", "prompt": "Hi",
                                        "skip_special_tokens": 1})
    assert r.status_code == 400
