"""Function calling with the `openai` client: forced calls (tool_choice required / named) are
constrained by their functions' JSON schemas, so every call parses and its arguments validate;
streamed tool-call deltas reassemble to the non-streamed call; tool results round-trip through
the chat template. The calls run on both real models (conftest's `model_server`): Gemma-3
(no tool syntax in its template: the json format) and SmolLM2-135M-Instruct (ChatML without
tool syntax: the json format too, detected from the template)."""

import json

import jsonschema
import openai
import pytest


@pytest.fixture(scope="module")
def client(model_server):
    return openai.OpenAI(base_url=model_server.url + "/v1", api_key="unused", max_retries=0,
                         timeout=300)


@pytest.fixture(scope="module")
def model(client):
    return client.models.list().data[0].id


def tool(name, description, parameters):
    return {"type": "function",
            "function": {"name": name, "description": description, "parameters": parameters}}


TOOLS = [
    tool("get_weather", "Current weather in a city",
         {"type": "object",
          "properties": {"city": {"type": "string", "maxLength": 40},
                         "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
          "required": ["city", "unit"]}),
    tool("add", "Add two integers",
         {"type": "object",
          "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
          "required": ["a", "b"]}),
    tool("set_alarm", "Set an alarm",
         {"type": "object",
          "properties": {"hour": {"type": "integer", "minimum": 0, "maximum": 23},
                         "minute": {"type": "integer", "minimum": 0, "maximum": 59},
                         "repeat": {"type": "boolean"}},
          "required": ["hour", "minute", "repeat"]}),
    tool("search_books", "Search a library catalogue",
         {"type": "object",
          "properties": {"query": {"type": "string", "maxLength": 60},
                         "max_results": {"type": "integer", "minimum": 1, "maximum": 20},
                         "genres": {"type": "array", "maxItems": 3,
                                    "items": {"type": "string",
                                              "enum": ["fiction", "history", "science"]}}},
          "required": ["query", "max_results"]}),
    tool("convert_currency", "Convert an amount between currencies",
         {"type": "object",
          "properties": {"amount": {"type": "number"},
                         "source": {"type": "string", "enum": ["USD", "EUR", "JPY"]},
                         "target": {"type": "string", "enum": ["USD", "EUR", "JPY"]}},
          "required": ["amount", "source", "target"]}),
    tool("create_event", "Put an event in the calendar",
         {"type": "object",
          "properties": {"title": {"type": "string", "maxLength": 50},
                         "date": {"type": "string", "format": "date"},
                         "attendees": {"type": "array", "maxItems": 4,
                                       "items": {"type": "string", "maxLength": 30}},
                         "location": {"anyOf": [{"type": "string", "maxLength": 40},
                                                {"type": "null"}]}},
          "required": ["title", "date"]}),
    tool("get_time", "The current time", None),
]
SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] or {"type": "object",
                                                                   "properties": {},
                                                                   "additionalProperties": False}
           for t in TOOLS}

PROMPTS = {
    "get_weather": "What is the weather like in Paris today?",
    "add": "What is 17 plus 25?",
    "set_alarm": "Wake me up at 6:30 every day.",
    "search_books": "Find me up to five books about the Roman empire.",
    "convert_currency": "How much is 100 dollars in euros?",
    "create_event": "Schedule a team lunch on 2025-03-14 with Ana and Bo.",
    "get_time": "What time is it?",
}


def user(text):
    return [{"role": "user", "content": text}]


def check_calls(message, allowed):
    assert message.tool_calls, message
    for call in message.tool_calls:
        assert call.type == "function"
        assert call.id.startswith("call_")
        assert call.function.name in allowed
        arguments = json.loads(call.function.arguments)
        jsonschema.validate(arguments, SCHEMAS[call.function.name])
    return message.tool_calls


@pytest.mark.parametrize("temperature", [0.0, 0.8])
@pytest.mark.parametrize("name", sorted(PROMPTS))
def test_named_tool_choice_makes_one_valid_call(client, model, name, temperature):
    r = client.chat.completions.create(
        model=model, messages=user(PROMPTS[name]), tools=TOOLS, temperature=temperature, seed=7,
        max_tokens=300, tool_choice={"type": "function", "function": {"name": name}})
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    calls = check_calls(choice.message, {name})
    assert len(calls) == 1 and calls[0].function.name == name
    assert choice.message.content is None


