#!/usr/bin/env python3
"""Prefill/decode disaggregation through SGLang's gateway (`smg`) vs one co-located server:
TTFT, TPOT and the KV transfer bandwidth.

PD: one `radixlm serve --disaggregation-mode prefill --threads T` and one `--disaggregation-mode
decode --threads T` (KV over UCX, UCX_TLS=tcp,shm,self unless set) behind `smg launch
--pd-disaggregation`. Co-located: one `radixlm serve --threads C` (C = --colocated-threads, by
default T; several values may be given) behind `smg launch --worker-urls`, so both paths take
the same gateway hop. The workload is the same for every setup: --requests prompts of
--min-tokens..--max-tokens tokens (distinct from their first token, so the radix cache supplies
nothing; caches are flushed before each run), --output-len output tokens each (greedy,
ignore_eos), streamed from /generate by --concurrency clients (each value in turn).

Per run: TTFT (request sent -> first streamed token) and TPOT ((last token - first token) /
(output tokens - 1)) p50 / p90, output tokens/s, and for PD the KV transfer: records, bytes and
bandwidth from the servers' radixlm:kv_transfer_bytes_total / kv_transfer_seconds_total
(/metrics; the prefill side times a send from its start to its completion, the decode side a
record from its announcement to its last byte). Then PD / co-located ratios. A JSON summary
goes to --output-file.

Usage: python bench/bench_pd.py [--radixlm build/apps/radixlm] [--model GGUF] [--threads 1]
       [--colocated-threads 1] [--requests 32] [--min-tokens 1000] [--max-tokens 2000]
       [--output-len 64] [--concurrency 1,4]
Smoke configuration (checks the script, measures nothing):
       python bench/bench_pd.py --requests 3 --min-tokens 60 --max-tokens 120 --output-len 4
       --concurrency 2
"""
import argparse
import json
import os
import random
import statistics
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from bench_gateway import WORDS, flush, metric, pad_to_tokens  # noqa: E402
from bench_server import Server  # noqa: E402
from compare_llama import model_path  # noqa: E402
from gateway import Gateway, free_port, smg_binary  # noqa: E402

KV_METRICS = ("radixlm:kv_transfers_total", "radixlm:kv_transfer_bytes_total",
              "radixlm:kv_transfer_seconds_total")


