#!/usr/bin/env python3
"""Speculative decoding: batch-1 decode speed on copy-heavy workloads, radixlm with and without
--speculative-algorithm NGRAM against llama-server without speculation and with each of its
n-gram speculation types, one run, same machine, model and threads; then radixlm with and
without speculation at concurrency 8 on non-repetitive text. The non-repetitive control runs
greedy and sampled (temperature 1, fixed seed): greedy text from this small model soon repeats
itself, sampled text rarely does. Prints a table and the ratios.

Each measured request is preceded by the same prompt with max_tokens 1 (so the prompt is
cached on both servers and the timing is decode), then generates --tokens tokens greedily
(ignore_eos, so every configuration produces the same count); tok/s = tokens / wall time.
The concurrency-8 rows swing by +-10 % from one run to the next on a small VM, more than the
5 % they are judged by, so they are measured --conc-reps times, each on a fresh server (an
empty n-gram trie, no output of an earlier workload to draft from), with and without
speculation interleaved; the table shows the medians and every rep is printed.

Usage: python bench/bench_speculative.py [--radixlm build/apps/radixlm] [--model GGUF]
       [--threads 2] [--tokens 128] [--conc-reps 5] [--llama-version 0.3.36] [--skip-llama]
"""
import argparse
import json
import os
import statistics
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_server import LlamaServer, Server  # noqa: E402
from compare_llama import cpu_info, model_path  # noqa: E402
import llama_peer  # noqa: E402

CODE = """def summarize(orders):
    total = 0
    count = 0
    for order in orders:
        if order.status == "paid":
            total += order.amount
            count += 1
    average = total / count if count else 0
    return {"total": total, "count": count, "average": average}
"""
DOC = ("The committee met on Tuesday to review the budget. \"We cannot approve new spending "
       "until the audit is complete,\" said the chair. Members discussed the library roof, "
       "which has leaked since March. \"The repairs will cost about forty thousand dollars,\" "
       "the treasurer reported. The vote was postponed to the next meeting. ")
STORY = ("A lighthouse keeper on a remote island kept a journal of every ship that passed. "
         "One winter night a small boat without lights drifted toward the rocks, and the "
         "keeper rowed out into the storm to guide it home. ")

WORKLOADS = {
    "code edit (repeat a function, one change)": [
        f"Here is a Python function:\n\n{CODE}\nRewrite the function with the variable "
        f"`count` renamed to `n`. Keep everything else the same.\n\n",
        f"{CODE}\n# The same function again, with a docstring added:\n",
    ],
    "extraction (quote spans of a document)": [
        f"Document:\n{DOC}\n\nList every quotation in the document, word for word:\n1.",
        f"Document:\n{DOC * 2}\nCopy the first two sentences of the document exactly:\n",
    ],
    "summary by restating": [
        f"Text: {STORY}\nRestate the text in your own words, keeping its sentences:\n",
        f"Text: {DOC}\nRewrite this text for the newsletter:\n",
    ],
    "chat restating the question": [
        "<start_of_turn>user\nPlease repeat my question back to me before answering it: "
        "Why does a lighthouse keeper keep a journal of every ship that passes the island "
        "during the winter?<end_of_turn>\n<start_of_turn>model\n",
        "<start_of_turn>user\nFirst restate my request exactly, then answer: list the steps "
        "to repair a leaking library roof before the next meeting.<end_of_turn>\n"
        "<start_of_turn>model\n",
    ],
    "non-repetitive text (control)": [
        "Write a short poem about the color of the sea at dawn.\n",
        "Explain in plain words how a bicycle gear system works.\n",
    ],
}
# Greedy decoding of this small model drifts into repeating its own sentences within 128
# tokens, which the trie then drafts; sampled text (temperature 1, fixed seed) rarely repeats,
# so it is the control that measures what drafts that never hit cost.
CONTROL = "non-repetitive text (control)"
SAMPLED = "non-repetitive, sampled (temperature 1, seed 7)"
WORKLOADS[SAMPLED] = WORKLOADS[CONTROL]
SAMPLING = {SAMPLED: {"temperature": 1.0, "seed": 7}}
CONC = "concurrency 8, non-repetitive"
CONC_SAMPLED = "concurrency 8, non-repetitive, sampled"
LLAMA_SPEC_TYPES = ["ngram-simple", "ngram-map-k", "ngram-mod", "ngram-cache"]


