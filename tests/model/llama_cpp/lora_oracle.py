#!/usr/bin/env python3
"""Greedy outputs under a LoRA adapter: llama.cpp's llama-server (--lora) against radixlm serve
(--lora-paths), on the same base GGUF and adapter, prompts sent as token ids (no tokenizer in
between; neither server adds BOS to an id prompt). Prints, per prompt, whether the greedy
continuations agree, where they first differ, and there the gap between llama.cpp's top two
log-probabilities (and radixlm's): a divergence where llama.cpp's own top two are close is
rounding, one where they are far apart would be an error. The teacher-forced KL of the same pair
comes from compare.py with LORA_ADAPTER set (llama_logits and radixlm_logits read it).

Usage: lora_oracle.py BASE.gguf ADAPTER.gguf --radixlm build/apps/radixlm
       [--llama-server ~/.cache/radixlm/llama-peer/0.3.36/build/bin/llama-server]
       [--prompts 8] [--tokens 32] [--threads 2] [--self-check] [--json OUT.json]
Each prompt runs with the adapter (llama-server: lora scale 1; radixlm: lora_path) and without
it (llama-server: scale 0, which gives the logits of a server started without --lora bit for
bit; radixlm: the base model), so the base model's own agreement is the measure the adapter's is
read against. --self-check starts a second llama-server on the same files with its KV cache in
F32 and flash attention off (`-ctk f32 -ctv f32 -fa off`; the first keeps llama.cpp's F16
cache) and reports its greedy agreement with the first: llama.cpp against itself under a
numerics change of the size that separates two implementations. --json writes every prompt's
ids, llama.cpp's greedy tokens and llama.cpp's top-two gap at each step.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

import requests

PROMPTS = [
    "The history of the printing press begins in",
    "To make a good cup of tea, you should first",
    "The three largest planets in the solar system are",
    "Once upon a time, in a small village by the sea,",
    "The main difference between a virus and a bacterium is",
    "In computer science, a hash table is",
    "The recipe calls for two cups of flour and",
    "During the winter months, many birds",
]
PEER = os.path.expanduser("~/.cache/radixlm/llama-peer/0.3.36/build/bin/llama-server")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(cmd, url):
    log = tempfile.NamedTemporaryFile(prefix="lora-oracle-", suffix=".log", delete=False)
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(600):
        try:
            if requests.get(url + "/health", timeout=2).status_code == 200:
                return proc
        except requests.RequestException:
            pass
        if proc.poll() is not None:
            sys.exit(f"{cmd[0]} exited: see {log.name}")
        time.sleep(0.5)
    sys.exit(f"{cmd[0]} did not become healthy: see {log.name}")


def llama_greedy(url, ids, n, scale):
    """(tokens, per-step gap between llama.cpp's top two log-probabilities)."""
    r = requests.post(url + "/completion", json={
        "prompt": ids, "n_predict": n, "temperature": 0, "top_k": 1, "samplers": ["top_k"],
        "return_tokens": True, "cache_prompt": False, "n_probs": 2,
        "lora": [{"id": 0, "scale": scale}]}).json()
    gaps = [p["top_logprobs"][0]["logprob"] - p["top_logprobs"][1]["logprob"]
            for p in r["completion_probabilities"]]
    return r["tokens"], gaps


def radixlm_greedy(url, ids, n, lora):
    body = {"input_ids": ids, "sampling_params": {"temperature": 0, "max_new_tokens": n},
            "return_logprob": True, "top_logprobs_num": 2}
    if lora is not None:
        body["lora_path"] = lora
    r = requests.post(url + "/generate", json=body).json()
    gaps = [t[0][0] - t[1][0] for t in r["meta_info"]["output_top_logprobs"]]
    return r["output_ids"], gaps


def first_difference(a, b):
    """None when equal, else the first index where the two token lists differ."""
    j = next((j for j in range(min(len(a), len(b))) if a[j] != b[j]), None)
    return None if j is None and len(a) == len(b) else (j if j is not None else min(len(a), len(b)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("adapter")
    ap.add_argument("--radixlm", required=True)
    ap.add_argument("--llama-server", default=PEER)
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--self-check", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()

    procs = []
    try:
        lp, rp = free_port(), free_port()
        lurl, rurl = f"http://127.0.0.1:{lp}", f"http://127.0.0.1:{rp}"
        common = ["-m", a.base, "--lora", a.adapter, "-t", str(a.threads), "-c", "2048", "-np",
                  "1", "--poll", "0"]  # idle threads sleep: the servers share the CPU
        procs.append(start([a.llama_server, *common, "--port", str(lp)], lurl))
        procs.append(start([a.radixlm, "serve", "--model-path", a.base, "--port", str(rp),
                            "--threads", str(a.threads), "--lora-paths",
                            f"oracle={a.adapter}"], rurl))
        surl = None
        if a.self_check:
            sp = free_port()
            surl = f"http://127.0.0.1:{sp}"
            procs.append(start([a.llama_server, *common, "--port", str(sp), "-ctk", "f32",
                                "-ctv", "f32", "-fa", "off"], surl))
        # Real sentences (a random-id prompt leaves the next token near a tie, where greedy
        # flips on rounding), tokenized once by radixlm: both servers get the same ids.
        agree = {True: [0, 0], False: [0, 0]}  # [radixlm, llama.cpp self]
        records = []
        for i, text in enumerate(PROMPTS[:a.prompts]):
            ids = requests.post(rurl + "/tokenize", json={"prompt": text}).json()["tokens"]
            for with_adapter in (True, False):
                scale = 1.0 if with_adapter else 0.0
                lt, lgaps = llama_greedy(lurl, ids, a.tokens, scale)
                rt, rgaps = radixlm_greedy(rurl, ids, a.tokens, "oracle" if with_adapter else None)
                first = first_difference(lt, rt)
                agree[with_adapter][0] += first is None
                line = (f"prompt {i} {'adapter' if with_adapter else 'base   '}: radixlm "
                        + ("equal" if first is None else
                           f"differs at token {first} (llama.cpp top-2 gap there "
                           f"{lgaps[first]:.3f}, radixlm's {rgaps[first]:.3f})"
                           if first < min(len(lgaps), len(rgaps)) else
                           f"differs in length ({len(lt)} / {len(rt)} tokens)"))
                agreed = lgaps[:first if first is not None else len(lgaps)]
                line += (f"; llama.cpp's smallest gap before it {min(agreed):.3f}"
                         if agreed else "")
                if surl is not None:
                    st, _ = llama_greedy(surl, ids, a.tokens, scale)
                    sfirst = first_difference(lt, st)
                    agree[with_adapter][1] += sfirst is None
                    line += "; llama.cpp F32 KV " + (
                        "equal" if sfirst is None else f"differs at token {sfirst}")
                print(line, flush=True)
                records.append({"prompt": i, "adapter": with_adapter, "ids": ids,
                                "llama_tokens": lt, "llama_gaps": lgaps, "radixlm_tokens": rt})
        n = min(a.prompts, len(PROMPTS))
        for with_adapter in (True, False):
            r, s = agree[with_adapter]
            print(f"{'with the adapter' if with_adapter else 'base model'}: radixlm equal to "
                  f"llama-server on {r} / {n}"
                  + (f", llama-server F32 KV equal to llama-server on {s} / {n}"
                     if surl is not None else ""))
        if a.json:
            with open(a.json, "w") as f:
                json.dump(records, f)
    finally:
        for p in procs:
            p.terminate()
            p.wait(30)


if __name__ == "__main__":
    main()