def prompts_of(server_url, n, min_tokens, max_tokens, seed):
    """n prompts, each distinct from its first token, of min_tokens..max_tokens tokens."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        target = rng.randint(min_tokens, max_tokens)
        words = [rng.choice(WORDS) for _ in range(max(4, int(target * 0.6)))]
        text = f"Request {i} ({' '.join(rng.sample(WORDS, 3))}): " + " ".join(words)
        out.append(pad_to_tokens(server_url, text, target, rng, 8))
    return out


def stream_one(url, text, output_len, timeout):
    """(outcome, ttft_s, tpot_s or None, output tokens); outcome "ok", "http NNN" or an error."""
    body = {"text": text, "stream": True, "sampling_params": {
        "max_new_tokens": output_len, "temperature": 0, "ignore_eos": True}}
    req = urllib.request.Request(url + "/generate", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    start = time.perf_counter()
    first = last = None
    tokens = 0
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            for raw in r:
                line = raw.decode().strip()
                if not line.startswith("data:") or line == "data: [DONE]":
                    continue
                event = json.loads(line[5:])
                meta = event.get("meta_info", {})
                if meta.get("finish_reason", {}) and meta["finish_reason"].get("type") == "abort":
                    return "aborted: " + str(meta["finish_reason"].get("message"))[:200], \
                        0.0, None, 0
                n = meta.get("completion_tokens", 0)
                if n > tokens:
                    now = time.perf_counter()
                    first = now if first is None else first
                    last = now
                    tokens = n
    except urllib.error.HTTPError as e:
        return f"http {e.code}", time.perf_counter() - start, None, 0
    except (urllib.error.URLError, ConnectionError, OSError) as e:
        return f"error {type(e).__name__}", time.perf_counter() - start, None, 0
    if first is None:
        return "no tokens", time.perf_counter() - start, None, 0
    tpot = (last - first) / (tokens - 1) if tokens > 1 else None
    return "ok", first - start, tpot, tokens


def percentile(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def kv_totals(server):
    return [metric(server, name) for name in KV_METRICS]


def run(args, setup, gateway_url, servers, items, concurrency, pd):
    flush(servers)
    before = {s.url: kv_totals(s) for s in servers} if pd else {}
    start = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(
            lambda text: stream_one(gateway_url, text, args.output_len, args.request_timeout),
            items))
    wall = time.perf_counter() - start
    ok = [r for r in results if r[0] == "ok"]
    outcomes = {}
    for r in results:
        outcomes[r[0]] = outcomes.get(r[0], 0) + 1
    ttft = [r[1] for r in ok]
    tpot = [r[2] for r in ok if r[2] is not None]
    report = {"setup": setup, "concurrency": concurrency, "requests": len(items),
              "outcomes": outcomes, "wall_s": wall,
              "output_tokens_per_s": sum(r[3] for r in ok) / wall,
              "ttft_p50_s": percentile(ttft, 50), "ttft_p90_s": percentile(ttft, 90),
              "tpot_p50_s": percentile(tpot, 50), "tpot_p90_s": percentile(tpot, 90)}
    if pd:
        for role, s in zip(("prefill", "decode"), servers):
            transfers, nbytes, seconds = (a - b for a, b in zip(kv_totals(s), before[s.url]))
            report[f"kv_{role}"] = {"transfers": transfers, "bytes": nbytes, "seconds": seconds,
                                    "bytes_per_s": nbytes / seconds if seconds > 0 else 0.0}
    return report


def print_report(r):
    kv = ""
    if "kv_decode" in r:
        p, d = r["kv_prefill"], r["kv_decode"]
        per_transfer_mb = d["bytes"] / d["transfers"] / 1e6 if d["transfers"] else 0.0
        kv = (f" | {d['transfers']:.0f} | {per_transfer_mb:.1f}"
              f" | {p['bytes_per_s'] / 1e9:.2f} | {d['bytes_per_s'] / 1e9:.2f}"
              f" | {1e3 * d['seconds'] / max(1, d['transfers']):.1f}")
    else:
        kv = " | | | | |"
    print(f"| {r['setup']} | {r['concurrency']} | {r['outcomes']} | {r['wall_s']:.1f} | "
          f"{r['output_tokens_per_s']:.1f} | {1e3 * r['ttft_p50_s']:.0f} | "
          f"{1e3 * r['ttft_p90_s']:.0f} | {1e3 * r['tpot_p50_s']:.1f} | "
          f"{1e3 * r['tpot_p90_s']:.1f}{kv} |", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--radixlm", default=os.path.join(ROOT, "build", "apps", "radixlm"))
    p.add_argument("--model", default=None)
    p.add_argument("--threads", type=int, default=1, help="threads of each PD server")
    p.add_argument("--colocated-threads", default=None,
                   help="comma-separated thread counts of the co-located server (default: "
                        "--threads)")
    p.add_argument("--requests", type=int, default=32)
    p.add_argument("--min-tokens", type=int, default=1000)
    p.add_argument("--max-tokens", type=int, default=2000)
    p.add_argument("--output-len", type=int, default=64)
    p.add_argument("--concurrency", default="1,4")
    p.add_argument("--request-timeout", type=float, default=600.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output-file", default=None)
    args = p.parse_args()

    smg, why = smg_binary()
    if smg is None:
        sys.exit("bench_pd: " + why)
    os.environ.setdefault("UCX_TLS", "tcp,shm,self")  # loopback; inherited by the servers
    model = model_path(args.model)
    concurrencies = [int(c) for c in args.concurrency.split(",")]
    colocated = [int(c) for c in (args.colocated_threads or str(args.threads)).split(",")]
    threads = ["--threads", str(args.threads)]
    summary = {"config": vars(args), "ucx_tls": os.environ["UCX_TLS"], "runs": []}
    print(f"{args.requests} requests, prompts {args.min_tokens}..{args.max_tokens} tokens, "
          f"{args.output_len} output tokens, concurrency {concurrencies}; PD: prefill + decode "
          f"servers x {args.threads} thread(s); co-located: {colocated} thread(s)", flush=True)
    print("| setup | concurrency | outcomes | wall s | output tok/s | TTFT p50 ms | TTFT p90 ms "
          "| TPOT p50 ms | TPOT p90 ms | KV transfers | MB per transfer | send GB/s | "
          "receive GB/s | receive ms per transfer |")
    print("|---" * 14 + "|", flush=True)

    runs = {}
    bootstrap_port = free_port()
    prefill = Server(args.radixlm, model, [*threads, "--disaggregation-mode", "prefill",
                                           "--disaggregation-bootstrap-port", str(bootstrap_port),
                                           "--disaggregation-transfer-backend", "ucx"],
                     log_prefix="bench-pd-prefill-")
    decode = gateway = None
    try:
        decode = Server(args.radixlm, model, [*threads, "--disaggregation-mode", "decode",
                                              "--disaggregation-transfer-backend", "ucx",
                                              "--disaggregation-timeout", "120"],
                        log_prefix="bench-pd-decode-")
        items = prompts_of(prefill.url, args.requests, args.min_tokens, args.max_tokens,
                           args.seed)
        gateway = Gateway([prefill.url, decode.url], policy="round_robin", routing_args=[
            "--pd-disaggregation", "--prefill", prefill.url, str(bootstrap_port),
            "--decode", decode.url])
        for c in concurrencies:
            r = run(args, f"PD {args.threads}+{args.threads} threads", gateway.url,
                    [prefill, decode], items, c, pd=True)
            runs[("pd", c)] = r
            print_report(r)
    finally:
        for proc in (gateway, decode, prefill):
            if proc is not None:
                proc.stop()
    for t in colocated:
        server = Server(args.radixlm, model, ["--threads", str(t)],
                        log_prefix="bench-pd-colocated-")
        gateway = None
        try:
            gateway = Gateway([server.url], policy="round_robin")
            for c in concurrencies:
                r = run(args, f"co-located {t} thread(s)", gateway.url, [server], items, c,
                        pd=False)
                runs[(t, c)] = r
                print_report(r)
        finally:
            if gateway is not None:
                gateway.stop()
            server.stop()
    summary["runs"] = list(runs.values())
    print()
    for t in colocated:
        for c in concurrencies:
            pd, co = runs[("pd", c)], runs[(t, c)]
            ratios = {
                "ttft_p50": pd["ttft_p50_s"] / co["ttft_p50_s"],
                "tpot_p50": pd["tpot_p50_s"] / co["tpot_p50_s"],
                "tpot_p90": pd["tpot_p90_s"] / co["tpot_p90_s"],
                "throughput": pd["output_tokens_per_s"] / co["output_tokens_per_s"]}
            summary.setdefault("ratios", []).append(
                {"colocated_threads": t, "concurrency": c, **ratios})
            print(f"PD / co-located {t} thread(s), concurrency {c}: TTFT p50 "
                  f"{ratios['ttft_p50']:.2f}x, TPOT p50 {ratios['tpot_p50']:.2f}x, TPOT p90 "
                  f"{ratios['tpot_p90']:.2f}x, output tok/s {ratios['throughput']:.2f}x",
                  flush=True)
    if args.output_file:
        with open(args.output_file, "a") as f:
            f.write(json.dumps(summary) + "\n")


if __name__ == "__main__":
    main()
