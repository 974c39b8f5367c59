#!/usr/bin/env python3
"""`radixlm bench` against `radixlm serve` with the radix cache on, then off, in one run.

Starts the server (default model, 127.0.0.1) with the given flags, runs the
generated-shared-prefix workload through `radixlm bench`, stops it, and repeats with
--disable-radix-cache; prints both reports and the throughput ratio as JSON.

Usage:
  python bench/bench_serving.py [--radixlm build/apps/radixlm] [--groups 4 --prompts-per-group 8
      --system-len 512 --question-len 32 --output-len 16] [--threads 2]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_server import Server  # noqa: E402


def run_one(args, extra_flags):
    with Server(args.radixlm, args.model, ["--threads", str(args.threads), *extra_flags],
                log_prefix="bench-serve-") as server:
        url = server.url
        out = tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False).name
        proc = subprocess.run(
            [args.radixlm, "bench", "--base-url", url, "--backend", "radixlm",
             "--dataset-name", "generated-shared-prefix",
             "--gsp-num-groups", str(args.groups),
             "--gsp-prompts-per-group", str(args.prompts_per_group),
             "--gsp-system-prompt-len", str(args.system_len),
             "--gsp-question-len", str(args.question_len),
             "--gsp-output-len", str(args.output_len), "--seed", "1", "--output-file", out],
            capture_output=True, text=True, check=True)
        print(proc.stdout, file=sys.stderr)
        with open(out) as f:
            return json.loads(f.readline())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--radixlm", default="build/apps/radixlm")
    p.add_argument("--model", default=os.environ.get("RADIXLM_DEFAULT_MODEL", "default"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--groups", type=int, default=4)
    p.add_argument("--prompts-per-group", type=int, default=8)
    p.add_argument("--system-len", type=int, default=512)
    p.add_argument("--question-len", type=int, default=32)
    p.add_argument("--output-len", type=int, default=16)
    args = p.parse_args()
    on = run_one(args, [])
    off = run_one(args, ["--disable-radix-cache"])
    keys = ("completed", "duration_s", "request_throughput", "output_throughput",
            "total_cached_tokens")
    result = {
        "radix_on": {k: on[k] for k in keys} | {"ttft_mean_ms": on["ttft"]["mean_ms"]},
        "radix_off": {k: off[k] for k in keys} | {"ttft_mean_ms": off["ttft"]["mean_ms"]},
        "throughput_ratio_on_over_off": on["request_throughput"] / off["request_throughput"],
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
