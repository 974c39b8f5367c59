#!/usr/bin/env python3
"""Cached prefix tokens per GiB of KV: one pool for all layers vs the sliding-window layout.

Each layout gets the same KV memory (--kv-cache-memory-mb). --docs distinct documents of
--doc-tokens tokens are prefilled one after another (1 output token), more than either layout
can keep. Then, newest first, each document is sent again with a short question appended, and
the cached tokens of each answer are summed: the prefix tokens the tree could still serve.
Reported per layout: the pool sizes from server info, the tokens the radix tree holds after the
first pass (the radixlm:tree_tokens gauge: full-layer KV), the summed hits of the second pass,
and both per GiB of KV memory with their ratio to the one-pool layout.

Formula (row = one layer's K and V of one token, 1 KiB in F16 for gemma-3-270m; 18 layers, 3 of
them full attention): one pool holds M / (18 row) tokens; the sliding-window layout
F = M / (row (3 + 15 r)) full-layer tokens (r = --swa-full-tokens-ratio) and r F windowed ones,
so F / (M / 18 row) = 18 / (3 + 15 r): 4x at r = 0.1. A prefix the tree can still serve keeps
windowed KV for the last window (512 tokens) before its end, so a document of L tokens takes
3 L + 15 x 512 rows instead of 18 L: at most 18 L / (3 L + 7,680) times as many cached tokens
(2.6x for L = 2,000, 4.2x for L = 6,000), reached when r matches 512 / L. With --fp8 a row
takes half the bytes (fp8_e5m2).

  .venv/bin/python bench/bench_swa_capacity.py --bin build/apps/radixlm [--memory-mb 256
      --doc-tokens 6000 --docs 12 --swa-ratio 0.1 --fp8]
"""

import argparse
import os
import sys

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_server import Server  # noqa: E402
from bench_swa_chats import chat_ids, metric  # noqa: E402


def generate(url, ids):
    r = requests.post(url + "/generate", timeout=600, json={
        "input_ids": ids, "sampling_params": {"temperature": 0, "max_new_tokens": 1}})
    r.raise_for_status()
    return r.json()


def measure(url, docs):
    for ids in docs:
        generate(url, ids)
    tree = int(metric(url, "tree_tokens"))
    question = requests.post(url + "/tokenize", timeout=60, json={
        "prompt": "\nWhat is the main topic?", "add_special_tokens": False}).json()["tokens"]
    hits = 0
    for ids in reversed(docs):
        hits += min(len(ids), generate(url, ids + question)["meta_info"]["cached_tokens"])
    return tree, hits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/apps/radixlm")
    ap.add_argument("--model", default=os.environ.get("RADIXLM_DEFAULT_MODEL", "default"))
    ap.add_argument("--memory-mb", type=int, default=128)
    ap.add_argument("--docs", type=int, default=24)
    ap.add_argument("--doc-tokens", type=int, default=2000)
    ap.add_argument("--swa-ratio", type=float, default=0.1)
    ap.add_argument("--fp8", action="store_true",
                    help="also the sliding-window layout with --kv-cache-dtype fp8_e5m2")
    ap.add_argument("--chunk", type=int, default=512)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()

    common = ["--threads", str(args.threads), "--kv-cache-memory-mb", str(args.memory_mb),
              "--chunked-prefill-size", str(args.chunk)]
    layouts = {"one pool": ["--disable-hybrid-swa-memory"],
               f"sliding-window r={args.swa_ratio}": ["--swa-full-tokens-ratio",
                                                      str(args.swa_ratio)]}
    if args.fp8:
        layouts[f"sliding-window r={args.swa_ratio} fp8"] = [
            "--swa-full-tokens-ratio", str(args.swa_ratio), "--kv-cache-dtype", "fp8_e5m2"]
    gib = args.memory_mb / 1024
    rows = {}
    for name, flags in layouts.items():
        with Server(args.bin, args.model, common + flags) as s:
            info = requests.get(s.url + "/get_server_info", timeout=60).json()
            docs = [chat_ids(s.url, 100 + i, args.doc_tokens) for i in range(args.docs)]
            tree, hits = measure(s.url, docs)
            rows[name] = (info["max_total_num_tokens"], info.get("swa_max_total_num_tokens", 0),
                          tree, hits)
    print(f"KV memory {args.memory_mb} MiB; {args.docs} documents of {args.doc_tokens} tokens")
    base = rows["one pool"]
    for name, (full, swa, tree, hits) in rows.items():
        print(f"{name:24} pools {full} / {swa} tokens; tree holds {tree} ({tree / gib:.0f}/GiB, "
              f"{tree / base[2]:.2f}x); second pass hit {hits} ({hits / gib:.0f}/GiB, "
              f"{hits / max(1, base[3]):.2f}x)")


if __name__ == "__main__":
    main()
