"""Constrained decoding on the real model through /generate and the OpenAI API: every output
that finishes with `stop` fully matches its regex / validates against its JSON schema / is in
its EBNF language."""

import json
import re

import jsonschema
import pytest

REGEXES = [
    (r"\d{3}-\d{4}", "Phone number: "),
    (r"(yes|no)\.", "Is water wet? Answer: "),
    (r"[A-Z][a-z]{2,8}", "A city in France: "),
    (r"-?\d+(\.\d{1,2})?", "The temperature today is "),
    (r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun)day", "The first day of the week is "),
    (r"[a-z]+@[a-z]+\.(com|org)", "Contact email: "),
]

SCHEMAS = [
    {"type": "object",
     "properties": {"name": {"type": "string", "maxLength": 20},
                    "age": {"type": "integer", "minimum": 0, "maximum": 120}},
     "required": ["name", "age"]},
    {"type": "object",
     "properties": {"city": {"type": "string", "enum": ["Paris", "Rome", "Oslo"]},
                    "population": {"type": "integer"}},
     "required": ["city", "population"]},
    {"type": "object",
     "properties": {"tags": {"type": "array", "items": {"type": "string", "maxLength": 10},
                             "minItems": 1, "maxItems": 3},
                    "done": {"type": "boolean"}},
     "required": ["tags", "done"]},
    {"type": "object",
     "properties": {"id": {"type": "string", "format": "uuid"},
                    "score": {"type": "number"},
                    "note": {"anyOf": [{"type": "string", "maxLength": 12}, {"type": "null"}]}},
     "required": ["id", "score", "note"]},
]


@pytest.mark.parametrize("temperature", [0.0, 0.8])
@pytest.mark.parametrize("pattern,prompt", REGEXES)
def test_regex_outputs_match(server, pattern, prompt, temperature):
    r = server.post("/generate", {"text": prompt, "sampling_params": {
        "regex": pattern, "max_new_tokens": 32, "temperature": temperature, "sampling_seed": 5}})
    assert r.status_code == 200, r.text
    out = r.json()
    if out["meta_info"]["finish_reason"]["type"] == "stop":
        assert re.fullmatch(pattern, out["text"]), (pattern, out["text"])
    else:  # a length cut is a valid prefix
        assert out["meta_info"]["finish_reason"]["type"] == "length"


@pytest.mark.parametrize("temperature", [0.0, 0.8])
@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_json_schema_outputs_validate(server, index, temperature):
    schema = SCHEMAS[index]
    r = server.post("/generate", {"text": "Output one JSON record: ", "sampling_params": {
        "json_schema": json.dumps(schema), "max_new_tokens": 96, "temperature": temperature,
        "sampling_seed": 3}})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["meta_info"]["finish_reason"]["type"] in ("stop", "length")
    if out["meta_info"]["finish_reason"]["type"] == "stop":
        jsonschema.validate(json.loads(out["text"]), schema)


def test_ebnf_output_is_in_the_language(server):
    grammar = 'root ::= answer "."\nanswer ::= "yes" | "no" | "maybe"'
    r = server.post("/generate", {"text": "Is the sky blue? Answer: ", "sampling_params": {
        "ebnf": grammar, "max_new_tokens": 8, "temperature": 0}})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["meta_info"]["finish_reason"]["type"] == "stop"
    assert out["text"] in ("yes.", "no.", "maybe."), out["text"]


def test_openai_response_format_json_schema(server):
    schema = SCHEMAS[0]  # every field bounded: the output must finish within max_tokens
    r = server.post("/v1/chat/completions", {
        "model": "default", "messages": [{"role": "user", "content": "Describe a person."}],
        "max_tokens": 64, "temperature": 0,
        "response_format": {"type": "json_schema",
                            "json_schema": {"name": "city", "schema": schema}}})
    assert r.status_code == 200, r.text
    choice = r.json()["choices"][0]
    assert choice["finish_reason"] == "stop", choice
    jsonschema.validate(json.loads(choice["message"]["content"]), schema)


def test_bad_grammars_are_400(server):
    for sp in ({"regex": "a(b"}, {"json_schema": "{not json"},
               {"json_schema": json.dumps({"type": "object", "frobnicate": 1})},
               {"ebnf": "root ::= undefined_rule"}, {"regex": "a", "ebnf": 'root ::= "a"'}):
        r = server.post("/generate", {"text": "x", "sampling_params": sp})
        assert r.status_code == 400, (sp, r.text)
        assert "error" in r.json() and r.json()["error"]["message"], sp
    assert server.post("/generate", {"text": "ok", "sampling_params": {"max_new_tokens": 1}}).ok


def test_grammar_over_the_state_cap_is_400_from_the_first_request(server):
    # (a|b)*a(a|b){n} has a DFA of 2^n states, over the cap; n values no other test uses, so
    # the first request compiles it (and fails) while it waits, and later ones hit the cache.
    # Both answers are a 400 naming the cap, on /generate and on the OpenAI routes.
    for n in (24, 24, 25):
        r = server.post("/generate", {"text": "x", "sampling_params": {
            "regex": f"(a|b)*a(a|b){{{n}}}", "max_new_tokens": 4}})
        assert r.status_code == 400, (n, r.text)
        assert "states" in r.json()["error"]["message"], r.text
    r = server.post("/v1/completions", {"model": "default", "prompt": "x", "max_tokens": 4,
                                        "regex": "(a|b)*a(a|b){26}"})
    assert r.status_code == 400, r.text
    assert "states" in r.json()["error"]["message"], r.text
