"""Structural tags with the real default model: free text, and every span the model opens with a
trigger is constrained to its structure (begin, JSON matching the schema, end); tool_choice
"auto" constrains a call once the model opens one. The tests assert validity of what the model
wrote, never its exact text."""

import copy
import json

import jsonschema
import openai
import pytest

from test_tools import SCHEMAS, TOOLS, user

WEATHER = {"type": "object",
           "properties": {"city": {"type": "string", "maxLength": 20},
                          "celsius": {"type": "integer", "minimum": -50, "maximum": 60}},
           "required": ["city", "celsius"]}
# The model is shown `"temp"`; the schema asks for `"celsius"`: only the constraint writes it.
FEW_SHOT = ("Weather log.\n"
            "Paris: {\"report\": {\"city\": \"Paris\", \"temp\": 18}}\n"
            "Oslo: {\"report\": {\"city\": \"Oslo\", \"temp\": 4}}\n"
            "Rome: {\"report\": {\"city\": \"Rome\", \"temp\": 24}}\n"
            "Madrid:")
LEGACY_TAG = {"type": "structural_tag",
              "structures": [{"begin": "{\"report\": ", "schema": WEATHER, "end": "}"}],
              "triggers": ["{"]}
FORMAT_TAG = {"type": "structural_tag",
              "format": {"type": "triggered_tags", "triggers": ["{"],
                         "tags": [{"type": "tag", "begin": "{\"report\": ",
                                   "content": {"type": "json_schema", "json_schema": WEATHER},
                                   "end": "}"}],
                         "at_least_one": False, "stop_after_first": False}}


def tagged_spans(text, trigger, begin, end, cut_allowed):
    """The JSON values of the spans the trigger opens. Every trigger in free text must open a
    complete span (the last one may be cut short only when the output hit its token limit)."""
    values, pos = [], 0
    while (i := text.find(trigger, pos)) >= 0:
        if cut_allowed and begin.startswith(text[i:]):
            break
        assert text.startswith(begin, i), text[i:]
        try:
            value, j = json.JSONDecoder().raw_decode(text, i + len(begin))
        except json.JSONDecodeError:
            assert cut_allowed, text[i:]
            break
        if not text.startswith(end, j):
            assert cut_allowed and end.startswith(text[j:]), text[i:]
            break
        values.append(value)
        pos = j + len(end)
    return values


@pytest.mark.parametrize("tag", [LEGACY_TAG, FORMAT_TAG], ids=["structures", "format"])
def test_generate_structural_tag_spans_validate(server, tag):
    spans = 0
    for temperature, seed in [(0.0, 1), (0.8, 2), (0.8, 3)]:
        r = server.post("/generate", {"text": FEW_SHOT, "sampling_params": {
            "max_new_tokens": 60, "temperature": temperature, "sampling_seed": seed,
            "structural_tag": json.dumps(tag)}})
        assert r.status_code == 200, r.text
        out = r.json()
        cut = out["meta_info"]["finish_reason"]["type"] == "length"
        values = tagged_spans(out["text"], "{", "{\"report\": ", "}", cut)
        for v in values:
            jsonschema.validate(v, WEATHER)
        if values:
            # Forced text inside a structure (the schema's keys) is jumped over.
            assert out["meta_info"]["jump_forward_tokens"] > 0, out
        spans += len(values)
    assert spans >= 1, "the model never opened a tagged span"


def test_chat_response_format_structural_tag_spans_validate(server):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0,
                           timeout=300)
    model = client.models.list().data[0].id
    spans = 0
    for temperature, seed in [(0.0, 1), (0.8, 2), (0.8, 3)]:
        r = client.chat.completions.create(
            model=model, messages=user("Continue this log with three more cities:\n" + FEW_SHOT),
            response_format=LEGACY_TAG, temperature=temperature, seed=seed, max_tokens=80)
        choice = r.choices[0]
        values = tagged_spans(choice.message.content, "{", "{\"report\": ", "}",
                              choice.finish_reason == "length")
        for v in values:
            jsonschema.validate(v, WEATHER)
        spans += len(values)
    assert spans >= 1, "the model never opened a tagged span"


def test_bad_structural_tags_are_400(server):
    bad_tags = [
        {"type": "structural_tag", "structures": [{"begin": "<a>", "schema": {}, "end": "x"}],
         "triggers": ["["]},
        {"type": "structural_tag", "triggers": ["<"]},
        {"type": "structural_tag", "format": {"type": "sequence", "elements": []}},
        {"type": "structural_tag", "structures": [
            {"begin": "<a>", "schema": {"type": "object", "bogusKeyword": 1}, "end": "x"}],
         "triggers": ["<"]},
    ]
    for tag in bad_tags:
        r = server.post("/generate", {"text": "a", "sampling_params": {
            "max_new_tokens": 4, "structural_tag": json.dumps(tag)}})
        assert r.status_code == 400, (tag, r.text)
        assert "structural_tag" in r.json()["error"]["message"]
        r = server.post("/v1/chat/completions",
                        {"messages": user("hi"), "max_tokens": 4, "response_format": tag})
        assert r.status_code == 400, (tag, r.text)
    r = server.post("/generate", {"text": "a", "sampling_params": {
        "max_new_tokens": 4, "structural_tag": json.dumps(LEGACY_TAG), "regex": "a+"}})
    assert r.status_code == 400 and "structural_tag" in r.json()["error"]["message"]


