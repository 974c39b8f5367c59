#!/usr/bin/env python3
"""compare.py over quant types: quantizes one F16 GGUF to each --types with the peer's
llama-quantize (a uniform importance matrix for the types that need one, as
bench/synth_models.py does), runs compare.py on each file, and prints one Markdown row per
type: KL(llama.cpp || radixlm), llama.cpp's KL from itself at one token per call, the bar
max(2 x self, 0.01 nats), argmax agreements and the confident top-1 agreement.

Usage: compare_types.py SRC_F16.gguf --tools DIR [--types Q2_K,IQ4_XS,...] [--work DIR]
       [--keep] [compare.py's --n / --chunk / --threads]

--keep leaves the quantized files in --work (SRC-TYPE.gguf), for speed runs on the same files.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import llama_peer  # noqa: E402
import synth_models  # noqa: E402

DEFAULT_TYPES = "Q2_K,Q3_K_M,IQ4_NL,IQ4_XS,IQ3_XXS,IQ3_S,IQ2_XXS,IQ2_XS,IQ2_S,IQ2_M,IQ1_S,IQ1_M"


def quantize(src, out, qtype, threads):
    cmd = [str(llama_peer.ensure()["llama-quantize"])]
    imatrix = None
    if qtype in synth_models.NEEDS_IMATRIX:
        imatrix = out.with_suffix(".imatrix")
        synth_models.write_uniform_imatrix(src, imatrix)
        cmd += ["--imatrix", str(imatrix)]
    cmd += [str(src), str(out), qtype, str(threads)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if imatrix:
        imatrix.unlink(missing_ok=True)
    if p.returncode != 0:
        sys.exit(f"llama-quantize {qtype} failed:\n{(p.stdout + p.stderr)[-2000:]}")
    # The tensor types the file holds, with counts (llama-quantize's mixes vary by layer).
    counts = {}
    for m in re.finditer(r"converting to (\w+) ", p.stdout + p.stderr):
        counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("--tools", required=True)
    ap.add_argument("--types", default=DEFAULT_TYPES)
    ap.add_argument("--work", default=tempfile.gettempdir())
    ap.add_argument("--n", default="640")
    ap.add_argument("--chunk", default="640")
    ap.add_argument("--threads", default="2")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    src = Path(args.src)
    print("| type | tensors (llama-quantize's mix) | KL(llama.cpp ‖ radixlm) mean / max | "
          "KL self mean | bar | argmax agreement (radixlm / self) | confident top-1 |")
    print("|---|---|---|---|---|---|---|")
    for qtype in [t for t in args.types.split(",") if t]:
        out = Path(args.work) / f"{src.stem}-{qtype}.gguf"
        counts = quantize(src, out, qtype, int(args.threads)) if not out.exists() else {}
        p = subprocess.run([sys.executable, str(HERE / "compare.py"), str(out), "--tools",
                            args.tools, "--n", args.n, "--chunk", args.chunk, "--threads",
                            args.threads], capture_output=True, text=True)
        if not args.keep:
            out.unlink(missing_ok=True)
        text = p.stdout + p.stderr
        if p.returncode != 0:
            print(f"| {qtype} | | failed: {text.strip().splitlines()[-1]} | | | | |", flush=True)
            continue
        kr = re.search(r"radixlm chunk \d+\): mean (\S+) max (\S+); argmax agreement (\S+)", text)
        ks = re.search(r"ubatch \d+\): mean (\S+) max \S+; argmax agreement (\S+)", text)
        conf = re.search(r"confident positions .*?: (\d+); radixlm top-1 agreement there (\S+)",
                         text)
        bar = re.search(r"bar max\(2 x self, 0.01\) = (\S+): (\w+)", text)
        mix = ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
        c = f"{round(float(conf.group(2)) * int(conf.group(1)))} / {conf.group(1)}" if conf else "-"
        print(f"| {qtype} | {mix} | {kr.group(1)} / {kr.group(2)} | {ks.group(1)} | "
              f"{bar.group(1)} {bar.group(2)} | {kr.group(3)} / {ks.group(2)} | {c} |", flush=True)


if __name__ == "__main__":
    main()
