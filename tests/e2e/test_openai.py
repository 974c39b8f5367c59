"""The official `openai` client against radixlm's /v1 routes, on both real models (conftest's
`model_server`: Gemma-3-270M and SmolLM2-135M-Instruct)."""

import pathlib
import uuid

import openai
import pytest


@pytest.fixture(scope="module")
def client(model_server):
    return openai.OpenAI(base_url=model_server.url + "/v1", api_key="unused", max_retries=0,
                         timeout=120)


@pytest.fixture(scope="module")
def model(client):
    return client.models.list().data[0].id


def test_models(client, model_server):
    server = model_server
    """The served name defaults to the GGUF's file name without .gguf, as the info routes say."""
    models = client.models.list().data
    info = server.get("/get_model_info").json()
    assert len(models) == 1
    assert models[0].id == info["served_model_name"]
    assert models[0].id == pathlib.Path(info["model_path"]).name.removesuffix(".gguf")
    assert server.get("/v1/models/" + models[0].id).json()["id"] == models[0].id


def test_default_the_served_name_and_the_path_name_the_same_model(client, model_server, model):
    server = model_server
    path = server.get("/get_model_info").json()["model_path"]
    texts = {name: client.completions.create(model=name, prompt="2 + 2 =", max_tokens=4,
                                             temperature=0).choices[0].text
             for name in ("default", model, path)}
    assert len(set(texts.values())) == 1, texts


def test_completion(client, model):
    r = client.completions.create(model=model, prompt="The capital of France is", max_tokens=8,
                                  temperature=0)
    assert r.object == "text_completion"
    assert len(r.choices) == 1 and r.choices[0].text
    assert r.choices[0].finish_reason in ("stop", "length")
    assert 0 < r.usage.completion_tokens <= 8
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens


def test_completion_stream_matches_non_stream(client, model):
    kwargs = dict(model=model, prompt="My favourite food is", max_tokens=8, temperature=0)
    full = client.completions.create(**kwargs).choices[0].text
    chunks = list(client.completions.create(stream=True, **kwargs))
    assert "".join(c.choices[0].text for c in chunks if c.choices) == full
    assert chunks[-1].choices[0].finish_reason in ("stop", "length")


def test_continuous_usage_stats_counts_every_event(client, model):
    """stream_options.continuous_usage_stats: each event carries its choice's usage so far, the
    last matching the final usage event; without it, events carry none."""
    kwargs = dict(model=model, prompt="Counting: one, two,", max_tokens=6, temperature=0,
                  stream=True, extra_body={"ignore_eos": True})
    events = list(client.completions.create(
        stream_options={"include_usage": True, "continuous_usage_stats": True}, **kwargs))
    counted = [e.usage for e in events if e.choices]
    assert counted and all(u is not None for u in counted)
    steps = [u.completion_tokens for u in counted]
    assert steps == sorted(steps) and steps[-1] == 6
    assert all(u.total_tokens == u.prompt_tokens + u.completion_tokens for u in counted)
    assert events[-1].usage.completion_tokens == 6
    assert counted[-1].prompt_tokens == events[-1].usage.prompt_tokens
    plain = list(client.completions.create(**kwargs))
    assert all(e.usage is None for e in plain)


def test_completion_n2(client, model):
    r = client.completions.create(model=model, prompt="Once upon a time", max_tokens=4, n=2,
                                  temperature=0.8, seed=3)
    assert sorted(c.index for c in r.choices) == [0, 1]
    assert 0 < r.usage.completion_tokens <= 8


def test_stop_string(client, model):
    r = client.completions.create(model=model, prompt="1, 2, 3, 4, 5,", max_tokens=12,
                                  temperature=0, stop=[","])
    choice = r.choices[0]
    assert "," not in choice.text
    assert choice.finish_reason == "stop"


def test_completion_logprobs(client, model):
    r = client.completions.create(model=model, prompt="The sun rises in the", max_tokens=3,
                                  temperature=0, logprobs=2)
    lp = r.choices[0].logprobs
    assert len(lp.tokens) == len(lp.token_logprobs) == r.usage.completion_tokens
    assert all(x <= 0 for x in lp.token_logprobs)
    assert all(1 <= len(top) <= 2 for top in lp.top_logprobs)
    assert "".join(lp.tokens) == r.choices[0].text


