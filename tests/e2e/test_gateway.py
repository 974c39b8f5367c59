"""radixlm replicas behind SGLang's model gateway (`smg launch`), with real clients.

Two `radixlm serve --threads 1` replicas and a gateway in front of them on 127.0.0.1: the
gateway registers them as SGLang workers under the served model name, routes /generate and the
OpenAI routes (model "default" through `--model-alias default=NAME`), polls /v1/loads, fans
/flush_cache and (RL control plane) /abort_request out to every replica, sends a request whose
prefix a replica holds to that replica (cache_aware) and alternates under round_robin. Skipped
only when the smg binary cannot run on this machine.
"""

import json
import pathlib
import subprocess
import threading
import time

import openai
import pytest
import requests

from conftest import Server, _binary, _model
from gateway import Gateway, smg_binary

SMG, SMG_MISSING = smg_binary()
pytestmark = pytest.mark.skipif(SMG is None, reason=SMG_MISSING or "")

# A few hundred tokens each, distinct from the first word on: the gateway's approximate tree
# (characters) and the replicas' radix trees (tokens) both see one prefix per topic.
TOPICS = ["the history of lighthouses on rocky coasts", "how bees build hexagonal combs",
          "the rules of the game of go"]


def system_prompt(topic):
    return (f"You are an expert on {topic}. " + f"Answer questions about {topic} briefly and "
            "precisely, citing well known facts, dates and people where they help. " * 6)


@pytest.fixture(scope="module")
def replicas():
    started = []
    try:
        for _ in range(2):
            started.append(Server(extra_args=["--threads", "1"]))
        yield started
    finally:
        for s in started:
            s.stop()


@pytest.fixture(scope="module")
def served_name(replicas):
    return replicas[0].get("/get_model_info").json()["served_model_name"]


@pytest.fixture(scope="module")
def gateway(replicas, served_name):
    # The warm-up slices (a share of misses, and one hit in 8, sent to a worker whose index is
    # still thin) are off, so every routing decision here is cache affinity.
    g = Gateway([r.url for r in replicas], policy="cache_aware",
                extra_args=["--model-alias", f"default={served_name}", "--enable-rl",
                            "--load-monitor-interval", "1", "--worker-warmup-secs", "0",
                            "--worker-warmup-divert-every", "0"])
    yield g
    g.stop()


def flush_all(replicas):
    for r in replicas:
        assert r.post("/flush_cache").status_code == 200


def counters(replica):
    internal = replica.server_info()["internal_states"][0]
    return {k: internal[k] for k in ("cache_hit_tokens", "prefill_tokens", "finished_requests")}


def generate(url, text, max_new_tokens=8):
    r = requests.post(url + "/generate", timeout=300, json={
        "text": text, "sampling_params": {"max_new_tokens": max_new_tokens, "temperature": 0}})
    assert r.status_code == 200, r.text
    return r.json()


def test_replicas_register_under_the_short_served_name(gateway, replicas, served_name):
    assert served_name == pathlib.Path(
        replicas[0].get("/get_model_info").json()["model_path"]).name.removesuffix(".gguf")
    workers = gateway.workers()
    assert sorted(w["url"] for w in workers) == sorted(r.url for r in replicas)
    for w in workers:
        assert w["model_id"] == served_name
        assert w["runtime_type"] == "sglang"  # detected from /server_info
        assert w["labels"]["served_model_name"] == served_name
    models = requests.get(gateway.url + "/v1/models", timeout=30).json()["data"]
    assert [m["id"] for m in models] == [served_name]


def test_gateway_polls_the_replicas_loads(gateway, replicas):
    pool = replicas[0].server_info()["pool_size"]
    deadline = time.time() + 60
    loads = []
    while time.time() < deadline:
        loads = requests.get(gateway.url + "/get_loads", timeout=30).json()["loads"]
        if len(loads) == 2:
            break
        time.sleep(0.5)
    assert len(loads) == 2, loads
    assert sorted(entry["worker"] for entry in loads) == sorted(r.url for r in replicas)
    for entry in loads:
        assert entry["max_total_num_tokens"] == pool
        assert 0.0 <= entry["token_usage"] <= 1.0
        assert entry["num_waiting_reqs"] == 0


def test_generate_through_the_gateway_matches_a_replica(gateway, replicas):
    prompt = "The capital of France is"
    direct = generate(replicas[0].url, prompt)
    routed = generate(gateway.url, prompt)
    assert routed["text"] == direct["text"] and routed["output_ids"] == direct["output_ids"]


