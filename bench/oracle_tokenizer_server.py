#!/usr/bin/env python3
"""Golden token ids for a BPE model's tokenizer, from llama.cpp's own server (no Python binding).

Tokenizes the strings of bench/oracle_tokenizer.py (code, emoji, CJK, white-space runs, numbers,
special-token text, seeded random mixtures) plus ChatML text with llama-server's /tokenize
(parse_special off and on, add_special off) and decodes the ids with its /detokenize (each
token's piece with special tokens shown: llama_detokenize with unparse_special, which for a
model whose pre-tokenizer does no space clean-up, SmolLM2's, is the pieces joined). Writes the
JSON that tests/tokenizer/smollm2_golden_test.cc compares radixlm against.

    python bench/oracle_tokenizer_server.py --model SmolLM2-135M-Instruct.Q4_1.gguf \
        [--out tests/tokenizer/testdata/smollm2_tokenize_golden.json]

llama-server comes from bench/llama_peer.py (built once into a cache outside the repository).
"""
import argparse
import json
import os
import random
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import llama_peer  # noqa: E402
import oracle_tokenizer  # noqa: E402
from bench_server import LlamaServer  # noqa: E402

DEFAULT_OUT = os.path.join(ROOT, "tests", "tokenizer", "testdata",
                           "smollm2_tokenize_golden.json")

CHATML_STRINGS = [
    "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\n<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n",
    '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}',
    "<|endoftext|><repo_name>radixlm<file_sep>src/main.cc<filename>",
    "<|im_start|> <|im_end|>  <|im_start|>\n\n",
    "Digits one by one: 0 12 345 6789 3.14159 1,000,000 2025-03-14 x86_64",
    "camelCaseIdentifier snake_case_identifier SCREAMING_CASE __dunder__",
]
RANDOM_CASES = 40
RANDOM_SEED = 20261202
RANDOM_PIECES = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<file_sep>", "     ", "\n\n\n",
                 "\t\t", "'s", "'LL", "<", ">", "{", "}", '"', " ", "  ", "\n", "\r\n", "\t",
                 "123", "4", " 56"]


def random_strings():
    rng = random.Random(RANDOM_SEED)
    out = []
    for _ in range(RANDOM_CASES):
        parts = []
        for _ in range(rng.randint(1, 40)):
            if rng.random() < 0.3:
                parts.append(rng.choice(RANDOM_PIECES))
            else:
                lo, hi = rng.choice(oracle_tokenizer.RANDOM_RANGES)
                parts.append(chr(rng.randint(lo, hi)))
        out.append("".join(parts))
    return out


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="GGUF file")
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args()
    tools = llama_peer.ensure()
    texts = oracle_tokenizer.STRINGS + CHATML_STRINGS + random_strings()
    cases = []
    with LlamaServer(tools["llama-server"], args.model, ["-t", 1, "-c", 512, "-np", 1]) as server:
        for text in texts:
            for parse_special in (False, True):
                ids = post(server.url + "/tokenize", {"content": text, "add_special": False,
                                                      "parse_special": parse_special})["tokens"]
                decoded = post(server.url + "/detokenize", {"tokens": ids})["content"]
                cases.append({"text": text, "parse_special": parse_special, "ids": ids,
                              "decoded": decoded})
    header = {"generator": "bench/oracle_tokenizer_server.py",
              "oracle": f"llama-server (llama-cpp-python {llama_peer.DEFAULT_VERSION}'s "
                        "llama.cpp) /tokenize and /detokenize",
              "model": os.path.basename(args.model)}
    lines = [f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in header.items()]
    body = ",\n".join("  " + json.dumps(c, ensure_ascii=False) for c in cases)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("{\n" + "\n".join(lines) + '\n "cases": [\n' + body + "\n ]\n}\n")
    print(f"{len(cases)} cases -> {args.out}")


if __name__ == "__main__":
    main()
