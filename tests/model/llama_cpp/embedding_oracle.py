#!/usr/bin/env python3
"""radixlm's /v1/embeddings against llama.cpp's llama-embedding on the same GGUF and pooling:
the cosine of the two vectors of every text (the issue's bar: >= 0.999 each).

The decoder embedder is SmolLM2-135M-Instruct's GGUF (RADIXLM_CHAT_MODEL) copied with
`llama.pooling_type` written (3: last, what Qwen3-Embedding / gte-Qwen2 / e5-mistral use), so
both sides read the pooling from the file; then the original file with mean pooling forced by
the flag on both sides (radixlm `--pooling mean`, llama-embedding `--pooling mean`). Both
normalise (L2), llama-embedding's default. Texts go one per line to llama-embedding; radixlm
gets them as one list through the `openai` client.

llama-embedding is llama.cpp's examples/embedding, which the peer build does not make
(LLAMA_BUILD_EXAMPLES off); README.md says how to link it against the peer's libraries.

Usage: embedding_oracle.py --radixlm build/apps/radixlm --llama-embedding /tmp/llama-embedding
       [--threads 2] [--out DIR]
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np
import openai
import requests

sys.path.insert(0, os.environ.get("GGUF_PY", os.path.expanduser(
    "~/.cache/radixlm/llama-peer/0.3.36/src/vendor/llama.cpp/gguf-py")))
import gguf  # noqa: E402

TEXTS = [
    "The radix tree shares every prefix.",
    "What is the capital of France?",
    "Embeddings map text to vectors; similar texts land close together.",
    "def add(a, b):\treturn a + b",
    "Une phrase en français, avec des accents: élève, où, ça.",
    "1 2 3 4 5 6 7 8 9 10",
    "A much longer input that keeps going for a while so that the prompt spans more than a few "
    "dozen tokens, which exercises attention over a longer context and the pooling of many "
    "positions when mean pooling is used.",
    "short",
]


def with_pooling_type(src, dst, pooling_type):
    """A copy of the GGUF at src with <arch>.pooling_type set."""
    reader = gguf.GGUFReader(src)
    arch = reader.fields["general.architecture"].contents()
    w = gguf.GGUFWriter(dst, arch)
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        vtype = field.types[0]
        sub = field.types[1] if vtype == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(key, field.contents(), vtype, sub_type=sub)
    w.add_uint32(f"{arch}.pooling_type", pooling_type)
    for t in reader.tensors:
        w.add_tensor(t.name, t.data, raw_dtype=t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def llama_vectors(tool, model, pooling, threads):
    argv = [tool, "-m", model, "-p", "\n".join(TEXTS), "--embd-output-format", "json",
            "-t", str(threads), "-c", "2048", "-b", "2048", "-ub", "2048"]
    if pooling:
        argv += ["--pooling", pooling]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"llama-embedding failed:\n{p.stderr[-3000:]}")
    data = json.loads(p.stdout)["data"]
    return np.array([d["embedding"] for d in sorted(data, key=lambda d: d["index"])])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def radixlm_vectors(binary, model, pooling, threads):
    port = free_port()
    argv = [binary, "serve", "--model-path", model, "--port", str(port), "--threads",
            str(threads), "--is-embedding"]
    if pooling:
        argv += ["--pooling", pooling]
    log = tempfile.NamedTemporaryFile("w+", prefix="radixlm-embed-", delete=False)
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                if requests.get(url + "/health", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if proc.poll() is not None:
                sys.exit(f"radixlm exited:\n{open(log.name).read()[-3000:]}")
            time.sleep(0.2)
        client = openai.OpenAI(base_url=url + "/v1", api_key="none")
        r = client.embeddings.create(model="m", input=TEXTS)
        return np.array([d.embedding for d in r.data])
    finally:
        proc.terminate()
        proc.wait(30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--radixlm", required=True)
    ap.add_argument("--llama-embedding", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--model", default=os.environ.get("RADIXLM_CHAT_MODEL", ""))
    args = ap.parse_args()
    if not args.model:
        sys.exit("set RADIXLM_CHAT_MODEL (SmolLM2-135M-Instruct's GGUF) or pass --model")
    work = tempfile.mkdtemp(prefix="embedding-oracle-")
    last_file = os.path.join(work, "decoder_last.gguf")
    with_pooling_type(args.model, last_file, 3)
    cases = [("decoder, pooling_type 3 (last) in the file", last_file, None),
             ("decoder, --pooling mean", args.model, "mean")]
    worst = 1.0
    print("| case | texts | min cosine | mean cosine |")
    print("|---|---|---|---|")
    for name, model, pooling in cases:
        a = llama_vectors(args.llama_embedding, model, pooling, args.threads)
        b = radixlm_vectors(args.radixlm, model, pooling, args.threads)
        cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        worst = min(worst, cos.min())
        print(f"| {name} | {len(TEXTS)} | {cos.min():.6f} | {cos.mean():.6f} |")
    print(f"worst cosine {worst:.6f}: {'PASS' if worst >= 0.999 else 'FAIL'} (bar 0.999)")
    sys.exit(0 if worst >= 0.999 else 1)


if __name__ == "__main__":
    main()