@pytest.mark.parametrize("model", ["default", "served"])
def test_openai_routes_through_the_gateway(gateway, replicas, served_name, model):
    name = served_name if model == "served" else "default"
    via = openai.OpenAI(base_url=gateway.url + "/v1", api_key="unused", max_retries=0,
                        timeout=300)
    direct = openai.OpenAI(base_url=replicas[1].url + "/v1", api_key="unused", max_retries=0,
                           timeout=300)
    kwargs = dict(prompt="My favourite food is", max_tokens=8, temperature=0)
    expected = direct.completions.create(model=name, **kwargs).choices[0].text
    streamed = "".join(chunk.choices[0].text for chunk in
                       via.completions.create(model=name, stream=True, **kwargs) if chunk.choices)
    assert streamed == expected

    messages = [{"role": "user", "content": "Name three colors."}]
    expected_chat = direct.chat.completions.create(model=name, messages=messages, max_tokens=12,
                                                   temperature=0).choices[0].message.content
    chat = via.chat.completions.create(model=name, messages=messages, max_tokens=12,
                                       temperature=0)
    assert chat.choices[0].message.content == expected_chat
    stream = via.chat.completions.create(model=name, messages=messages, max_tokens=12,
                                         temperature=0, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == expected_chat


def test_unknown_model_is_refused_by_the_gateway(gateway):
    r = requests.post(gateway.url + "/v1/completions", timeout=60,
                      json={"model": "no-such-model", "prompt": "hi", "max_tokens": 1})
    assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"


def test_cache_aware_sends_a_shared_prefix_to_the_replica_holding_it(gateway, replicas):
    flush_all(replicas)
    first = {}
    for topic in TOPICS:
        before = [counters(r) for r in replicas]
        out = generate(gateway.url, system_prompt(topic) + " Question: when did it start?")
        after = [counters(r) for r in replicas]
        served = [i for i in range(2)
                  if after[i]["finished_requests"] > before[i]["finished_requests"]]
        assert len(served) == 1
        first[topic] = (served[0], out["meta_info"]["prompt_tokens"])
    for topic in TOPICS:
        holder, prompt_tokens = first[topic]
        before = [counters(r) for r in replicas]
        out = generate(gateway.url, system_prompt(topic) + " Question: who is famous for it?")
        after = [counters(r) for r in replicas]
        assert after[holder]["finished_requests"] == before[holder]["finished_requests"] + 1, (
            topic, holder)
        # The system prompt came from the holder's radix tree, not from a fresh prefill.
        hit = after[holder]["cache_hit_tokens"] - before[holder]["cache_hit_tokens"]
        assert out["meta_info"]["cached_tokens"] == hit
        assert hit >= prompt_tokens - 12, (topic, hit, prompt_tokens)


def test_round_robin_alternates_between_replicas(replicas, served_name):
    g = Gateway([r.url for r in replicas], policy="round_robin")
    try:
        before = [counters(r)["finished_requests"] for r in replicas]
        for i in range(4):
            generate(g.url, f"Count to {i + 3}:", max_new_tokens=2)
        after = [counters(r)["finished_requests"] for r in replicas]
        assert [a - b for a, b in zip(after, before)] == [2, 2]
    finally:
        g.stop()


def test_flush_cache_fans_out_to_every_replica(gateway, replicas):
    for r in replicas:
        generate(r.url, "Fill the tree with something: " + r.url, max_new_tokens=1)
        assert r.server_info()["tree_tokens"] > 0
    r = requests.post(gateway.url + "/flush_cache", timeout=60)
    assert r.status_code == 200 and r.json()["workers_flushed"] == 2, r.text
    for replica in replicas:
        assert replica.server_info()["tree_tokens"] == 0


def test_abort_request_fans_out_through_the_rl_control_plane(gateway, replicas):
    """--enable-rl's fan-out: POST /v1/rl/engine/abort_request reaches every replica."""
    events, started = [], threading.Event()

    def stream():
        with requests.post(gateway.url + "/generate", stream=True, timeout=300, json={
                "text": "A very long story:", "stream": True,
                "sampling_params": {"max_new_tokens": 4000, "ignore_eos": True}}) as r:
            assert r.status_code == 200
            for line in r.iter_lines():
                payload = line.decode().removeprefix("data: ")
                if payload and payload != "[DONE]":
                    events.append(json.loads(payload))
                    started.set()

    t = threading.Thread(target=stream)
    t.start()
    assert started.wait(120)
    r = requests.post(gateway.url + "/v1/rl/engine/abort_request?selector=engine%3Dsglang",
                      json={"abort_all": True}, timeout=60)
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["total"] == 2 and report["succeeded"] == 2
    assert sum(res["body"]["aborted"] for res in report["results"].values()) == 1
    t.join(timeout=120)
    assert not t.is_alive()
    assert events[-1]["meta_info"]["finish_reason"]["type"] == "abort"
    assert events[-1]["meta_info"]["completion_tokens"] < 4000


def test_a_killed_replica_fails_over_without_hanging():
    """A replica killed under the gateway: requests go on to the survivor, none hangs."""
    a, b = Server(extra_args=["--threads", "1"]), Server(extra_args=["--threads", "1"])
    g = None
    try:
        g = Gateway([a.url, b.url], policy="round_robin")
        b.proc.kill()
        b.proc.wait()
        for i in range(4):
            out = generate(g.url, f"Say {i}:", max_new_tokens=2)  # client timeout: 300 s
            assert out["meta_info"]["completion_tokens"] == 2
    finally:
        if g is not None:
            g.stop()
        a.stop()
        b.stop()


@pytest.mark.parametrize("args,expected", [
    (["--disaggregation-mode", "decode", "--disaggregation-transfer-backend", "mooncake"],
     "ucx"),
    (["--disaggregation-bootstrap-port", "8998"], "--disaggregation-mode prefill or decode"),
    (["--disaggregation-mode", "prefill", "--disable-radix-cache"], "radix cache"),
    (["--disaggregation-mode", "prefill", "--disaggregation-bootstrap-port", "99999"],
     "port number"),
])
def test_bad_disaggregation_flags_are_refused_with_a_clear_error(args, expected):
    """(docs/disaggregation.md; test_pd.py serves a real pair.)"""
    out = subprocess.run([_binary(), "serve", "--model-path", _model(), "--port", "0", *args],
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 1
    assert "disaggregation" in out.stderr or "radix" in out.stderr, out.stderr
    # A build without UCX says so first, for every PD flag set.
    assert expected in out.stderr or "built without UCX" in out.stderr, out.stderr


def test_gateway_log_has_no_worker_errors(gateway):
    """Registration and polling went through: smg logged no failure to read a replica."""
    text = gateway.log_tail(400)
    for marker in ("Failed to fetch metadata", "Failed to parse"):
        assert marker not in text, text
