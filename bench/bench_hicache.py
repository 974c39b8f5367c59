#!/usr/bin/env python3
"""Disk tier of the KV cache (--enable-hierarchical-cache, file backend) vs RAM only.

Workload: N documents of about D tokens, each asked Q short questions, all questions in one
seeded random order, one request at a time, greedy. The KV pool holds about P documents
(--max-total-tokens = P * D * 1.1), so without the tier most documents are evicted before
their next question comes. Reported for each server: prefill tokens computed (from
/get_server_info), requests per second and the wall time; the tier's hicache stats; whether
every output equals the run without the tier. Then the tier's server is restarted with the same
directory and the first question of K stored documents is timed (TTFT: max_new_tokens 1)
against a cold server (a fresh, empty directory).

  .venv/bin/python bench/bench_hicache.py --bin build/apps/radixlm --model MODEL
  .venv/bin/python bench/bench_hicache.py --bin build/apps/radixlm --smoke   # a quick check
"""

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_server import Server  # noqa: E402

WORDS = ("time year people way day man thing woman life child world school state family "
         "student group country problem hand part place case week company system program "
         "question work government number night point home water room mother area money "
         "story fact month lot right study book eye job word business issue side kind head "
         "house service friend father power hour game line end member law car city").split()
QUESTIONS = ["What is the first word?", "Which word appears most often?",
             "Summarize the document in one sentence.", "Is the word 'city' in it?",
             "What is the last word?", "How long is the document?"]


def document(i, tokens):
    rng = random.Random(1000 + i)
    body = " ".join(rng.choice(WORDS) for _ in range(int(tokens * 0.95)))
    return f"Document {i}.\n{body}\n"


def generate(url, text, max_new_tokens):
    t = time.perf_counter()
    r = requests.post(url + "/generate", json={"text": text, "sampling_params": {
        "temperature": 0, "max_new_tokens": max_new_tokens}}, timeout=3600)
    r.raise_for_status()
    return r.json(), time.perf_counter() - t


def internal(url):
    r = requests.get(url + "/get_server_info", timeout=60)
    r.raise_for_status()
    return r.json()["internal_states"][0]


def run_workload(url, prompts, max_new_tokens):
    before = internal(url)
    t = time.perf_counter()
    texts = [generate(url, p, max_new_tokens)[0]["text"] for p in prompts]
    wall = time.perf_counter() - t
    after = internal(url)
    return {
        "prefill_tokens": after["prefill_tokens"] - before["prefill_tokens"],
        "requests_per_s": len(prompts) / wall,
        "wall_s": wall,
        "hicache": after.get("hicache", {}),
    }, texts


def first_question_ttft(url, docs):
    return [generate(url, d + "Question: " + QUESTIONS[0] + "\nAnswer:", 1)[1] for d in docs]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/apps/radixlm")
    ap.add_argument("--model", default=os.environ.get("RADIXLM_DEFAULT_MODEL", "default"))
    ap.add_argument("--docs", type=int, default=50)
    ap.add_argument("--doc-tokens", type=int, default=2000)
    ap.add_argument("--questions", type=int, default=4)
    ap.add_argument("--pool-docs", type=float, default=8)
    ap.add_argument("--restart-docs", type=int, default=8)
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--policy", default="write_back", choices=["write_back", "write_through"])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--smoke", action="store_true",
                    help="3 documents of 200 tokens, 2 questions, a pool of 1.5 documents")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    if args.smoke:
        args.docs, args.doc_tokens, args.questions = 3, 200, 2
        args.pool_docs, args.restart_docs, args.max_new_tokens = 1.5, 2, 4

    docs = [document(i, args.doc_tokens) for i in range(args.docs)]
    asks = [(d, q) for d in range(args.docs) for q in range(args.questions)]
    random.Random(args.seed).shuffle(asks)
    prompts = [docs[d] + "Question: " + QUESTIONS[q % len(QUESTIONS)] + "\nAnswer:"
               for d, q in asks]
    pool = int(args.pool_docs * args.doc_tokens * 1.1)
    common = ["--threads", str(args.threads), "--max-total-tokens", str(pool)]
    store = tempfile.mkdtemp(prefix="radixlm-hicache-bench-")
    empty = tempfile.mkdtemp(prefix="radixlm-hicache-bench-cold-")
    tier = ["--enable-hierarchical-cache", "--hicache-storage-backend", "file",
            "--hicache-write-policy", args.policy, "--hicache-storage-size", "64"]
    results = {"config": vars(args), "pool_tokens": pool}
    try:
        with Server(args.bin, args.model, common) as s:
            results["ram_only"], base_texts = run_workload(s.url, prompts, args.max_new_tokens)
        with Server(args.bin, args.model, common + tier + ["--hicache-storage-dir", store]) as s:
            results["disk_tier"], tier_texts = run_workload(s.url, prompts, args.max_new_tokens)
        results["outputs_identical"] = base_texts == tier_texts
        restart_docs = docs[:args.restart_docs]
        with Server(args.bin, args.model, common + tier + ["--hicache-storage-dir", empty]) as s:
            cold = first_question_ttft(s.url, restart_docs)
        with Server(args.bin, args.model, common + tier + ["--hicache-storage-dir", store]) as s:
            warm = first_question_ttft(s.url, restart_docs)
            results["restart_hicache"] = internal(s.url).get("hicache", {})
        results["restart_ttft_cold_s"] = sum(cold) / len(cold)
        results["restart_ttft_warm_s"] = sum(warm) / len(warm)
    finally:
        shutil.rmtree(store, ignore_errors=True)
        shutil.rmtree(empty, ignore_errors=True)

    ram, disk = results["ram_only"], results["disk_tier"]
    print(f"{'':24}{'RAM only':>14}{'with disk tier':>16}")
    print(f"{'prefill tokens':24}{ram['prefill_tokens']:>14}{disk['prefill_tokens']:>16}")
    print(f"{'requests/s':24}{ram['requests_per_s']:>14.3f}{disk['requests_per_s']:>16.3f}")
    print(f"{'wall s':24}{ram['wall_s']:>14.1f}{disk['wall_s']:>16.1f}")
    print(f"prefill tokens ratio: {ram['prefill_tokens'] / max(disk['prefill_tokens'], 1):.2f}x, "
          f"throughput ratio: {disk['requests_per_s'] / ram['requests_per_s']:.2f}x")
    print(f"restart TTFT: cold {results['restart_ttft_cold_s'] * 1e3:.1f} ms, "
          f"from disk {results['restart_ttft_warm_s'] * 1e3:.1f} ms")
    print("outputs identical:", results["outputs_identical"])
    print("disk tier stats:", json.dumps(disk["hicache"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0 if results["outputs_identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
