"""Multi-LoRA serving throughput: the same closed-loop load (CONCURRENCY requests in flight,
greedy, fixed output length, ignore_eos) on one server, once on the base model alone and once
with every request under one of N adapters (request i under adapter i mod N, so a decode batch
holds all of them), with output tokens per second of each and their ratio.

    radixlm serve --model-path BASE.gguf --port 30000 --threads 2 \\
        --lora-paths a0=/tmp/a0.gguf ... a7=/tmp/a7.gguf --max-loras-per-batch 8
    python bench/bench_lora.py --url http://127.0.0.1:30000 --adapters a0 a1 ... a7

Adapters for a real base come from tests/e2e/synth_lora.py (rank 8 by default).
"""

import argparse
import concurrent.futures
import time

import requests


def run(url, names, concurrency, n_requests, prompt_len, output_len):
    def one(i):
        body = {"text": f"Request {i}: " + "the quick brown fox jumps over the lazy dog " *
                (prompt_len // 10),
                "sampling_params": {"temperature": 0, "max_new_tokens": output_len,
                                    "ignore_eos": True}}
        if names:
            body["lora_path"] = names[i % len(names)]
        r = requests.post(url + "/generate", json=body, timeout=600)
        r.raise_for_status()
        return r.json()["meta_info"]["completion_tokens"]

    requests.post(url + "/flush_cache", timeout=60)
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        tokens = sum(pool.map(one, range(n_requests)))
    elapsed = time.perf_counter() - start
    return tokens, elapsed


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", default="http://127.0.0.1:30000")
    p.add_argument("--adapters", nargs="+", required=True)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--requests", type=int, default=32)
    p.add_argument("--prompt-len", type=int, default=64, help="about this many words")
    p.add_argument("--output-len", type=int, default=64)
    a = p.parse_args()
    run(a.url, a.adapters, a.concurrency, a.concurrency, 16, 4)  # warm-up
    rows = []
    for label, names in (("base", []), (f"{len(a.adapters)} adapters", a.adapters)):
        tokens, elapsed = run(a.url, names, a.concurrency, a.requests, a.prompt_len, a.output_len)
        rows.append((label, tokens, elapsed, tokens / elapsed))
        print(f"{label}: {tokens} output tokens in {elapsed:.1f} s = {tokens / elapsed:.1f} tok/s",
              flush=True)
    print(f"ratio (adapters / base): {rows[1][3] / rows[0][3]:.3f}")


if __name__ == "__main__":
    main()
