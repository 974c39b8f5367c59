"""Hybrid sliding-window KV memory (Gemma-3: 15 of 18 layers see only the last 512 tokens) on
the real model: a server whose windowed layers keep a small pool of their own
(--swa-full-tokens-ratio 0.25) gives the same greedy outputs as one with today's layout
(--disable-hybrid-swa-memory) for prompts far longer than the window, including conversations
continued after their windowed KV was released; it holds more prefix tokens in the same KV
memory and reports both pools in server info and /metrics; bad flags are refused at start-up."""

import random
import subprocess

import pytest

from conftest import Server, _binary, _model

WORDS = ("time year people way day man thing woman life child world school state family "
         "student group country problem hand part place case week company system program "
         "question work government number night point home water room mother area money "
         "story fact month lot right study book eye job word business issue side kind head "
         "house service friend father power hour game line end member law car city community "
         "name president team minute idea kid body information back parent face others level "
         "office door health person art war history party result change morning reason "
         "research girl guy moment air teacher force education").split()
KV_MB = "128"


def document(i, n_words):
    rng = random.Random(1000 + i)
    sentences = []
    while sum(len(s.split()) for s in sentences) < n_words:
        sentences.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))) + ".")
    return f"Document {i}.\n" + " ".join(sentences) + "\nSummary of the document:"


@pytest.fixture(scope="module")
def servers():
    one = Server(extra_args=["--kv-cache-memory-mb", KV_MB, "--disable-hybrid-swa-memory"])
    # Smaller prefill chunks keep the windowed working set of a long prompt near two windows.
    swa = Server(extra_args=["--kv-cache-memory-mb", KV_MB, "--swa-full-tokens-ratio", "0.25",
                             "--chunked-prefill-size", "512"])
    yield one, swa
    assert one.stop() == 0, one.log_tail()
    assert swa.stop() == 0, swa.log_tail()


def generate(srv, prompt, max_new_tokens=8):
    body = {"input_ids": prompt} if isinstance(prompt, list) else {"text": prompt}
    body["sampling_params"] = {"temperature": 0, "max_new_tokens": max_new_tokens}
    r = srv.post("/generate", body, timeout=600)
    assert r.status_code == 200, r.text
    return r.json()


def tokenize(srv, text, add_special=True):
    r = srv.post("/tokenize", {"prompt": text, "add_special_tokens": add_special})
    assert r.status_code == 200, r.text
    return r.json()["tokens"]


def internal(srv):
    return srv.server_info()["internal_states"][0]


def test_layouts_and_memory_accounting(servers):
    one, swa = servers
    one_info, swa_info = one.server_info(), swa.server_info()
    assert one_info["disable_hybrid_swa_memory"] is True
    assert one_info["swa_max_total_num_tokens"] == 0
    assert swa_info["disable_hybrid_swa_memory"] is False
    assert swa_info["sliding_window_size"] == 512
    # 128 MiB at 1 KiB per layer and token (F16 K and V of one 256-wide KV head): one pool
    # holds 128 Mi / 18 Ki tokens; the hybrid one F full-layer tokens and r F windowed ones
    # with F (3 + 15 r) layer-tokens, r = 0.25.
    assert one_info["max_total_num_tokens"] == 128 * 1024 // 18
    full = swa_info["max_total_num_tokens"]
    assert full == int(128 * 1024 / (3 + 15 * 0.25))
    assert swa_info["swa_max_total_num_tokens"] == int(0.25 * full)
    assert swa_info["swa_full_tokens_ratio"] == 0.25


def test_long_prompts_give_the_same_outputs_and_continuations_hit(servers):
    one, swa = servers
    prompts = [document(i, 1900) for i in range(10)]
    outputs = []
    for p in prompts:
        want = generate(one, p)
        got = generate(swa, p)
        assert want["meta_info"]["prompt_tokens"] > 2000
        assert got["output_ids"] == want["output_ids"], p[:60]
        outputs.append(got)
    # Ten documents of 2,000+ tokens: far more than the one-pool layout can keep, and more
    # windowed KV than the hybrid pool holds, so most of it was released (tombstones).
    state = internal(swa)
    assert state["tree_tokens"] > 2 * internal(one)["pool_size"]
    assert state["swa_tombstone_tokens"] > 5000
    assert state["swa_pool_size"] == swa.server_info()["swa_max_total_num_tokens"]
    # Each conversation continues: the same outputs, and the whole earlier turn (prompt and
    # the outputs with KV) comes from the tree although most of its windowed KV was released.
    question = tokenize(swa, "\nWhat is the main topic?", add_special=False)
    hits = one_hits = 0
    for age, (p, out) in enumerate(zip(reversed(prompts), reversed(outputs))):
        follow = tokenize(swa, p) + out["output_ids"] + question
        want = generate(one, follow)
        got = generate(swa, follow)
        assert got["output_ids"] == want["output_ids"]
        earlier = out["meta_info"]["prompt_tokens"] + len(out["output_ids"]) - 1
        if age < 5:  # the newest conversations are all still in the tree
            assert got["meta_info"]["cached_tokens"] == earlier, age
        hits += got["meta_info"]["cached_tokens"] == earlier
        one_hits += want["meta_info"]["cached_tokens"] == earlier
    assert hits >= 5
    assert hits > one_hits  # one pool of the same memory keeps fewer
    metrics = swa.get("/metrics").text
    for name in ("swa_pool_size_tokens", "swa_pool_free_tokens", "swa_tree_tokens"):
        assert f"radixlm:{name}" in metrics, name


def test_bad_swa_flags_are_refused_at_startup():
    for args in (["--swa-full-tokens-ratio", "0"], ["--swa-full-tokens-ratio", "1.5"],
                 ["--swa-full-tokens-ratio", "-0.5"]):
        p = subprocess.run([_binary(), "serve", "--model-path", _model(), "--port", "0", *args],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode != 0, args
        assert "--swa-full-tokens-ratio" in p.stderr, p.stderr
