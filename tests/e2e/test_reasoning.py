"""serve --reasoning-parser: the thinking block goes to reasoning_content, streamed as its own
deltas; unknown parser names stop the server with a message."""

import subprocess

import openai
import pytest

from conftest import Server, _binary, _model


@pytest.fixture(scope="module")
def r1_server():
    s = Server(extra_args=["--reasoning-parser", "deepseek-r1"])
    yield s
    assert s.stop() == 0


def test_deepseek_r1_reply_without_end_tag_is_all_reasoning(r1_server):
    client = openai.OpenAI(base_url=r1_server.url + "/v1", api_key="x", max_retries=0)
    kwargs = dict(model="m", messages=[{"role": "user", "content": "Count to five."}],
                  temperature=0, max_tokens=16, stop=["</think>"])
    full = client.chat.completions.create(**kwargs).choices[0].message
    # Gemma-3 never writes </think> (it is a stop string here), so the whole reply is thinking.
    assert full.reasoning_content
    assert full.content == ""
    reasoning, content = "", ""
    for chunk in client.chat.completions.create(stream=True, **kwargs):
        if chunk.choices:
            delta = chunk.choices[0].delta
            reasoning += getattr(delta, "reasoning_content", None) or ""
            content += delta.content or ""
    assert reasoning == full.reasoning_content
    assert content == ""


def test_separate_and_stream_reasoning_fields(r1_server):
    """SGLang's request fields: separate_reasoning false leaves the thinking in content;
    stream_reasoning false sends it in one delta when it ends (here: at the finish)."""
    client = openai.OpenAI(base_url=r1_server.url + "/v1", api_key="x", max_retries=0)
    kwargs = dict(model="m", messages=[{"role": "user", "content": "Count to five."}],
                  temperature=0, max_tokens=16, stop=["</think>"])
    split = client.chat.completions.create(**kwargs).choices[0].message
    whole = client.chat.completions.create(
        extra_body={"separate_reasoning": False}, **kwargs).choices[0].message
    assert whole.content == split.reasoning_content
    assert getattr(whole, "reasoning_content", None) is None
    pieces, content = [], ""
    for chunk in client.chat.completions.create(
            stream=True, extra_body={"stream_reasoning": False}, **kwargs):
        if chunk.choices:
            delta = chunk.choices[0].delta
            if getattr(delta, "reasoning_content", None):
                pieces.append(delta.reasoning_content)
            content += delta.content or ""
    assert pieces == [split.reasoning_content]
    assert content == ""
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(extra_body={"separate_reasoning": "no"}, **kwargs)


def test_deepseek_v3_splits_only_when_the_request_asks_for_thinking():
    """deepseek-v3 (V3.1's template opens <think> only for thinking: true): with it, the reply
    is the thinking until </think>; without it (or with false), the reply is all content."""
    s = Server(extra_args=["--reasoning-parser", "deepseek-v3"])
    try:
        client = openai.OpenAI(base_url=s.url + "/v1", api_key="x", max_retries=0)
        kwargs = dict(model="m", messages=[{"role": "user", "content": "Count to five."}],
                      temperature=0, max_tokens=16, stop=["</think>"])
        plain = client.chat.completions.create(**kwargs).choices[0].message
        assert plain.content
        assert getattr(plain, "reasoning_content", None) is None
        off = client.chat.completions.create(
            extra_body={"chat_template_kwargs": {"thinking": False}}, **kwargs).choices[0].message
        assert off.content == plain.content
        on = client.chat.completions.create(
            extra_body={"chat_template_kwargs": {"thinking": True}}, **kwargs).choices[0].message
        assert on.reasoning_content == plain.content
        assert on.content == ""
        reasoning, content = "", ""
        for chunk in client.chat.completions.create(
                stream=True, extra_body={"chat_template_kwargs": {"thinking": True}}, **kwargs):
            if chunk.choices:
                delta = chunk.choices[0].delta
                reasoning += getattr(delta, "reasoning_content", None) or ""
                content += delta.content or ""
        assert (reasoning, content) == (on.reasoning_content, "")
    finally:
        assert s.stop() == 0


def test_unknown_parser_names_are_refused():
    for flag, name in [("--reasoning-parser", "r2"), ("--tool-call-parser", "gemma")]:
        out = subprocess.run([_binary(), "serve", "--port", "0", "--model-path", _model(), flag,
                              name], capture_output=True, text=True, timeout=300)
        assert out.returncode != 0
        assert name in out.stderr