def test_completion_echo_logprobs_scores_the_prompt(client, model, model_server):
    """echo with logprobs and max_tokens 0 scores the prompt, as lm-evaluation-harness's
    loglikelihood requests do: one entry per prompt token (the first has none), each within its
    position's alternatives, the same as the native route's input logprobs; the fitting ending
    scores far higher."""
    scores = {}
    for ending in ("Paris", "purple"):
        text = f"The capital of France is {ending}."
        r = client.completions.create(model=model, prompt=text, max_tokens=0, echo=True,
                                      logprobs=1)
        choice = r.choices[0]
        assert choice.text == text
        lp = choice.logprobs
        assert len(lp.tokens) == len(lp.token_logprobs) == r.usage.prompt_tokens
        assert lp.token_logprobs[0] is None and lp.top_logprobs[0] is None
        assert all(x <= 0 for x in lp.token_logprobs[1:])
        assert all(max(top.values()) >= x - 1e-4
                   for top, x in zip(lp.top_logprobs[1:], lp.token_logprobs[1:]))
        scores[ending] = sum(lp.token_logprobs[1:])
        native = model_server.post("/generate", json={
            "text": text, "sampling_params": {"max_new_tokens": 0}, "return_logprob": True,
            "logprob_start_len": 0}).json()["meta_info"]["input_token_logprobs"]
        assert [e[0] for e in native] == pytest.approx(lp.token_logprobs, abs=1e-4)
    assert scores["Paris"] > scores["purple"] + 5, scores


def test_completion_echo_logprobs_with_generation(client, model):
    """Greedy, echoed: the prompt's entries, then the generated tokens' (each the likeliest);
    text_offset counts the tokens' texts; the stream carries the same entries."""
    kwargs = dict(model=model, prompt="One, two, three,", max_tokens=4, temperature=0,
                  echo=True, logprobs=2, extra_body={"ignore_eos": True})
    r = client.completions.create(**kwargs)
    lp = r.choices[0].logprobs
    assert len(lp.tokens) == r.usage.prompt_tokens + r.usage.completion_tokens
    assert r.choices[0].text.startswith("One, two, three,")
    for top, x in zip(lp.top_logprobs[-4:], lp.token_logprobs[-4:]):
        assert x == pytest.approx(max(top.values()), abs=1e-4)
    offsets = [0]
    for token in lp.tokens[:-1]:
        offsets.append(offsets[-1] + len(token))
    assert lp.text_offset == offsets
    streamed = []
    for chunk in client.completions.create(stream=True, **kwargs):
        for c in chunk.choices:
            if c.logprobs is not None:
                streamed += zip(c.logprobs.tokens, c.logprobs.token_logprobs)
    assert [t for t, _ in streamed] == lp.tokens
    assert [x for _, x in streamed][1:] == pytest.approx(lp.token_logprobs[1:], abs=1e-4)


def test_priority_reaches_the_radix_tree(client, model, model_server):
    """SGLang's priority extra on the OpenAI routes: the request's prefix enters the radix tree
    with it (what --radix-eviction-policy priority keeps by); response_format on completions
    constrains the text as on chat."""
    marker = uuid.uuid4().hex[:12]
    # A prompt sharing the marker's first characters splits the marker's path in the tree.
    client.completions.create(model=model, prompt=marker[:4] + " other", max_tokens=1)
    client.completions.create(model=model, prompt=f"{marker} is a code word", max_tokens=1,
                              extra_body={"priority": 5})
    nodes = model_server.get("/radix_tree", params={"max_nodes": 20000}).json()["nodes"]

    def path_text(i):  # entry i's text after its ancestors' (parent: an entry's index)
        parts = []
        while i >= 0:
            parts.append(nodes[i]["text"] or "")
            i = nodes[i]["parent"]
        return "".join(reversed(parts))

    # The node where the random marker completes holds only this request's tokens (the prompt
    # sharing its first characters split them into a node of their own).
    hits = [n for i, n in enumerate(nodes) if n["kind"] == "node" and marker in path_text(i)
            and marker not in path_text(n["parent"])]
    assert len(hits) == 1 and hits[0]["priority"] == 5, hits
    r = client.completions.create(model=model, prompt="A number:", max_tokens=8, temperature=0,
                                  extra_body={"response_format": {
                                      "type": "json_schema",
                                      "json_schema": {"name": "n",
                                                      "schema": {"type": "integer"}}}})
    assert r.choices[0].text.strip().lstrip("-").isdigit(), r.choices[0].text


def test_seed_reproducibility(client, model):
    kwargs = dict(model=model, prompt="A random word:", max_tokens=8, temperature=1.0)
    a = client.completions.create(seed=1234, **kwargs).choices[0].text
    b = client.completions.create(seed=1234, **kwargs).choices[0].text
    assert a == b