@pytest.mark.parametrize("temperature", [0.0, 0.8])
@pytest.mark.parametrize("prompt", sorted(PROMPTS.values()))
def test_required_tool_choice_calls_offered_functions(client, model, prompt, temperature):
    r = client.chat.completions.create(
        model=model, messages=user(prompt), tools=TOOLS, tool_choice="required", seed=11,
        temperature=temperature, max_tokens=600)
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    calls = check_calls(choice.message, set(SCHEMAS))
    assert len(calls) == 1


def test_without_parallel_calls_required_makes_exactly_one(client, model):
    r = client.chat.completions.create(
        model=model, messages=user("Weather in Rome and in Oslo?"), tools=TOOLS,
        tool_choice="required", parallel_tool_calls=False, temperature=0, max_tokens=300)
    assert len(check_calls(r.choices[0].message, set(SCHEMAS))) == 1


def assemble(stream):
    """Reassembles delta.tool_calls the way OpenAI's clients do."""
    calls, content, finish = {}, "", None
    first_of = {}
    for chunk in stream:
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        delta = choice.delta
        content += delta.content or ""
        for d in delta.tool_calls or []:
            if d.index not in calls:
                # A call's first delta carries its id, type and name.
                assert d.id and d.id.startswith("call_") and d.type == "function"
                assert d.function.name
                calls[d.index] = {"name": d.function.name, "arguments": ""}
                first_of[d.index] = True
            else:
                assert d.id is None and not d.function.name
            calls[d.index]["arguments"] += d.function.arguments or ""
        finish = choice.finish_reason or finish
    return [calls[i] for i in sorted(calls)], content, finish


@pytest.mark.parametrize("name", ["get_weather", "search_books", "create_event"])
def test_streamed_tool_call_deltas_reassemble_to_the_non_streamed_call(client, model, name):
    kwargs = dict(model=model, messages=user(PROMPTS[name]), tools=TOOLS, temperature=0,
                  max_tokens=300, tool_choice={"type": "function", "function": {"name": name}})
    full = client.chat.completions.create(**kwargs).choices[0].message
    calls, content, finish = assemble(client.chat.completions.create(stream=True, **kwargs))
    assert finish == "tool_calls"
    assert content == ""
    assert calls == [{"name": c.function.name, "arguments": c.function.arguments}
                     for c in full.tool_calls]


def test_required_stream_matches_non_stream(client, model):
    kwargs = dict(model=model, messages=user(PROMPTS["add"]), tools=TOOLS, temperature=0,
                  max_tokens=600, tool_choice="required")
    full = client.chat.completions.create(**kwargs).choices[0].message
    calls, _, finish = assemble(client.chat.completions.create(stream=True, **kwargs))
    assert finish == "tool_calls"
    assert calls == [{"name": c.function.name, "arguments": c.function.arguments}
                     for c in full.tool_calls]


def test_round_trip_call_result_answer(client, model):
    messages = user("What is the weather like in Paris today?")
    first = client.chat.completions.create(
        model=model, messages=messages, tools=TOOLS, temperature=0, max_tokens=300,
        tool_choice={"type": "function", "function": {"name": "get_weather"}})
    call = first.choices[0].message.tool_calls[0]
    messages.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": call.id, "type": "function",
         "function": {"name": call.function.name, "arguments": call.function.arguments}}]})
    messages.append({"role": "tool", "tool_call_id": call.id,
                     "content": json.dumps({"temperature": 18, "sky": "sunny"})})
    final = client.chat.completions.create(model=model, messages=messages, tools=TOOLS,
                                           tool_choice="none", temperature=0, max_tokens=24)
    choice = final.choices[0]
    assert choice.message.tool_calls is None
    assert isinstance(choice.message.content, str) and choice.message.content
    assert choice.finish_reason in ("stop", "length")
    # The tool result and the earlier call are in the prompt the template rendered.
    again = client.chat.completions.create(model=model, messages=messages, temperature=0,
                                           max_tokens=1)
    alone = client.chat.completions.create(model=model, messages=messages[:1], temperature=0,
                                           max_tokens=1)
    # The call's JSON and the result add their tokens (the template does not drop them).
    assert again.usage.prompt_tokens >= alone.usage.prompt_tokens + 20