def post(url, body, timeout=1200):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def complete(url, prompt, tokens, sampling=None):
    body = {"model": "default", "prompt": prompt, "max_tokens": tokens, "temperature": 0,
            "ignore_eos": True, **(sampling or {})}
    t0 = time.perf_counter()
    r = post(url + "/v1/completions", body)
    dt = time.perf_counter() - t0
    n = r["usage"]["completion_tokens"]
    assert n == tokens, r["usage"]
    return n, dt


def decode_speeds(url, tokens):
    out = {}
    for name, prompts in WORKLOADS.items():
        total_n, total_t = 0, 0.0
        for p in prompts:
            complete(url, p, 1)  # the prompt into the cache
            n, dt = complete(url, p, tokens, SAMPLING.get(name))
            total_n += n
            total_t += dt
        out[name] = total_n / total_t
    return out


def concurrent_throughput(url, tokens, sampling=None, concurrency=8, requests=16):
    prompts = [f"{WORKLOADS[CONTROL][i % 2]}Variation {i}:\n" for i in range(requests)]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as ex:
        n = sum(r[0] for r in ex.map(lambda p: complete(url, p, tokens, sampling), prompts))
    return n / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--radixlm", default=os.path.join(os.path.dirname(HERE), "build", "apps",
                                                      "radixlm"))
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--conc-reps", type=int, default=5,
                    help="fresh-server repetitions of the concurrency-8 rows (medians shown)")
    ap.add_argument("--llama-version", default=llama_peer.DEFAULT_VERSION)
    ap.add_argument("--skip-llama", action="store_true",
                    help="radixlm with and without speculation only (no llama-server rows)")
    args = ap.parse_args()
    model = model_path(args.model)
    tools = None if args.skip_llama else llama_peer.ensure(args.llama_version)
    t = str(args.threads)
    results = {}
    radixlm_configs = [("radixlm", []), ("radixlm NGRAM", ["--speculative-algorithm", "NGRAM"])]
    for name, extra in radixlm_configs:
        print(f"[bench] {name}", file=sys.stderr, flush=True)
        with Server(args.radixlm, model, ["--threads", t, *extra]) as srv:
            results[name] = decode_speeds(srv.url, args.tokens)
    reps = {(name, w): [] for name, _ in radixlm_configs for w in (CONC, CONC_SAMPLED)}
    for rep in range(args.conc_reps):
        for name, extra in radixlm_configs:
            print(f"[bench] {name}, concurrency 8, rep {rep + 1}", file=sys.stderr, flush=True)
            with Server(args.radixlm, model, ["--threads", t, *extra]) as srv:
                reps[(name, CONC)].append(concurrent_throughput(srv.url, args.tokens))
                reps[(name, CONC_SAMPLED)].append(
                    concurrent_throughput(srv.url, args.tokens, SAMPLING[SAMPLED]))
    for (name, w), values in reps.items():
        results[name][w] = statistics.median(values)
    llama_base = ["-t", t, "-tb", t, "-np", "1", "-c", "4096", "--swa-full"]
    for spec in [] if args.skip_llama else ["none", *LLAMA_SPEC_TYPES]:
        name = f"llama-server {spec}"
        print(f"[bench] {name}", file=sys.stderr, flush=True)
        extra = llama_base + ([] if spec == "none" else ["--spec-type", spec])
        with LlamaServer(tools["llama-server"], model, extra) as srv:
            results[name] = decode_speeds(srv.url, args.tokens)

    print(f"CPU: {cpu_info()}")
    print(f"model: {os.path.basename(model)}, threads {args.threads}, {args.tokens} tokens "
          f"per request, greedy\n")
    cols = list(results)
    print("| workload | " + " | ".join(cols) + " | NGRAM / plain | NGRAM / best llama |")
    print("|---|" + "---|" * (len(cols) + 2))
    for w in list(WORKLOADS) + [CONC, CONC_SAMPLED]:
        vals = [results[c].get(w) for c in cols]
        plain, spec = results["radixlm"][w], results["radixlm NGRAM"][w]
        llama = [results[c][w] for c in cols if c.startswith("llama") and w in results[c]]
        best = max(llama) if llama else None
        cells = ["—" if v is None else f"{v:.1f}" for v in vals]
        print(f"| {w} | " + " | ".join(cells) + f" | {spec / plain:.2f}x | " +
              (f"{spec / best:.2f}x |" if best else "— |"))
    print(f"\nconcurrency-8 rows: medians of {args.conc_reps} fresh-server reps (tok/s):")
    for (name, w), values in reps.items():
        print(f"  {name}, {w}: " + ", ".join(f"{v:.1f}" for v in values))


if __name__ == "__main__":
    main()
