#!/usr/bin/env python3
"""Teacher-forced next-token KL along real text, under a LoRA adapter or on the base model:
llama.cpp with its F16 KV cache (L), llama.cpp with an F32 KV cache and flash attention off
(L32, llama_logits with LLAMA_KV_F32=1) and radixlm (R), each decoding every prompt of a
lora_oracle.py --json run followed by llama-server's greedy continuation in one batch. Prints
per prompt and on average KL(L || L32), KL(L || R) and KL(L32 || R) over the continuation's
positions: radixlm's divergence from llama.cpp read against llama.cpp's own under a change of
KV precision.

Usage: lora_teacher_forced.py BASE.gguf ORACLE.json --tools DIR [--adapter ADAPTER.gguf]
       [--threads 1]
(--adapter: the run's records with the adapter, under it; without: the base model's records.)
"""
import argparse
import json
import os
import subprocess
import tempfile

import numpy as np


def logsoftmax(x):
    x = x.astype(np.float64)
    x = x - x.max(axis=1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))


def kl(p_log, q_log):
    return (np.exp(p_log) * (p_log - q_log)).sum(axis=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("oracle_json")
    ap.add_argument("--tools", required=True, help="folder of llama_logits and radixlm_logits")
    ap.add_argument("--adapter")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    with open(a.oracle_json) as f:
        records = [r for r in json.load(f) if r["adapter"] == (a.adapter is not None)]
    env = dict(os.environ)
    env.pop("LLAMA_KV_F32", None)
    if a.adapter:
        env["LORA_ADAPTER"] = a.adapter
    runs = [("L", "llama_logits", {}), ("L32", "llama_logits", {"LLAMA_KV_F32": "1"}),
            ("R", "radixlm_logits", {})]
    pairs = [("L", "L32"), ("L", "R"), ("L32", "R")]
    totals = {p: [] for p in pairs}
    tmp = os.path.join(tempfile.gettempdir(), f"lora_tf_{os.getpid()}")
    for r in records:
        seq = np.array(r["ids"] + r["llama_tokens"], dtype=np.int32)
        seq.tofile(tmp + ".ids")
        logits = {}
        for name, tool, extra in runs:
            subprocess.run([os.path.join(a.tools, tool), a.base, tmp + ".ids", f"{tmp}.{name}",
                            str(len(seq)), str(a.threads)], check=True, capture_output=True,
                           env={**env, **extra})
            logits[name] = logsoftmax(
                np.fromfile(f"{tmp}.{name}", dtype=np.float32).reshape(len(seq), -1))
        # Rows predicting the continuation's tokens.
        rows = slice(len(r["ids"]) - 1, len(seq) - 1)
        line = []
        for p, q in pairs:
            v = kl(logits[p], logits[q])[rows].mean()
            totals[(p, q)].append(v)
            line.append(f"KL({p} || {q}) {v:.4f}")
        print(f"prompt {r['prompt']}: " + ", ".join(line), flush=True)
    print("mean: " + ", ".join(f"KL({p} || {q}) {np.mean(v):.2e}" for (p, q), v in totals.items()))
    for name, _, _ in runs:
        if os.path.exists(f"{tmp}.{name}"):
            os.remove(f"{tmp}.{name}")
    if os.path.exists(tmp + ".ids"):
        os.remove(tmp + ".ids")


if __name__ == "__main__":
    main()
