#!/usr/bin/env python3
"""A Gemma 3 Hugging Face folder (tests/e2e/hf_gemma_kit.py: gemma-3-270m's vocabulary as
tokenizer.model and tokenizer.json, random numpy weights) in radixlm against llama.cpp on the
GGUF the peer's convert_hf_to_gguf.py makes of it (the converter reads tokenizer.model for
Gemma 3; radixlm reads tokenizer.json when both are there, tokenizer.model alone otherwise):
  - KL(llama.cpp on the converter's F32 GGUF || radixlm serving the folder) over --n random
    ids, and llama.cpp's divergence from itself (one token per call);
  - the token ids of the tests' corpus (the distinct texts of
    tests/tokenizer/testdata/gemma3_tokenize_golden.json, special tokens parsed, no BOS) from
    llama-server's /tokenize on the converter's GGUF against radixlm's /tokenize on the folder
    with both tokenizer files and on the folder with tokenizer.model alone.
Usage: hf_gemma_compare.py --tools DIR --convert-python PY --radixlm BIN [--n 512]
DIR holds llama_logits and radixlm_logits (README.md says how to build them); the gemma-3-270m
GGUF is RADIXLM_DEFAULT_MODEL.
"""
import argparse
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np
import requests

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import hf_gemma_kit  # noqa: E402
from hf_compare import PEER, kl, logsoftmax, run  # noqa: E402

GOLDEN = ROOT / "tests" / "tokenizer" / "testdata" / "gemma3_tokenize_golden.json"
LLAMA_SERVER = PEER.parents[2] / "build" / "bin" / "llama-server"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(argv, port):
    p = subprocess.Popen([str(a) for a in argv], stdout=subprocess.DEVNULL,
                         stderr=subprocess.STDOUT)
    for _ in range(600):
        try:
            if requests.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return p
        except requests.RequestException:
            pass
        if p.poll() is not None:
            sys.exit(f"{argv[0]} exited with {p.returncode}")
        time.sleep(0.5)
    p.kill()
    sys.exit(f"{argv[0]} did not start")


def llama_ids(gguf, texts, threads):
    port = free_port()
    p = serve([LLAMA_SERVER, "-m", gguf, "--port", port, "-t", threads, "-c", 512], port)
    try:
        return [requests.post(f"http://127.0.0.1:{port}/tokenize",
                              json={"content": t, "add_special": False,
                                    "parse_special": True}).json()["tokens"] for t in texts]
    finally:
        p.terminate()
        p.wait()


def radixlm_ids(binary, folder, texts):
    port = free_port()
    p = serve([binary, "serve", "--host", "127.0.0.1", "--port", port, "--model-path", folder],
              port)
    try:
        r = requests.post(f"http://127.0.0.1:{port}/tokenize",
                          json={"prompt": texts, "add_special_tokens": False})
        return r.json()["tokens"]
    finally:
        p.terminate()
        p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", required=True)
    ap.add_argument("--convert-python", required=True)
    ap.add_argument("--radixlm", required=True)
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--keep", help="leave the folders and GGUF in this directory")
    args = ap.parse_args()
    gguf = os.environ.get("RADIXLM_DEFAULT_MODEL")
    if not gguf:
        sys.exit("set RADIXLM_DEFAULT_MODEL to gemma-3-270m's GGUF (the vocabulary)")
    work = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="hf_gemma_"))
    folder, spm_only = work / "folder", work / "folder-spm"
    for f in (folder, spm_only):
        if f.exists():
            shutil.rmtree(f)
    folder.mkdir(parents=True)
    shape = dict(hidden=256, layers=6, heads=4, kv_heads=1, head_dim=64, ffn=512,
                 sliding_window=128)
    hf_gemma_kit.write_folder(folder, gguf, seed=args.seed, shape=shape, dtype="F32")
    shutil.copytree(folder, spm_only)
    (spm_only / "tokenizer.json").unlink()
    print(f"folder: Gemma3ForCausalLM {shape}, F32 matrices; {args.n} positions")

    conv = work / "converter.f32.gguf"
    run([args.convert_python, PEER / "convert_hf_to_gguf.py", folder, "--outtype", "f32",
         "--outfile", conv])
    rng = np.random.default_rng(args.seed)
    ids = rng.integers(0, 262144, size=args.n, dtype=np.int32)
    ids.tofile(work / "ids")
    tools, t = pathlib.Path(args.tools), str(args.threads)
    run([tools / "llama_logits", conv, work / "ids", work / "L", args.n, t])
    run([tools / "llama_logits", conv, work / "ids", work / "L1", 1, t])
    load = lambda s: np.fromfile(work / s, dtype=np.float32).reshape(args.n, -1)  # noqa
    L, L1 = load("L"), load("L1")
    for name, f in (("tokenizer.json + tokenizer.model", folder),
                    ("tokenizer.model only", spm_only)):
        run([tools / "radixlm_logits", f, work / "ids", work / "R", args.n, t])
        R = load("R")
        lL, lL1, lR = logsoftmax(L), logsoftmax(L1), logsoftmax(R)
        kr, ks = kl(lL, lR), kl(lL, lL1)
        print(f"converter --outtype f32 vs radixlm folder ({name}): KL mean {kr.mean():.3e} "
              f"max {kr.max():.3e}, argmax agreement {(L.argmax(1) == R.argmax(1)).mean():.4f}; "
              f"llama.cpp self KL mean {ks.mean():.3e}, llama.cpp top-1 prob mean "
              f"{np.exp(lL.max(1)).mean():.3f}")

    texts = []
    for case in json.loads(GOLDEN.read_text())["cases"]:
        if case["text"] not in texts:
            texts.append(case["text"])
    want = llama_ids(conv, texts, t)
    for name, f in (("tokenizer.json + tokenizer.model", folder),
                    ("tokenizer.model only", spm_only)):
        got = radixlm_ids(args.radixlm, f, texts)
        bad = [(x, g, w) for x, g, w in zip(texts, got, want) if g != w]
        print(f"token ids, llama-server on the converter's GGUF vs radixlm on the folder "
              f"({name}): {len(texts) - len(bad)} of {len(texts)} texts identical")
        for x, g, w in bad[:5]:
            print(f"  {x[:60]!r}: radixlm {g[:16]} llama.cpp {w[:16]}")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
