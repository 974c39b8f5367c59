"""`radixlm bench` (the serving benchmark client) against the real server, all three backends."""

import json
import subprocess

from conftest import _binary


def run_bench(server, tmp_path, *args):
    out = tmp_path / "bench.jsonl"
    proc = subprocess.run(
        [_binary(), "bench", "--base-url", server.url, "--output-file", str(out), *args],
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Successful requests:" in proc.stdout
    lines = out.read_text().splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


def test_shared_prefix_workload_hits_the_radix_cache(server, tmp_path):
    r = run_bench(server, tmp_path, "--backend", "radixlm", "--flush-cache",
                  "--dataset-name", "generated-shared-prefix", "--gsp-num-groups", "2",
                  "--gsp-prompts-per-group", "3", "--gsp-system-prompt-len", "64",
                  "--gsp-question-len", "8", "--gsp-output-len", "4")
    assert r["completed"] == 6 and r["failed"] == 0, r["errors"]
    assert r["total_output_tokens"] == 6 * 4  # ignore_eos: every output has its full length
    # Each group's later prompts reuse at least part of its 64-token system prompt.
    assert r["total_cached_tokens"] >= 64
    assert r["ttft"]["mean_ms"] > 0 and r["e2e_latency"]["p99_ms"] >= r["e2e_latency"]["median_ms"]
    assert r["gsp"]["num_groups"] == 2


def test_openai_backends_with_poisson_arrivals(server, tmp_path):
    for backend in ("openai", "openai-chat"):
        r = run_bench(server, tmp_path, "--backend", backend,
                      "--dataset-name", "random", "--num-prompts", "4", "--random-input-len",
                      "16", "--random-output-len", "5", "--request-rate", "20",
                      "--max-concurrency", "2", "--seed", "3")
        (tmp_path / "bench.jsonl").unlink()
        assert r["completed"] == 4 and r["failed"] == 0, (backend, r["errors"])
        assert r["total_output_tokens"] == 4 * 5, backend
        assert r["model"] != "", backend
        assert r["max_concurrency"] == 2


def test_bad_arguments_and_unreachable_server(server, tmp_path):
    proc = subprocess.run([_binary(), "bench", "--base-url", server.url, "--backend", "nope"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "--backend" in proc.stderr
    proc = subprocess.run([_binary(), "bench", "--base-url", "http://127.0.0.1:9",
                           "--num-prompts", "1", "--tokenizer", "none"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "connect" in proc.stderr
