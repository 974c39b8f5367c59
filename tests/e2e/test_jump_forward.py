"""Jump-forward on the real model (on by default): forced JSON keys cost no forward pass each,
outputs still validate, streamed text only grows, forced tokens carry no logprob, stop strings
inside forced text still stop."""

import json
import re

import jsonschema

from conftest import sse_events

SCHEMA = {
    "type": "object",
    "properties": {
        "customer_name": {"type": "string", "maxLength": 30},
        "shipping_city": {"type": "string", "maxLength": 20},
        "payment_method": {"enum": ["credit_card", "paypal", "cash"]},
        "express_delivery": {"type": "boolean"},
    },
    "required": ["customer_name", "shipping_city", "payment_method", "express_delivery"],
}
PROMPT = ("Extract the order as JSON.\nOrder: Alice Smith ordered a lamp, shipped to Oslo, "
          "paid with PayPal, express delivery.\nJSON: ")


def generate(server, **extra):
    body = {"text": PROMPT, "sampling_params": {
        "json_schema": json.dumps(SCHEMA), "max_new_tokens": 80, "temperature": 0}}
    body.update(extra)
    r = server.post("/generate", body)
    assert r.status_code == 200, r.text
    return r.json()


def test_forced_keys_save_forward_passes(server):
    out = generate(server)
    meta = out["meta_info"]
    assert meta["finish_reason"]["type"] == "stop", out
    jsonschema.validate(json.loads(out["text"]), SCHEMA)
    assert meta["jump_forward_tokens"] > 0
    assert meta["forward_passes_saved"] > 0
    assert meta["forward_passes"] < meta["completion_tokens"]
    info = server.server_info()
    assert info["disable_jump_forward"] is False
    assert info["internal_states"][0]["jump_forwards"] > 0


def test_streamed_text_only_grows_and_matches(server):
    full = generate(server)
    body = {"text": PROMPT, "stream": True, "sampling_params": {
        "json_schema": json.dumps(SCHEMA), "max_new_tokens": 80, "temperature": 0}}
    with server.post("/generate", body, stream=True) as r:
        assert r.status_code == 200
        events = sse_events(r)
    texts = [e["text"] for e in events]
    for earlier, later in zip(texts, texts[1:]):
        assert later.startswith(earlier)
    assert texts[-1] == full["text"]
    assert events[-1]["output_ids"] == full["output_ids"]


def test_forced_tokens_have_no_logprob(server):
    out = generate(server, return_logprob=True)
    entries = out["meta_info"]["output_token_logprobs"]
    assert len(entries) == out["meta_info"]["completion_tokens"] == len(out["output_ids"])
    assert [e[1] for e in entries] == out["output_ids"]
    assert sum(e[0] is None for e in entries) == out["meta_info"]["jump_forward_tokens"]


def test_regex_with_forced_text_and_stop_string(server):
    pattern = r"The answer is (yes|no), because [a-z ]{1,20}\."
    r = server.post("/generate", {"text": "Is the sky blue? ", "sampling_params": {
        "regex": pattern, "max_new_tokens": 40, "temperature": 0}})
    out = r.json()
    if out["meta_info"]["finish_reason"]["type"] == "stop":
        assert re.fullmatch(pattern, out["text"]), out["text"]
    assert out["meta_info"]["jump_forward_tokens"] > 0
    r = server.post("/generate", {"text": "Is the sky blue? ", "sampling_params": {
        "regex": pattern, "max_new_tokens": 40, "temperature": 0, "stop": ["because"]}})
    out = r.json()
    assert out["meta_info"]["finish_reason"] == {"type": "stop", "matched": "because"}, out
    assert re.fullmatch(r"The answer is (yes|no), ", out["text"]), out["text"]
