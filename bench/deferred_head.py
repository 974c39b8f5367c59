"""A short request behind a long prompt that waits for running decodes, radixlm against llama-server.

One scenario per server, streamed /v1/completions at temperature 0 with ignore_eos:
a decode (a --decode-words prompt, --decode-tokens outputs) starts; --gap-s later a long
prompt (--long-words random words, 4 outputs) arrives; 0.2 s after it a short request
(--short-words words, --short-tokens outputs). radixlm defers the long prefill while the
decode would finish first (--defer-long-prefill) and admits the short request past it when
its whole work is less than that prefill; the figure to read is the short request's time to
first token. One warm-up request (--long-words / 6 words) first, so radixlm has timed a
prefill. Each --radixlm binary runs in turn (to compare builds), then llama-server (`-np 3`).

  python bench/deferred_head.py --radixlm build/apps/radixlm --model FILE.gguf [--no-peer]
"""
import argparse
import json
import random
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import llama_peer  # noqa: E402
from bench_server import LlamaServer, Server  # noqa: E402

WORDS = ["alpha", "river", "stone", "cloud", "maple", "quartz", "ember", "violet", "harbor",
         "tundra"]


def stream(url, prompt, max_tokens):
    """(seconds to the first streamed chunk, seconds to the end) of one request."""
    body = json.dumps({"model": "m", "prompt": prompt, "max_tokens": max_tokens,
                       "temperature": 0, "ignore_eos": True, "stream": True}).encode()
    req = urllib.request.Request(url + "/v1/completions", data=body,
                                 headers={"Content-Type": "application/json"})
    start, first = time.monotonic(), None
    with urllib.request.urlopen(req, timeout=1800) as resp:
        for line in resp:
            if first is None and line.startswith(b"data:"):
                first = time.monotonic() - start
    return first, time.monotonic() - start


def scenario(url, args):
    rng = random.Random(1)
    words = lambda n: " ".join(rng.choice(WORDS) for _ in range(n))  # noqa: E731
    stream(url, words(args.long_words // 6), 8)  # warm-up: a timed prefill
    out = {}

    def run(name, prompt, max_tokens):
        out[name] = stream(url, prompt, max_tokens)

    jobs = [("decode", words(args.decode_words), args.decode_tokens, args.gap_s),
            ("long", words(args.long_words), 4, 0.2),
            ("short", words(args.short_words), args.short_tokens, 0.0)]
    threads = []
    for name, prompt, max_tokens, pause in jobs:
        threads.append(threading.Thread(target=run, args=(name, prompt, max_tokens)))
        threads[-1].start()
        time.sleep(pause)
    for t in threads:
        t.join()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--radixlm", action="append", required=True, help="repeat to compare builds")
    ap.add_argument("--model", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--decode-words", type=int, default=50)
    ap.add_argument("--decode-tokens", type=int, default=200)
    ap.add_argument("--gap-s", type=float, default=0.5)
    ap.add_argument("--long-words", type=int, default=3500)
    ap.add_argument("--short-words", type=int, default=30)
    ap.add_argument("--short-tokens", type=int, default=8)
    ap.add_argument("--no-peer", action="store_true", help="skip llama-server")
    ap.add_argument("--peer-version", default=llama_peer.DEFAULT_VERSION)
    args = ap.parse_args()
    t = str(args.threads)
    results = []
    for binary in args.radixlm:
        with Server(binary, args.model, ["--threads", t]) as s:
            results.append((f"radixlm {binary}", scenario(s.url, args)))
    if not args.no_peer:
        server = llama_peer.ensure(args.peer_version)["llama-server"]
        with LlamaServer(server, args.model, ["-t", t, "-tb", t, "-np", "3", "-c", "16384"]) as s:
            results.append(("llama-server -np 3", scenario(s.url, args)))
    print("| server | short TTFT s | long TTFT s | decode end s | short end s |")
    print("|---|---|---|---|---|")
    for name, r in results:
        print(f"| {name} | {r['short'][0]:.3f} | {r['long'][0]:.3f} | {r['decode'][1]:.3f} "
              f"| {r['short'][1]:.3f} |")
    print(json.dumps({name: r for name, r in results}))


if __name__ == "__main__":
    main()
