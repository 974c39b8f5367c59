#!/usr/bin/env python3
"""Concurrent long chats in a fixed KV memory: one pool for all layers vs the sliding-window
layout (Gemma-3: 15 of 18 layers see only the last 512 positions).

The KV memory is what --fit chats of --chat-tokens need with one pool for all layers
(--kv-cache-memory-mb, the same for both servers). --chats chats (distinct documents of
--chat-tokens minus --output-len tokens, then --output-len greedy tokens, ignore_eos) are all
sent at once. Reported per layout: the peak number of requests holding KV at once (the
radixlm:num_running_reqs gauge, polled), requests retracted for lack of KV, wall time, and
whether the outputs equal the matching layout's. The hybrid server runs with
--swa-full-tokens-ratio --swa-ratio and --chunked-prefill-size --chunk. The same two layouts run
again with --kv-cache-dtype fp8_e5m2 (one byte per value instead of two; the hybrid one with
--fp8-swa-ratio), in the same memory; their outputs are compared with each other, and with the
F16 ones (a lossy format: the share of equal outputs is reported).

Arithmetic (row = one layer's K and V of one token): one chat of T tokens needs 18 T rows with
one pool; with the sliding-window layout 3 T rows plus, in the 15 windowed layers, the window
and the chunk being computed (15 (512 + chunk) rows at most). So a memory of 8 chats of 4,000
tokens (576,000 rows) holds at most 576,000 / (12,000 + 15 x 576) = 27.9 running chats with a
64-token decode working set, fewer while they prefill. With fp8_e5m2 a row takes half the bytes:
the same memory holds 1,152,000 rows, and 32 chats need 32 x (12,000 + 15 x 768) = 752,640 at
most (the windowed pool then needs r >= 32 x 768 / 128,000 = 0.19 of the full one).

  .venv/bin/python bench/bench_swa_chats.py --bin build/apps/radixlm [--chats 32 --fit 8]
      [--only 'one pool fp8' --only 'sliding-window fp8']
"""

import argparse
import os
import random
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_hicache import WORDS  # noqa: E402
from bench_server import Server  # noqa: E402

ROW_KIB = 1  # gemma-3-270m: F16 K and V of one 256-wide KV head per layer and token
LAYERS = 18


def chat_ids(url, i, n_tokens):
    rng = random.Random(7000 + i)
    text = f"Chat {i}.\n" + " ".join(rng.choice(WORDS) for _ in range(n_tokens))
    r = requests.post(url + "/tokenize", json={"prompt": text}, timeout=60)
    r.raise_for_status()
    ids = r.json()["tokens"][:n_tokens]
    assert len(ids) == n_tokens, (len(ids), n_tokens)
    return ids


def metric(url, name):
    for line in requests.get(url + "/metrics", timeout=30).text.splitlines():
        if line.startswith(f"radixlm:{name}"):
            return float(line.rsplit(" ", 1)[1])
    raise KeyError(name)


def run(url, prompts, output_len):
    peak = [0]
    done = threading.Event()

    def poll():
        while not done.is_set():
            peak[0] = max(peak[0], int(metric(url, "num_running_reqs")))
            time.sleep(0.2)

    def one(ids):
        r = requests.post(url + "/generate", timeout=3600, json={
            "input_ids": ids, "sampling_params": {
                "temperature": 0, "max_new_tokens": output_len, "ignore_eos": True}})
        r.raise_for_status()
        return r.json()["output_ids"]

    retracted0 = metric(url, "num_retracted_reqs_total")
    poller = threading.Thread(target=poll)
    poller.start()
    t = time.perf_counter()
    with ThreadPoolExecutor(len(prompts)) as ex:
        outputs = list(ex.map(one, prompts))
    wall = time.perf_counter() - t
    done.set()
    poller.join()
    return {"peak_running": peak[0], "wall_s": wall,
            "retracted": int(metric(url, "num_retracted_reqs_total") - retracted0),
            "output_tok_s": len(prompts) * output_len / wall}, outputs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/apps/radixlm")
    ap.add_argument("--model", default=os.environ.get("RADIXLM_DEFAULT_MODEL", "default"))
    ap.add_argument("--chats", type=int, default=32)
    ap.add_argument("--fit", type=int, default=8)
    ap.add_argument("--chat-tokens", type=int, default=4000)
    ap.add_argument("--output-len", type=int, default=32)
    ap.add_argument("--swa-ratio", type=float, default=0.16)
    ap.add_argument("--fp8-swa-ratio", type=float, default=0.25)
    ap.add_argument("--skip-fp8", action="store_true")
    ap.add_argument("--only", action="append",
                    choices=["one pool", "sliding-window", "one pool fp8", "sliding-window fp8"],
                    help="run only this layout (repeatable); outputs are compared between the "
                         "layouts run")
    ap.add_argument("--chunk", type=int, default=256)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()

    mem_mb = -(-args.fit * args.chat_tokens * LAYERS * ROW_KIB // 1024)  # ceil
    common = ["--threads", str(args.threads), "--kv-cache-memory-mb", str(mem_mb),
              "--chunked-prefill-size", str(args.chunk)]
    layouts = {"one pool": ["--disable-hybrid-swa-memory"],
               "sliding-window": ["--swa-full-tokens-ratio", str(args.swa_ratio)]}
    if not args.skip_fp8:
        fp8 = ["--kv-cache-dtype", "fp8_e5m2"]
        layouts["one pool fp8"] = fp8 + ["--disable-hybrid-swa-memory"]
        layouts["sliding-window fp8"] = fp8 + ["--swa-full-tokens-ratio", str(args.fp8_swa_ratio)]
    if args.only:
        missing = [name for name in args.only if name not in layouts]
        if missing:
            ap.error(f"--only {missing[0]!r} is not run with --skip-fp8")
        layouts = {name: layouts[name] for name in layouts if name in args.only}
    prompt_len = args.chat_tokens - args.output_len
    results, outputs = {}, {}
    for name, flags in layouts.items():
        with Server(args.bin, args.model, common + flags) as s:
            info = requests.get(s.url + "/get_server_info", timeout=60).json()
            prompts = [chat_ids(s.url, i, prompt_len) for i in range(args.chats)]
            results[name], outputs[name] = run(s.url, prompts, args.output_len)
            results[name]["full_pool_tokens"] = info["max_total_num_tokens"]
            results[name]["swa_pool_tokens"] = info.get("swa_max_total_num_tokens", 0)
    print(f"KV memory {mem_mb} MiB (what {args.fit} chats of {args.chat_tokens} tokens need "
          f"with one pool); {args.chats} chats sent at once, {args.output_len} tokens each")
    for name, r in results.items():
        print(f"{name:18} pools {r['full_pool_tokens']} / {r['swa_pool_tokens']} tokens; peak "
              f"running {r['peak_running']}; retracted {r['retracted']}; {r['wall_s']:.1f} s; "
              f"{r['output_tok_s']:.1f} out tok/s")
    for a, b in (("one pool", "sliding-window"), ("one pool fp8", "sliding-window fp8")):
        if a in outputs and b in outputs:
            same = sum(x == y for x, y in zip(outputs[a], outputs[b]))
            print(f"outputs identical, {a} vs {b}: {same} of {args.chats} chats")
    if "one pool" in outputs and "one pool fp8" in outputs:
        same = sum(a == b for a, b in zip(outputs["one pool"], outputs["one pool fp8"]))
        print(f"fp8 outputs equal to the F16 ones: {same} of {args.chats} chats")


if __name__ == "__main__":
    main()