def test_usage_reports_cached_tokens_on_a_repeated_prefix(client, model):
    prompt = f"Request {uuid.uuid4().hex}: " + "the quick brown fox jumps over the lazy dog " * 8
    first = client.completions.create(model=model, prompt=prompt, max_tokens=1)
    second = client.completions.create(model=model, prompt=prompt, max_tokens=1)
    assert first.usage.prompt_tokens == second.usage.prompt_tokens > 50
    assert second.usage.prompt_tokens_details.cached_tokens >= second.usage.prompt_tokens - 1
    assert first.usage.prompt_tokens_details.cached_tokens < first.usage.prompt_tokens - 1


def test_chat(client, model):
    r = client.chat.completions.create(
        model=model, messages=[{"role": "system", "content": "Answer briefly."},
                               {"role": "user", "content": "What is 2 + 2?"}],
        max_tokens=8, temperature=0)
    assert r.object == "chat.completion"
    msg = r.choices[0].message
    assert msg.role == "assistant" and isinstance(msg.content, str)
    assert r.choices[0].finish_reason in ("stop", "length")
    assert r.usage.prompt_tokens > 10


def test_chat_continue_final_message_and_template_kwargs(client, model, model_server):
    """continue_final_message: the prompt ends with the assistant's unfinished text (as
    /tokenize shows it), and the reply continues it; chat_template_kwargs reach the template
    (variables these templates do not read change nothing) and bad ones are a 400."""
    server = model_server
    messages = [{"role": "user", "content": "Name a colour."},
                {"role": "assistant", "content": "My favourite colour is"}]
    tok = server.post("/v1/tokenize", {"messages": messages, "continue_final_message": True})
    assert tok.status_code == 200, tok.text
    text = server.post("/v1/detokenize", {"tokens": tok.json()["tokens"]}).json()["text"]
    assert text.endswith("My favourite colour is"), text
    opened = server.post("/v1/tokenize", {"messages": messages}).json()["count"]
    assert opened > tok.json()["count"]  # without it the turn is closed and a new one opened
    r = client.chat.completions.create(model=model, messages=messages, max_tokens=4,
                                       temperature=0,
                                       extra_body={"continue_final_message": True})
    assert r.usage.prompt_tokens == tok.json()["count"]
    assert r.choices[0].message.content
    kwargs = {"model": model, "messages": messages[:1], "max_tokens": 4, "temperature": 0}
    plain = server.post("/v1/chat/completions", kwargs).json()
    with_kwargs = server.post("/v1/chat/completions",
                              {**kwargs, "chat_template_kwargs": {"enable_thinking": False}})
    assert with_kwargs.status_code == 200, with_kwargs.text
    assert with_kwargs.json()["choices"][0]["message"] == plain["choices"][0]["message"]
    for bad in [{"chat_template_kwargs": 5}, {"chat_template_kwargs": {"messages": []}},
                {"continue_final_message": "yes"}]:
        for path in ("/v1/chat/completions", "/v1/tokenize"):
            body = {**kwargs, **bad} if path.endswith("completions") else {
                "messages": messages, **bad}
            reply = server.post(path, body)
            assert reply.status_code == 400, (path, bad, reply.text)
            assert next(iter(bad)) in reply.json()["error"]["message"]


def test_chat_stream_with_usage(client, model):
    kwargs = dict(model=model, messages=[{"role": "user", "content": "Say hello."}],
                  max_completion_tokens=6, temperature=0)
    full = client.chat.completions.create(**kwargs).choices[0].message.content
    chunks = list(client.chat.completions.create(
        stream=True, stream_options={"include_usage": True}, **kwargs))
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == full
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens > 0
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] in ("stop", "length")


def test_chat_n2_and_logprobs(client, model):
    r = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Name a colour."}], max_tokens=3,
        n=2, temperature=0.7, seed=5, logprobs=True, top_logprobs=2)
    assert sorted(c.index for c in r.choices) == [0, 1]
    for choice in r.choices:
        content = choice.logprobs.content
        assert len(content) >= 1
        for item in content:
            assert item.logprob <= 0 and len(item.top_logprobs) == 2
            assert bytes(item.bytes).decode("utf-8", "replace") is not None


def test_bad_requests_raise_openai_errors(client, model):
    with pytest.raises(openai.BadRequestError) as e:
        client.completions.create(model=model, prompt="x", max_tokens=-1)
    assert "max_tokens" in str(e.value)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model=model, messages=[], max_tokens=1)
    with pytest.raises(openai.BadRequestError):
        client.completions.create(model=model, prompt="x", temperature=-1, max_tokens=1)