def test_tokenize_counts_the_prompt_a_chat_completion_sends(model_server):
    server = model_server
    # Tool calls and results are rewritten for the template and the tools described, the same
    # way on both routes: /tokenize's count is the chat completion's prompt_tokens.
    messages = user("What is the weather like in Paris today?") + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather",
                          "arguments": json.dumps({"city": "Paris", "unit": "celsius"})}}]},
        {"role": "tool", "tool_call_id": "call_1",
         "content": json.dumps({"temperature": 18, "sky": "sunny"})}]
    counts = {}
    for name, extra in [("history", {}), ("tools", {"tools": TOOLS}),
                        ("tools_none", {"tools": TOOLS, "tool_choice": "none"})]:
        tok = server.post("/v1/tokenize", {"messages": messages, **extra})
        assert tok.status_code == 200, (name, tok.text)
        chat = server.post("/v1/chat/completions",
                           {"model": "default", "messages": messages, "max_tokens": 1,
                            "temperature": 0, **extra})
        assert chat.status_code == 200, (name, chat.text)
        assert tok.json()["count"] == chat.json()["usage"]["prompt_tokens"], name
        counts[name] = tok.json()["count"]
    # Offered tools are described in the prompt; tool_choice "none" leaves them out.
    assert counts["tools"] > counts["history"] + 50
    assert counts["tools_none"] == counts["history"]
    # What the chat route refuses, /tokenize refuses too.
    for body in [{"messages": [{"role": "robot", "content": "hi"}]},
                 {"messages": []},
                 {"messages": user("hi"), "tools": {"type": "function"}},
                 {"prompt": "hi", "tools": TOOLS}]:
        r = server.post("/v1/tokenize", body)
        assert r.status_code == 400, (body, r.text)
        assert r.json()["error"]["message"]


def test_auto_tool_choice_answers_with_text_or_valid_calls(client, model):
    for prompt in (PROMPTS["add"], "Tell me a joke."):
        r = client.chat.completions.create(model=model, messages=user(prompt), tools=TOOLS,
                                           temperature=0, max_tokens=64)
        message = r.choices[0].message
        if message.tool_calls:
            assert r.choices[0].finish_reason == "tool_calls"
            for call in message.tool_calls:
                json.loads(call.function.arguments)
        else:
            assert isinstance(message.content, str)


def test_bad_tool_requests_are_400(server):
    chat = "/v1/chat/completions"
    msgs = user("hi")
    for body in [
        {"messages": msgs, "tools": {"type": "function"}},
        {"messages": msgs, "tools": [{"type": "function", "function": {"name": "bad name"}}]},
        {"messages": msgs, "tools": TOOLS,
         "tool_choice": {"type": "function", "function": {"name": "nope"}}},
        {"messages": msgs, "tool_choice": "required"},
        {"messages": msgs, "tools": TOOLS, "tool_choice": "sometimes"},
        {"messages": msgs, "tools": [tool("f", "", {"type": "object", "unknownKeyword": 1})],
         "tool_choice": "required"},
        {"messages": [{"role": "assistant", "tool_calls": [{"function": {}}]}]},
    ]:
        r = server.post(chat, body)
        assert r.status_code == 400, (body, r.text)
        assert r.json()["error"]["message"]


def test_forced_tool_choice_over_the_state_cap_is_400_every_time(server):
    # A forced call whose automaton is over the grammar state cap: a 400 naming the problem
    # from the first request on (streamed or not), never an abort once the request runs.
    # (a|b)*a(a|b){n}: a DFA of 2^n states. Values of n no other test uses, so no compiled
    # grammar is cached.
    def body(n, **extra):
        params = {"type": "object",
                  "properties": {"s": {"type": "string", "pattern": f"(a|b)*a(a|b){{{n}}}"}},
                  "required": ["s"]}
        return {"messages": user("hi"), "tools": [tool("f", "", params)],
                "tool_choice": "required", "max_tokens": 8, **extra}
    for request in [body(21), body(21), body(22, stream=True),
                    body(23, tool_choice={"type": "function", "function": {"name": "f"}})]:
        r = server.post("/v1/chat/completions", request)
        assert r.status_code == 400, (request, r.text)
        message = r.json()["error"]["message"]
        assert "tool_choice" in message and "exceeds" in message, message
