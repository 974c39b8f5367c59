#!/usr/bin/env python3
"""radixlm's /v1/embeddings against llama.cpp's llama-embedding on synthetic encoders of real
embedders' shapes: the cosine of the two L2-normalised vectors of every text (the issue's bar:
>= 0.999 each), for CLS and mean pooling.

Models (random weights, numpy seeds of make_encoder_golden.py; bge-small's whole WordPiece
vocabulary, 30,522 tokens, from tests/data/llama-vocab/ggml-vocab-bert-bge.gguf):
  bge-small       bert, 384 wide, 12 layers, 12 heads, FFN 1536, context 512, F32 matrices
  minilm-l6       bert, 384 wide, 6 layers, 12 heads, FFN 1536, context 512, F16 matrices
  nomic-embed     nomic-bert, 768 wide, 12 layers, 12 heads, FFN 3072, context 2048, RoPE base
                  1000, F16 matrices
Texts: the 47 texts of tests/tokenizer/testdata/make_wordpiece_golden.py (the empty one left
out) and 50 sentences of 3 to 24 words drawn from a fixed word list (seed 5): 95 in all,
sent to radixlm as one list through the `openai` client and to llama-embedding one per line.

Usage (llama-embedding linked as README.md says):
  LLAMA=~/.cache/radixlm/llama-peer/0.3.36
  PYTHONPATH=$LLAMA/src/vendor/llama.cpp/gguf-py .venv/bin/python \\
      tests/model/llama_cpp/encoder_oracle.py --radixlm build/apps/radixlm \\
      --llama-embedding /tmp/llama-embedding [--threads 2] [--models bge-small,...]
  ... encoder_oracle.py --radixlm X --llama-embedding Y --write bge-small:/tmp/bge-small.gguf
      (writes that model only, for bench/bench_embeddings.py)
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np
import openai
import requests

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "model", "testdata"))
sys.path.insert(0, os.path.join(ROOT, "tests", "tokenizer", "testdata"))
import gguf  # noqa: E402  (llama.cpp's gguf-py)
import make_encoder_golden as meg  # noqa: E402
from embedding_oracle import free_port  # noqa: E402
from make_wordpiece_golden import CASES  # noqa: E402

WORDS = ("the radix tree shares every prefix of each request while an encoder reads "
         "whole sentences at once and pools its states into one vector for search ranking "
         "retrieval question answer document passage query model token cache").split()

SHAPES = {
    "bge-small": dict(arch="bert", hidden=384, heads=12, ffn=1536, layers=12, context=512,
                      dtype=np.float32),
    "minilm-l6": dict(arch="bert", hidden=384, heads=12, ffn=1536, layers=6, context=512,
                      dtype=np.float16),
    "nomic-embed": dict(arch="nomic-bert", hidden=768, heads=12, ffn=3072, layers=12,
                        context=2048, dtype=np.float16),
}


def texts():
    rng = random.Random(5)
    out = [t for t in CASES if t.strip()]
    out += [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 24))) for _ in range(50)]
    return [t.replace("\n", " ") for t in out]  # llama-embedding reads one text per line


def bge_vocab():
    r = gguf.GGUFReader(meg.BGE)
    return (r.fields["tokenizer.ggml.tokens"].contents(),
            [int(t) for t in r.fields["tokenizer.ggml.token_type"].contents()])


def radixlm_vectors(binary, model, pooling, threads, inputs):
    port = free_port()
    argv = [binary, "serve", "--model-path", model, "--port", str(port), "--threads",
            str(threads), "--is-embedding", "--pooling", pooling]
    log = tempfile.NamedTemporaryFile("w+", prefix="radixlm-encoder-", delete=False)
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(1500):
            try:
                if requests.get(url + "/health", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if proc.poll() is not None:
                sys.exit(f"radixlm exited:\n{open(log.name).read()[-3000:]}")
            time.sleep(0.2)
        client = openai.OpenAI(base_url=url + "/v1", api_key="none", timeout=600)
        r = client.embeddings.create(model="m", input=inputs)
        return np.array([d.embedding for d in r.data])
    finally:
        proc.terminate()
        proc.wait(30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--radixlm", required=True)
    ap.add_argument("--llama-embedding", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--models", default=",".join(SHAPES))
    ap.add_argument("--out", default=tempfile.gettempdir())
    ap.add_argument("--write", metavar="MODEL:PATH",
                    help="only write that synthetic model to PATH (e.g. for bench_embeddings.py)")
    args = ap.parse_args()
    tokens, types = bge_vocab()
    if args.write:
        name, path = args.write.split(":", 1)
        shape = dict(SHAPES[name])
        meg.write_model(path, shape.pop("arch"), tokens, types, name=name, **shape)
        return
    inputs = texts()
    print("| model | pooling | texts | min cosine | mean cosine |")
    print("|---|---|---|---|---|")
    for name in args.models.split(","):
        shape = dict(SHAPES[name])
        arch = shape.pop("arch")
        path = os.path.join(args.out, "radixlm-encoder-%s.gguf" % name)
        meg.write_model(path, arch, tokens, types, name=name, **shape)
        for pooling in ("cls", "mean"):
            ours = radixlm_vectors(args.radixlm, path, pooling, args.threads, inputs)
            theirs = np.array(meg.embed(args.llama_embedding, path, pooling, inputs,
                                        threads=args.threads, ctx=8192))
            cos = np.sum(ours * theirs, axis=1) / (
                np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1))
            print("| %s | %s | %d | %.7f | %.7f |" % (name, pooling, len(inputs), cos.min(),
                                                    cos.mean()), flush=True)
        os.unlink(path)


if __name__ == "__main__":
    main()
