#!/usr/bin/env python3
"""A multi-turn chat on a hybrid (qwen35) model: prompt tokens computed per turn, from /metrics.

Starts `radixlm serve` on MODEL twice, with the radix cache (its state snapshots) on and off,
and runs the same conversation through /generate with input_ids: each turn's prompt is the
previous turn's prompt, its greedy output and a new message of --message tokens. Prints, per
turn, the prompt length and radixlm:prefill_computed_tokens_total's growth (the prompt tokens
the turn computed), and checks that both servers give the same outputs.

With --llama-server, the same prompts (token ids) also go to llama-server (one slot, prompt
caching and its context checkpoints on by default), and its timings' prompt_n is printed.

Usage: bench_hybrid_multiturn.py --binary build/apps/radixlm --model qwen35.gguf
           [--llama-server ~/.cache/radixlm/llama-peer/0.3.36/build/bin/llama-server]
"""
import argparse
import json
import random
import re
import subprocess
import sys
import time
import urllib.request


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read())


def get(url):
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.read().decode()


def metric(text, name):
    m = re.search(r"^radixlm:" + name + r"(?:\{[^}]*\})? ([0-9.e+]+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def run(args, cache_on):
    port = args.port + (0 if cache_on else 1)
    cmd = [args.binary, "serve", "--model-path", args.model, "--port", str(port),
           "--threads", str(args.threads), "--max-total-tokens", "16384",
           "--hybrid-snapshot-interval", str(args.interval), "--log-level", "warning"]
    if not cache_on:
        cmd.append("--disable-radix-cache")
    elif args.snapshots > 0:
        cmd += ["--max-mamba-cache-size", str(args.snapshots)]
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                get(base + "/health")
                break
            except OSError:
                if server.poll() is not None:
                    sys.exit("server exited: " + server.stderr.read())
                time.sleep(0.2)
        rng = random.Random(args.seed)
        prompt = [rng.randrange(100, 40000) for _ in range(args.first)]
        rows = []
        for turn in range(args.turns):
            before = metric(get(base + "/metrics"), "prefill_computed_tokens_total")
            start = time.time()
            out = post(base + "/generate", {
                "input_ids": prompt,
                "sampling_params": {"temperature": 0, "max_new_tokens": args.output,
                                    "ignore_eos": True}})
            seconds = time.time() - start
            after = metric(get(base + "/metrics"), "prefill_computed_tokens_total")
            ids = out["output_ids"]
            rows.append((turn, len(prompt), int(after - before),
                         out["meta_info"].get("cached_tokens", 0), seconds, ids, list(prompt)))
            prompt = prompt + ids + [rng.randrange(100, 40000) for _ in range(args.message)]
        info = json.loads(get(base + "/get_server_info"))
        state = info["internal_states"][0]
        extra = {k: state.get(k) for k in ("state_snapshots", "state_snapshot_capacity",
                                           "state_snapshot_bytes", "state_snapshots_taken",
                                           "state_snapshot_resumes")}
        extra["recurrent_state_bytes"] = info["memory"].get("recurrent_state_bytes")
        return rows, extra
    finally:
        server.terminate()
        server.wait(timeout=30)


def run_llama(args, prompts):
    """Replays the turns' prompts (token ids) to llama-server, one slot, prompt caching on;
    returns (prompt tokens it computed, seconds) per turn, from its timings."""
    port = args.port + 2
    cmd = [args.llama_server, "-m", args.model, "--port", str(port), "-t", str(args.threads),
           "-c", "8192", "-np", "1", "--log-disable"]
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if json.loads(get(base + "/health")).get("status") == "ok":
                    break
            except (OSError, ValueError):
                if server.poll() is not None:
                    sys.exit("llama-server exited")
            time.sleep(0.2)
        rows = []
        for prompt in prompts:
            start = time.time()
            out = post(base + "/completion", {"prompt": prompt, "n_predict": args.output,
                                              "temperature": 0, "cache_prompt": True,
                                              "ignore_eos": True})
            rows.append((out["timings"]["prompt_n"], time.time() - start))
        return rows
    finally:
        server.terminate()
        server.wait(timeout=30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--port", type=int, default=31870)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--turns", type=int, default=8)
    ap.add_argument("--first", type=int, default=600)
    ap.add_argument("--message", type=int, default=150)
    ap.add_argument("--output", type=int, default=24)
    ap.add_argument("--interval", type=int, default=512)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--llama-server", default="",
                    help="also replay the turns' prompts to this llama-server binary")
    ap.add_argument("--snapshots", type=int, default=0,
                    help="--max-mamba-cache-size for the cached server (0: its default)")
    args = ap.parse_args()
    on, on_extra = run(args, True)
    off, _ = run(args, False)
    print("turn  prompt  computed(on)  cached(on)  seconds(on)  computed(off)  seconds(off)")
    same = True
    for a, b in zip(on, off):
        same &= a[5] == b[5]
        print(f"{a[0]:4d}  {a[1]:6d}  {a[2]:12d}  {a[3]:10d}  {a[4]:11.2f}  {b[2]:13d}  {b[4]:12.2f}")
    print("outputs identical with the cache on and off:", same)
    if args.llama_server:
        llama = run_llama(args, [r[6] for r in on])
        print("turn  prompt  computed(llama-server)  seconds(llama-server)")
        for r, (n, sec) in zip(on, llama):
            print(f"{r[0]:4d}  {r[1]:6d}  {n:22d}  {sec:21.2f}")
    print("cache on, at the end:", json.dumps(on_extra))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
