#!/usr/bin/env python3
"""Greedy outputs under a LoRA adapter: llama.cpp's llama-server (--lora) against radixlm serve
(--lora-paths), on the same base GGUF and adapter, prompts sent as token ids (no tokenizer in
between). Prints, per prompt, whether the greedy continuations agree and where they first
differ. The teacher-forced KL of the same pair comes from compare.py with LORA_ADAPTER set
(llama_logits and radixlm_logits read it).

Usage: lora_oracle.py BASE.gguf ADAPTER.gguf --radixlm build/apps/radixlm
       [--llama-server ~/.cache/radixlm/llama-peer/0.3.36/build/bin/llama-server]
       [--prompts 8] [--tokens 32] [--threads 2]
Each prompt runs with the adapter (llama-server: lora scale 1; radixlm: lora_path) and without
it (llama-server: scale 0; radixlm: the base model), so the base model's own agreement is the
measure the adapter's is read against.
"""
import argparse
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("adapter")
    ap.add_argument("--radixlm", required=True)
    ap.add_argument("--llama-server", default=PEER)
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()

    lp, rp = free_port(), free_port()
    lurl, rurl = f"http://127.0.0.1:{lp}", f"http://127.0.0.1:{rp}"
    llama = start([a.llama_server, "-m", a.base, "--lora", a.adapter, "--port", str(lp),
                   "-t", str(a.threads), "-c", "2048", "-np", "1"], lurl)
    radix = start([a.radixlm, "serve", "--model-path", a.base, "--port", str(rp), "--threads",
                   str(a.threads), "--lora-paths", f"oracle={a.adapter}"], rurl)
    try:
        # Real sentences (a random-id prompt leaves the next token near a tie, where greedy
        # flips on rounding), tokenized once by radixlm: both servers get the same ids.
        agree = {True: 0, False: 0}
        for i, text in enumerate(PROMPTS[:a.prompts]):
            ids = requests.post(rurl + "/tokenize", json={"prompt": text}).json()["tokens"]
            for with_adapter in (True, False):
                lr = requests.post(lurl + "/completion", json={
                    "prompt": ids, "n_predict": a.tokens, "temperature": 0, "top_k": 1,
                    "return_tokens": True, "cache_prompt": False, "samplers": ["top_k"],
                    "lora": [{"id": 0, "scale": 1.0 if with_adapter else 0.0}]}).json()
                body = {"input_ids": ids,
                        "sampling_params": {"temperature": 0, "max_new_tokens": a.tokens}}
                if with_adapter:
                    body["lora_path"] = "oracle"
                rr = requests.post(rurl + "/generate", json=body).json()
                lt, rt = lr["tokens"], rr["output_ids"]
                n = min(len(lt), len(rt))
                first = next((j for j in range(n) if lt[j] != rt[j]), None)
                same = first is None and len(lt) == len(rt)
                agree[with_adapter] += same
                if with_adapter:
                    adapted = rt
                else:
                    changed = "changes" if rt != adapted else "does not change"
                print(f"prompt {i}: with the adapter "
                      if with_adapter else f"prompt {i}: base model       ", end="")
                print(f"{'equal' if same else f'first difference at token {first}'} "
                      f"({len(lt)} / {len(rt)} tokens)"
                      + ("" if with_adapter else f"; the adapter {changed} radixlm's output"),
                      flush=True)
        print(f"greedy continuations equal to llama-server's: with the adapter "
              f"{agree[True]} / {a.prompts}, base model {agree[False]} / {a.prompts}")
    finally:
        for p in (llama, radix):
            p.terminate()
            p.wait(30)


if __name__ == "__main__":
    main()
