#!/usr/bin/env python3
"""radixlm replicas behind SGLang's model gateway (`smg`): cache_aware vs round_robin routing on
a multi-tenant workload, then a replica killed mid-run.

Starts --replicas `radixlm serve --threads T` processes and, per policy, one `smg launch
--worker-urls ... --policy P` in front of them (fresh gateway, replicas' caches flushed). The
workload: --tenants system prompts of about --system-tokens tokens each (distinct text from the
first word), --questions questions per tenant, all (tenant, question) pairs shuffled with a
fixed seed and sent as /generate requests through the gateway by --concurrency clients
(temperature 0, ignore_eos, --output-len tokens each). Per policy it reports the prefill tokens
the replicas computed (the sum over replicas of radixlm:prefill_computed_tokens_total from
their /metrics, before and after), the tokens their radix caches supplied, wall time and
throughput, and how the requests spread over the replicas. The issue's bar: cache_aware
computes >= 2x fewer prefill tokens and gives >= 1.5x the throughput of round_robin.

smg runs with `--balance-rel-threshold 2.5` unless --smg-args is given (then exactly those
flags): smg's default spill gate (1.5x the fleet's mean in-flight count, margin at least 4)
sends a request past the replica holding its ~1,000-token prefix whenever that replica has a
few more requests in flight than the others, and on replicas of one CPU thread recomputing the
prefix elsewhere (seconds) costs far more than waiting behind a few decodes. RESULTS.md has
the run with smg's defaults too (`--smg-args` with nothing after it).

Then (unless --no-kill) the cache_aware run again, with one replica SIGKILLed once --kill-after
of the requests have completed: it reports every request's outcome (ok / HTTP error / client
timeout after --request-timeout s) and the latencies after the kill, so "no request hangs" is
checked, not assumed. A JSON summary goes to --output-file.

Usage: python bench/bench_gateway.py [--radixlm build/apps/radixlm] [--model GGUF]
       [--replicas 4] [--threads 1] [--tenants 16] [--system-tokens 1000] [--questions 12]
       [--output-len 16] [--concurrency 16] [--policies cache_aware,round_robin]
Smoke configuration (checks the script, measures nothing):
       python bench/bench_gateway.py --replicas 2 --tenants 3 --system-tokens 80 --questions 2
       --output-len 2 --concurrency 2
"""
import argparse
import json
import os
import random
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from bench_server import Server  # noqa: E402
from compare_llama import model_path  # noqa: E402
from gateway import Gateway, smg_binary  # noqa: E402

WORDS = ("river mountain ledger violin harbor pepper lantern quartz meadow cobalt falcon "
         "granite orchard velvet compass thunder saffron glacier tunnel marble beacon cedar "
         "harvest copper whisper anchor prism canyon ember willow summit lattice nebula "
         "oyster rhythm saddle tundra walnut zephyr bramble cipher dune fjord garnet heron "
         "ivory jasmine kettle lichen mosaic nectar obsidian parcel quiver rampart sable").split()


def post_json(url, body, timeout):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def get_text(url, timeout=30):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def count_tokens(server_url, text):
    return post_json(server_url + "/tokenize", {"prompt": text}, 60)["count"]


def pad_to_tokens(server_url, text, target_tokens, rng, step):
    """text with `step` random words appended at a time until it is target_tokens long."""
    while count_tokens(server_url, text) < target_tokens:
        text += " " + " ".join(rng.choice(WORDS) for _ in range(step))
    return text


def system_prompts(server_url, tenants, target_tokens, rng):
    prompts = []
    for t in range(tenants):
        words = [rng.choice(WORDS) for _ in range(max(4, int(target_tokens * 0.7)))]
        text = f"Tenant {t} ({' '.join(rng.sample(WORDS, 3))}) instructions: " + " ".join(words)
        prompts.append(pad_to_tokens(server_url, text, target_tokens, rng, 16))
    return prompts


def workload(prompts, questions, seed):
    rng = random.Random(seed)
    items = [(t, q, f"{prompts[t]}\nQuestion {q}: what does {rng.choice(WORDS)} mean for "
              f"{rng.choice(WORDS)} and {rng.choice(WORDS)}?\nAnswer:")
             for t in range(len(prompts)) for q in range(questions)]
    rng.shuffle(items)
    return items


def metric(server, name):
    total = 0.0
    for line in get_text(server.url + "/metrics").splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            total += float(line.rsplit(" ", 1)[1])
    return total


