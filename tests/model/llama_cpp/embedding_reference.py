#!/usr/bin/env python3
"""Decoder last-token embeddings: radixlm and llama.cpp against each other, llama.cpp against
itself at another batch shape, and both against the plain float reference forward
(bench/reference_forward --last-hidden) with and without its activation / KV roundings.

The inputs are bench/bench_embeddings.py's 256 short texts (seed 7); the model is SmolLM2's
GGUF copied with pooling_type 3 (last), as embedding_oracle.py makes it. The reference runs on
the --worst texts where radixlm and llama.cpp differ most and the --best where they agree most
(it is slow: naive float loops).

Usage: embedding_reference.py --radixlm build/apps/radixlm --llama-embedding /tmp/llama-embedding
       --reference-forward build/bench/reference_forward [--worst 12] [--best 8]
(RADIXLM_CHAT_MODEL names SmolLM2-135M-Instruct's GGUF; gguf-py on PYTHONPATH.)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[2] / "bench"))
import embedding_oracle as eo  # noqa: E402
from bench_embeddings import inputs  # noqa: E402


def cos(a, b):
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def llama(tool, model, texts, batch):
    argv = [tool, "-m", model, "-p", "\n".join(texts), "--embd-output-format", "json", "-t", "2",
            "-c", "4096", "-b", str(batch), "-ub", str(batch)]
    for _ in range(3):  # its asynchronous logger at times exits before printing (rc 0)
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.stdout.strip():
            break
    data = json.loads(p.stdout)["data"]
    return np.array([d["embedding"] for d in sorted(data, key=lambda d: d["index"])])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--radixlm", required=True)
    ap.add_argument("--llama-embedding", required=True)
    ap.add_argument("--reference-forward", required=True)
    ap.add_argument("--worst", type=int, default=12)
    ap.add_argument("--best", type=int, default=8)
    args = ap.parse_args()
    model = os.environ.get("RADIXLM_CHAT_MODEL", "")
    if not model:
        sys.exit("set RADIXLM_CHAT_MODEL (SmolLM2-135M-Instruct's GGUF)")
    work = tempfile.mkdtemp(prefix="embedding-reference-")
    last = os.path.join(work, "last.gguf")
    eo.with_pooling_type(model, last, 3)
    texts = inputs(256, 7)
    eo.TEXTS = texts
    a = llama(args.llama_embedding, last, texts, 4096)
    b = llama(args.llama_embedding, last, texts, 32)
    r = eo.radixlm_vectors(args.radixlm, last, None, 2)
    for name, c in [("llama.cpp one batch vs llama.cpp batches of 32 tokens", cos(a, b)),
                    ("llama.cpp vs radixlm", cos(a, r))]:
        print(f"{name}: min {c.min():.6f} mean {c.mean():.6f}, {(c < 0.999).sum()} of "
              f"{len(c)} under 0.999")
    c = cos(a, r)
    order = np.argsort(c)
    pick = list(order[:args.worst]) + list(order[len(order) - args.best:])
    ids = []
    for i in pick:
        out = subprocess.run([args.radixlm, "tokenize", "-m", last, "--ids", "--add-special",
                              "--no-escape", texts[i]], capture_output=True, text=True, check=True)
        ids.append(json.loads(out.stdout))
    ids_file = os.path.join(work, "ids.json")
    with open(ids_file, "w") as f:
        json.dump(ids, f)
    for mode, flags in [("exact float", ["--no-activation-rounding", "--no-kv-rounding"]),
                        ("with llama.cpp's roundings", [])]:
        out = subprocess.run([args.reference_forward, "--model-path", last, "--ids-file", ids_file,
                              "--threads", "2", "--last-hidden"] + flags,
                             capture_output=True, text=True, check=True)
        h = np.array(json.loads(out.stdout)["hidden"])
        cl, cr = cos(h, a[pick]), cos(h, r[pick])
        print(f"reference ({mode}), {len(pick)} texts: cos with llama.cpp min {cl.min():.6f} "
              f"mean {cl.mean():.6f}; with radixlm min {cr.min():.6f} mean {cr.mean():.6f}")


if __name__ == "__main__":
    main()
