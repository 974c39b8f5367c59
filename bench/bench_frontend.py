#!/usr/bin/env python3
"""Frontend programs vs the same calls as independent OpenAI requests, radix cache on and off.

For each example (tree_of_thought, llm_judge, few_shot_qa) and each server (`radixlm serve`
with the radix cache, then with --disable-radix-cache), on a flushed cache:
  1. frontend: the example binary runs its programs with --remote (forks commit their prefix
     once, branches run concurrently, RunBatch commits the batch's common prefix);
  2. independent: the model calls the program made (recorded with --dump-calls) are replayed
     one after another, in program order, as /v1/completions requests — what a client without
     the frontend sends: each gen as a completion (same prompt, max_tokens, temperature, stop),
     each select option as a completion of prefix + option with max_tokens 1 (the prompt is
     what costs; OpenAI's API has no prompt-logprob scoring here), and no prefix commits.
Prefill tokens computed come from the server's /metrics (prefill_computed_tokens_total); wall
time is the example's own run time (model already loaded), or the replay's.

Usage:
  python bench/bench_frontend.py [--radixlm build/apps/radixlm] [--examples-dir build/examples]
      [--threads 2] [--out results.json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_server import Server  # noqa: E402

EXAMPLES = ["tree_of_thought", "llm_judge", "few_shot_qa"]


def http(url, body=None, timeout=600):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read().decode()


def prefill_computed(url):
    for line in http(url + "/metrics").splitlines():
        if line.startswith("#"):
            continue
        name, _, value = line.rpartition(" ")
        if name.split("{")[0].endswith("prefill_computed_tokens_total"):
            return int(float(value))
    raise RuntimeError("no prefill_computed_tokens_total in /metrics")


def completion_body(call):
    p = call.get("sampling_params", {})
    body = {"model": "default", "prompt": call["prompt"],
            "max_tokens": p.get("max_new_tokens") if p.get("max_new_tokens") is not None else 128,
            "temperature": p.get("temperature", 1.0)}
    if p.get("stop"):
        body["stop"] = p["stop"]
    for key in ("top_p", "frequency_penalty", "presence_penalty"):
        if key in p:
            body[key] = p[key]
    return body


def replay(url, calls):
    start = time.perf_counter()
    for call in calls:
        if call["kind"] == "generate":
            body = completion_body(call)
        elif call["kind"] == "score":
            body = {"model": "default", "prompt": call["prompt"], "max_tokens": 1,
                    "temperature": 0}
        else:
            continue  # prefix commits are the frontend's own
        http(url + "/v1/completions", body)
    return time.perf_counter() - start


def measure(args, url, example):
    http(url + "/flush_cache", {})
    before = prefill_computed(url)
    calls_file = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    done = subprocess.run([os.path.join(args.examples_dir, example), "--remote", url, "--json",
                           "--dump-calls", calls_file], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{example} failed: {done.stderr}")
    out = json.loads(done.stdout)
    frontend = {"prefill_tokens": prefill_computed(url) - before, "wall_s": out["wall_s"],
                "prompt_tokens": out["calls"]["prompt_tokens"]}
    with open(calls_file) as f:
        calls = json.load(f)
    http(url + "/flush_cache", {})
    before = prefill_computed(url)
    wall = replay(url, calls)
    independent = {"prefill_tokens": prefill_computed(url) - before, "wall_s": wall,
                   "requests": sum(c["kind"] != "commit" for c in calls)}
    return {"frontend": frontend, "independent": independent}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--radixlm", default="build/apps/radixlm")
    p.add_argument("--examples-dir", default="build/examples")
    p.add_argument("--model", default=os.environ.get("RADIXLM_DEFAULT_MODEL", "default"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default="")
    args = p.parse_args()
    results = {}
    for label, extra in (("radix_on", []), ("radix_off", ["--disable-radix-cache"])):
        with Server(args.radixlm, args.model, ["--threads", str(args.threads), *extra],
                    log_prefix="bench-frontend-") as server:
            for example in EXAMPLES:
                results.setdefault(example, {})[label] = measure(args, server.url, example)
                print(example, label, json.dumps(results[example][label]), file=sys.stderr)
    text = json.dumps(results, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