def metric_delta(servers, before, name):
    """Sum over `servers` of the counter's growth since `before` (one value per server)."""
    return sum(metric(s, name) - b for s, b in zip(servers, before))


def finished_per_replica(servers):
    out = []
    for s in servers:
        with urllib.request.urlopen(s.url + "/get_server_info", timeout=30) as r:
            out.append(json.loads(r.read())["internal_states"][0]["finished_requests"])
    return out


def flush(servers):
    for s in servers:
        req = urllib.request.Request(s.url + "/flush_cache", data=b"", method="POST")
        urllib.request.urlopen(req, timeout=60).read()


def send(gateway_url, text, output_len, timeout):
    """(outcome, seconds, prompt_tokens, cached_tokens); outcome "ok", "http NNN" or "timeout"."""
    body = {"text": text, "sampling_params": {"max_new_tokens": output_len, "temperature": 0,
                                              "ignore_eos": True}}
    start = time.perf_counter()
    try:
        out = post_json(gateway_url + "/generate", body, timeout)
        meta = out["meta_info"]
        return "ok", time.perf_counter() - start, meta["prompt_tokens"], meta["cached_tokens"]
    except urllib.error.HTTPError as e:
        return f"http {e.code}", time.perf_counter() - start, 0, 0
    except TimeoutError:
        return "timeout", time.perf_counter() - start, 0, 0
    except (urllib.error.URLError, ConnectionError, OSError) as e:
        kind = "timeout" if "timed out" in str(e) else f"error {type(e).__name__}"
        return kind, time.perf_counter() - start, 0, 0


def run_policy(args, servers, items, policy, kill_after=None):
    flush(servers)
    gateway = Gateway([s.url for s in servers], policy=policy, extra_args=args.smg_args)
    try:
        prefill_name, hits_name = ("radixlm:prefill_computed_tokens_total",
                                   "radixlm:cache_hit_tokens_total")
        prefill_before = [metric(s, prefill_name) for s in servers]
        hits_before = [metric(s, hits_name) for s in servers]
        finished_before = finished_per_replica(servers)
        results = [None] * len(items)
        done = [0]
        killed = {}
        lock = threading.Lock()

        def one(i):
            # (outcome, seconds, prompt tokens, cached tokens, end time)
            outcome = send(gateway.url, items[i][2], args.output_len, args.request_timeout)
            results[i] = outcome + (time.perf_counter(),)
            with lock:
                done[0] += 1
                if kill_after is not None and not killed and done[0] >= kill_after:
                    killed["at"] = time.perf_counter()
                    killed["after_completed"] = done[0]
                    servers[-1].proc.kill()
                    servers[-1].proc.wait()

        start = time.perf_counter()
        with ThreadPoolExecutor(args.concurrency) as pool:
            list(pool.map(one, range(len(items))))
        wall = time.perf_counter() - start
        # After a kill, only the survivors can be asked: their counters alone are summed.
        alive = len(servers) if kill_after is None else len(servers) - 1
        report = {
            "policy": policy,
            "requests": len(items),
            "wall_s": wall,
            "outcomes": {},
            "prefill_tokens": metric_delta(servers[:alive], prefill_before, prefill_name),
            "cache_hit_tokens": metric_delta(servers[:alive], hits_before, hits_name),
        }
        for r in results:
            report["outcomes"][r[0]] = report["outcomes"].get(r[0], 0) + 1
        ok = [r for r in results if r[0] == "ok"]
        report["requests_per_s"] = len(ok) / wall
        report["output_tokens_per_s"] = len(ok) * args.output_len / wall
        report["mean_latency_s"] = sum(r[1] for r in ok) / max(1, len(ok))
        report["max_latency_s"] = max(r[1] for r in results)
        if kill_after is None:
            report["per_replica"] = [a - b for a, b in
                                     zip(finished_per_replica(servers), finished_before)]
        else:
            report["killed"] = killed
            report["prefill_tokens_scope"] = "surviving replicas"
            after = [r for r in results if r[4] > killed.get("at", float("inf"))]
            report["after_kill"] = {"requests": len(after),
                                    "ok": sum(1 for r in after if r[0] == "ok"),
                                    "max_latency_s": max((r[1] for r in after), default=0.0)}
            report["gateway_workers"] = [{"url": w["url"], "status": w["status"],
                                          "is_healthy": w["is_healthy"]}
                                         for w in gateway.workers()]
        return report
    finally:
        gateway.stop()