# The tools with get_weather's unit narrowed to "kelvin": the conversation below shows
# "celsius", so a call with "kelvin" is the constraint's doing, not the model's.
AUTO_TOOLS = copy.deepcopy(TOOLS)
AUTO_TOOLS[0]["function"]["parameters"]["properties"]["unit"]["enum"] = ["kelvin"]
AUTO_SCHEMAS = {**SCHEMAS, "get_weather": AUTO_TOOLS[0]["function"]["parameters"]}


# A conversation that shows the model two calls in the template's format (Gemma-3 has no tool
# syntax: radixlm writes the calls as JSON text), so that it writes a third.
def few_shot_calls():
    messages = []
    for i, city in enumerate(["Paris", "Oslo"]):
        messages.append({"role": "user", "content": f"What is the weather in {city}?"})
        call_id = f"call_{i}"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {
                "name": "get_weather",
                "arguments": json.dumps({"city": city, "unit": "celsius"})}}]})
        messages.append({"role": "tool", "tool_call_id": call_id,
                         "content": json.dumps({"temperature": 10 + i})})
        messages.append({"role": "assistant", "content": f"It is {10 + i} degrees in {city}."})
    messages.append({"role": "user", "content": "What is the weather in Rome?"})
    return messages


def test_auto_tool_calls_are_constrained_once_opened(server):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0,
                           timeout=300)
    model = client.models.list().data[0].id
    calls = 0
    for temperature, seed in [(0.0, 1), (0.8, 2), (0.8, 3), (0.8, 4)]:
        r = client.chat.completions.create(model=model, messages=few_shot_calls(),
                                           tools=AUTO_TOOLS, tool_choice="auto",
                                           temperature=temperature, seed=seed, max_tokens=120)
        choice = r.choices[0]
        for call in choice.message.tool_calls or []:
            assert call.function.name in AUTO_SCHEMAS
            jsonschema.validate(json.loads(call.function.arguments),
                                AUTO_SCHEMAS[call.function.name])
            calls += call.function.name == "get_weather"
        if choice.message.tool_calls:
            # Free text or more calls may follow a call, up to max_tokens.
            assert choice.finish_reason in ("tool_calls", "length")
        # A call opened after text stays text (the json format reads calls at the start
        # only), but it was constrained all the same: it is a valid call.
        content = choice.message.content or ""
        pos = 0
        while (i := content.find("{\"name\":", pos)) >= 0:
            try:
                obj, pos = json.JSONDecoder().raw_decode(content, i)
            except json.JSONDecodeError:
                assert choice.finish_reason == "length", content[i:]  # cut short
                break
            jsonschema.validate(obj["arguments"], AUTO_SCHEMAS[obj["name"]])
    assert calls >= 1, "the model never called get_weather"


def test_auto_without_parallel_calls_makes_at_most_one(server):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0,
                           timeout=300)
    model = client.models.list().data[0].id
    r = client.chat.completions.create(model=model, messages=few_shot_calls(), tools=AUTO_TOOLS,
                                       tool_choice="auto", parallel_tool_calls=False,
                                       temperature=0, max_tokens=120)
    choice = r.choices[0]
    assert len(choice.message.tool_calls or []) <= 1
    if choice.message.tool_calls:
        # The reply ends right after the call.
        assert choice.finish_reason == "tool_calls" and not choice.message.content


def test_auto_with_a_schema_over_the_automaton_cap_stays_unconstrained(server):
    # A parameter schema that lowers to a regex the grammar compiler then refuses (a string of
    # up to 5000 characters: a repetition bound over 1000): "auto" answers unconstrained, as
    # for a schema that does not lower at all, rather than failing with a 400 about a
    # structural_tag the request never sent.
    tools = copy.deepcopy(AUTO_TOOLS)
    tools[0]["function"]["parameters"]["properties"]["city"]["maxLength"] = 5000
    for _ in range(2):
        r = server.post("/v1/chat/completions",
                        {"messages": few_shot_calls(), "tools": tools, "tool_choice": "auto",
                         "temperature": 0, "max_tokens": 24})
        assert r.status_code == 200, r.text
        assert r.json()["choices"][0]["finish_reason"] in ("stop", "length", "tool_calls"), r.text
