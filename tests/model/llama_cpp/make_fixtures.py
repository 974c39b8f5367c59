#!/usr/bin/env python3
"""Writes the llama.cpp fixtures of tests/model/llama_cpp_reference_test.cc.

For each family: a tiny synthetic GGUF (synth_family.py --shape tiny) into
tests/model/testdata/llama_cpp/<family>.gguf, llama.cpp's logits after every one of N fixed
token ids decoded in one batch (llama_logits, ubatch N) into <family>.llama_logits.f32 (raw
float32, [N, vocab]), and in tests/model/testdata/llama_cpp/fixtures.json the ids and
llama.cpp's divergence from itself when it decodes the same ids one token per call (ubatch 1):
the mean over positions of KL(batch || one by one), the scale the test's bar is set from.

Usage (see README.md for building llama_logits):
  python tests/model/llama_cpp/make_fixtures.py --llama-logits /tmp/llama_logits
      [--families gemma2,granite,olmo2,smollm3]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "testdata", "llama_cpp")
N_POSITIONS = 64
VOCAB = 128  # synth_family.TINY_VOCAB
SEED = 7
HYBRIDS = ("qwen35", "qwen35moe", "qwen3next")  # written by synth_qwen35.py


def log_softmax(x):
    x = x.astype(np.float64)
    x = x - x.max(axis=1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))


def llama_logits(tool, model, ids_path, ubatch):
    with tempfile.NamedTemporaryFile(suffix=".f32", delete=False) as f:
        out = f.name
    p = subprocess.run([tool, model, ids_path, out, str(ubatch), "1"], capture_output=True,
                       text=True)
    if p.returncode != 0:
        sys.exit(f"llama_logits failed on {model}: {p.stderr[-2000:]}")
    logits = np.fromfile(out, dtype=np.float32).reshape(N_POSITIONS, -1)
    os.remove(out)
    return logits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-logits", required=True, help="the built llama_logits.cc")
    ap.add_argument("--families", default="gemma2,gemma4,gemma4moe,glm4,granite,mistral3,"
                                          "mixtral,olmo2,phi3,qwen35,qwen35moe,qwen3moe,"
                                          "qwen3next,qwen3vl,qwen3vlmoe,smollm3")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    ids = np.random.default_rng(SEED).integers(0, VOCAB, size=N_POSITIONS, dtype=np.int32)
    manifest = {
        "generator": "tests/model/llama_cpp/make_fixtures.py",
        "llama_cpp": "llama-cpp-python 0.3.36's vendored llama.cpp (libllama, CPU)",
        "ids": ids.tolist(),
        "families": {},
    }
    # Families not written this time keep their fixtures.
    manifest_path = os.path.join(OUT, "fixtures.json")
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            old = json.load(f)
        if old.get("ids") == manifest["ids"]:
            manifest["families"] = old.get("families", {})
    with tempfile.NamedTemporaryFile(suffix=".ids", delete=False) as f:
        ids.tofile(f)
        ids_path = f.name
    for family in args.families.split(","):
        model = os.path.join(OUT, f"{family}.gguf")
        if family in HYBRIDS:  # (their own writer)
            argv = [os.path.join(HERE, "synth_qwen35.py"), model, "--arch", family]
        else:
            argv = [os.path.join(HERE, "synth_family.py"), family, model]
        p = subprocess.run([sys.executable] + argv + ["--shape", "tiny"], capture_output=True,
                           text=True)
        if p.returncode != 0:
            sys.exit(f"{os.path.basename(argv[0])} {family} failed: {p.stderr[-2000:]}")
        batch = llama_logits(args.llama_logits, model, ids_path, N_POSITIONS)
        one_by_one = llama_logits(args.llama_logits, model, ids_path, 1)
        batch.tofile(os.path.join(OUT, f"{family}.llama_logits.f32"))
        lb, l1 = log_softmax(batch), log_softmax(one_by_one)
        self_kl = float((np.exp(lb) * (lb - l1)).sum(axis=1).mean())
        # general.architecture
        arch = {"mixtral": "llama", "gemma4moe": "gemma4"}.get(family, family)
        manifest["families"][family] = {
            "arch": arch,
            "gguf": f"{family}.gguf",
            "logits": f"{family}.llama_logits.f32",
            "ubatch": N_POSITIONS,
            "self_kl_ubatch1": self_kl,
        }
        print(f"{family}: llama.cpp ubatch {N_POSITIONS} vs 1: mean KL {self_kl:.3e}")
    os.remove(ids_path)
    manifest["families"] = dict(sorted(manifest["families"].items()))
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