def print_report(r):
    print(f"{r['policy']:>12}: {r['requests']} requests in {r['wall_s']:.1f} s, "
          f"{r['requests_per_s']:.2f} req/s, {r['output_tokens_per_s']:.1f} out tok/s, "
          f"prefill computed {r['prefill_tokens']:.0f} tokens, cache supplied "
          f"{r['cache_hit_tokens']:.0f}, outcomes {r['outcomes']}, max latency "
          f"{r['max_latency_s']:.1f} s", flush=True)
    if "per_replica" in r:
        print(f"{'':>14}requests per replica: {r['per_replica']}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--radixlm", default=os.path.join(ROOT, "build", "apps", "radixlm"))
    p.add_argument("--model", default=None)
    p.add_argument("--replicas", type=int, default=4)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--tenants", type=int, default=16)
    p.add_argument("--system-tokens", type=int, default=1000)
    p.add_argument("--questions", type=int, default=12)
    p.add_argument("--output-len", type=int, default=16)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--policies", default="cache_aware,round_robin")
    p.add_argument("--request-timeout", type=float, default=300.0,
                   help="client timeout per request (s): a request past it counts as hung")
    p.add_argument("--kill-after", type=float, default=0.5,
                   help="kill a replica once this share of the requests has completed")
    p.add_argument("--no-kill", action="store_true", help="skip the replica-kill run")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--smg-args", nargs=argparse.REMAINDER, default=None,
                   help="flags for smg launch instead of the default --balance-rel-threshold "
                        "2.5 (last on the line; nothing after it: smg's defaults)")
    p.add_argument("--output-file", default=None)
    args = p.parse_args()
    if args.smg_args is None:
        args.smg_args = ["--balance-rel-threshold", "2.5"]

    smg, why = smg_binary()
    if smg is None:
        sys.exit("bench_gateway: " + why)
    model = model_path(args.model)
    serve_flags = ["--threads", str(args.threads)]
    print(f"{args.replicas} replicas x {args.threads} thread(s); {args.tenants} tenants x "
          f"{args.questions} questions, system prompts ~{args.system_tokens} tokens, "
          f"{args.output_len} output tokens, concurrency {args.concurrency}", flush=True)
    servers = [Server(args.radixlm, model, serve_flags, log_prefix=f"bench-replica{i}-")
               for i in range(args.replicas)]
    summary = {"config": {k: v for k, v in vars(args).items() if k != "smg_args"},
               "smg_args": args.smg_args, "runs": []}
    try:
        rng = random.Random(args.seed)
        prompts = system_prompts(servers[0].url, args.tenants, args.system_tokens, rng)
        items = workload(prompts, args.questions, args.seed)
        runs = {}
        for policy in args.policies.split(","):
            runs[policy] = run_policy(args, servers, items, policy)
            print_report(runs[policy])
            summary["runs"].append(runs[policy])
        if "cache_aware" in runs and "round_robin" in runs:
            ca, rr = runs["cache_aware"], runs["round_robin"]
            prefill_ratio = rr["prefill_tokens"] / max(1.0, ca["prefill_tokens"])
            speedup = ca["requests_per_s"] / max(1e-9, rr["requests_per_s"])
            summary["prefill_ratio"] = prefill_ratio
            summary["throughput_ratio"] = speedup
            print(f"round_robin / cache_aware prefill tokens: {prefill_ratio:.2f}x (bar: >= 2); "
                  f"cache_aware / round_robin throughput: {speedup:.2f}x (bar: >= 1.5)")
        if not args.no_kill and args.replicas >= 2:
            kill_at = max(1, int(len(items) * args.kill_after))
            r = run_policy(args, servers, items, "cache_aware", kill_after=kill_at)
            r["policy"] = "cache_aware, replica killed"
            print_report(r)
            print(f"{'':>14}killed {servers[-1].url} after {r['killed'].get('after_completed')} "
                  f"completions; after the kill: {r['after_kill']}; gateway's view: "
                  f"{r['gateway_workers']}", flush=True)
            hung = r["outcomes"].get("timeout", 0)
            print(f"{'':>14}requests past the {args.request_timeout:.0f} s client timeout "
                  f"(hung): {hung}", flush=True)
            summary["runs"].append(r)
    finally:
        for s in servers:
            s.stop()
    if args.output_file:
        with open(args.output_file, "a") as f:
            f.write(json.dumps(summary) + "\n")


if __name__ == "__main__":
    main()
