#!/usr/bin/env python3
"""Embedding throughput: N short inputs through POST /v1/embeddings, radixlm serve
--is-embedding against llama-server --embeddings on the same GGUF, pooling and threads.

Each server gets N inputs as one request listing them all, then N other inputs (so nothing of
them is in radixlm's radix cache) as N one-input requests sent C at a time. Reports wall time
and inputs per second of each (one run each, after a one-input warm-up request), and the
cosine between the two servers' vectors of every input.

Usage: bench_embeddings.py --model M.gguf --radixlm build/apps/radixlm
       --llama-server ~/.cache/radixlm/llama-peer/0.3.36/build/bin/llama-server
       [--pooling last] [--threads 2] [--n 256] [--concurrency 16] [--llama-args '--poll 0']
"""
import argparse
import concurrent.futures as cf
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np
import requests

WORDS = ("radix tree cache prefix token model server batch vector query document search "
         "embedding rank score text short input long answer question fast slow memory").split()


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(4, 13)))) for _ in range(n)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(argv, url):
    log = tempfile.NamedTemporaryFile("w+", prefix="bench-embed-", delete=False)
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(1200):
        try:
            if requests.get(url + "/health", timeout=1).status_code == 200:
                return proc
        except requests.RequestException:
            pass
        if proc.poll() is not None:
            sys.exit(f"{argv[0]} exited:\n{open(log.name).read()[-3000:]}")
        time.sleep(0.25)
    sys.exit(f"{argv[0]} did not become healthy")


def embed(url, batch):
    r = requests.post(url + "/v1/embeddings", json={"model": "m", "input": batch}, timeout=600)
    r.raise_for_status()
    return [d["embedding"] for d in sorted(r.json()["data"], key=lambda d: d["index"])]


def measure(url, texts, others, concurrency):
    """texts as one request, then `others` (other inputs: nothing of them is cached) as
    one-input requests."""
    embed(url, ["warm-up"])
    t0 = time.perf_counter()
    vectors = embed(url, texts)
    one_request = time.perf_counter() - t0
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(concurrency) as pool:
        singles = list(pool.map(lambda t: embed(url, [t])[0], others))
    many_requests = time.perf_counter() - t0
    return np.array(vectors), np.array(singles), one_request, many_requests


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--radixlm", required=True)
    ap.add_argument("--llama-server", required=True)
    ap.add_argument("--pooling", default="last")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--llama-args", default="", help="extra llama-server flags, e.g. '--poll 0'")
    args = ap.parse_args()
    texts, others = inputs(args.n, 7), inputs(args.n, 8)
    results = {}
    for name in ("radixlm", "llama-server"):
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        if name == "radixlm":
            argv = [args.radixlm, "serve", "--model-path", args.model, "--port", str(port),
                    "--threads", str(args.threads), "--is-embedding", "--pooling", args.pooling]
        else:
            argv = [args.llama_server, "-m", args.model, "--port", str(port), "-t",
                    str(args.threads), "-tb", str(args.threads), "--embeddings", "--pooling",
                    args.pooling, "-np", str(args.concurrency), "-c",
                    str(64 * args.concurrency), "-b", "2048", "-ub", "2048",
                    *args.llama_args.split()]
        proc = start(argv, url)
        try:
            results[name] = measure(url, texts, others, args.concurrency)
        finally:
            proc.terminate()
            proc.wait(30)
        _, _, one, many = results[name]
        print(f"{name}: {args.n} inputs in one request {one:.3f} s ({args.n / one:.1f}/s); "
              f"{args.n} one-input requests, {args.concurrency} at a time {many:.3f} s "
              f"({args.n / many:.1f}/s)")
    a, b = results["radixlm"][0], results["llama-server"][0]
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    print(f"cosine radixlm vs llama-server over {args.n} inputs: min {cos.min():.6f}, "
          f"mean {cos.mean():.6f}")


if __name__ == "__main__":
    main()
