"""Peak memory of `radixlm serve` against llama-server on one GGUF, at the same KV capacity.

Each server runs alone: started, read after /health answers (VmHWM and VmRSS of
/proc/PID/status), sent one /v1/completions request (a prompt of --words random words,
max_tokens 8, temperature 0), read again, stopped. radixlm gets `--max-total-tokens TOKENS`,
llama-server `-c TOKENS -np 1`; both 2 threads unless --threads says otherwise.

  python bench/peak_rss.py --radixlm build/apps/radixlm --model FILE.gguf [--tokens 8192]

Memory only: run it beside other work if need be, but not beside another large process.
"""
import argparse
import json
import random
import sys
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import llama_peer  # noqa: E402
from bench_server import LlamaServer, Server  # noqa: E402

WORDS = ["alpha", "river", "stone", "green", "quick", "model", "seven", "cloud"]


def status_kb(pid):
    out = {}
    for line in open(f"/proc/{pid}/status"):
        key = line.split(":")[0]
        if key in ("VmHWM", "VmRSS"):
            out[key] = int(line.split()[1])
    return out


def probe(server, prompt):
    after_load = status_kb(server.proc.pid)
    body = json.dumps({"model": "m", "prompt": prompt, "max_tokens": 8,
                       "temperature": 0}).encode()
    req = urllib.request.Request(server.url + "/v1/completions", data=body,
                                 headers={"Content-Type": "application/json"})
    usage = json.loads(urllib.request.urlopen(req, timeout=1800).read())["usage"]
    return {"after_load": after_load, "after_request": status_kb(server.proc.pid),
            "prompt_tokens": usage["prompt_tokens"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--radixlm", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--tokens", type=int, default=8192, help="KV capacity in tokens")
    ap.add_argument("--words", type=int, default=1100, help="prompt length in words")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--peer-version", default=llama_peer.DEFAULT_VERSION)
    args = ap.parse_args()
    rng = random.Random(1)
    prompt = " ".join(rng.choice(WORDS) for _ in range(args.words))
    t = str(args.threads)
    results = {}
    with Server(args.radixlm, args.model, ["--threads", t, "--max-total-tokens",
                                           str(args.tokens)], start_timeout=1800) as s:
        results["radixlm"] = probe(s, prompt)
    server = llama_peer.ensure(args.peer_version)["llama-server"]
    with LlamaServer(server, args.model, ["-t", t, "-tb", t, "-c", str(args.tokens), "-np", "1"],
                     start_timeout=1800) as s:
        results["llama-server"] = probe(s, prompt)
    r, l = results["radixlm"], results["llama-server"]
    for name, v in results.items():
        print(f"{name}: VmHWM {v['after_load']['VmHWM'] / 1e6:.2f} GB after load, "
              f"{v['after_request']['VmHWM'] / 1e6:.2f} GB after a {v['prompt_tokens']}-token "
              f"prompt (VmRSS {v['after_request']['VmRSS'] / 1e6:.2f} GB)")
    ratio = r["after_request"]["VmHWM"] / l["after_request"]["VmHWM"]
    print(f"peak RSS radixlm / llama-server: {ratio:.2f}x")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
