#!/usr/bin/env python3
"""Writes tiny bert / nomic-bert GGUFs (random F32 weights, numpy seed 0) with a WordPiece
vocabulary cut from bge-small's (tests/data/llama-vocab/ggml-vocab-bert-bge.gguf: [PAD], the
[unusedN], [UNK], [CLS], [SEP], [MASK] at their ids 0-103, then every token the texts of
tests/tokenizer/testdata/bert_bge_tokenize_golden.json use), and the embeddings llama.cpp's
llama-embedding gives for TEXTS on them, mean and CLS pooling, normalised (--embd-normalize 2):

  tiny_bert.gguf, tiny_nomic_bert.gguf      the models
  encoder_embeddings_golden.json            per model and pooling: the texts and vectors

Usage (llama-embedding linked as tests/model/llama_cpp/README.md says):
  LLAMA=~/.cache/radixlm/llama-peer/0.3.36
  PYTHONPATH=$LLAMA/src/vendor/llama.cpp/gguf-py .venv/bin/python \\
      tests/model/testdata/make_encoder_golden.py --llama-embedding /tmp/llama-embedding
Each model and pooling runs `llama-embedding -m MODEL -f TEXTS --pooling P --embd-normalize 2
--embd-output-format array -t 1 -c 512 -b 512 -ub 512` (one text per line; with -c 64
llama.cpp aborts in output_reserve).
"""
import argparse
import json
import os
import subprocess
import tempfile

import gguf
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
BGE = os.path.join(ROOT, "tests", "data", "llama-vocab", "ggml-vocab-bert-bge.gguf")
CASES = os.path.join(ROOT, "tests", "tokenizer", "testdata", "bert_bge_tokenize_golden.json")
HIDDEN, HEADS, FFN, LAYERS, CONTEXT = 32, 4, 64, 2, 64
TEXTS = [
    "Hello world", "The quick brown fox jumps over the lazy dog.", "café CAFÉ naïve résumé",
    "It's a dog's life; they're here, we've gone, I'd say you'll see.", "a", "UPPER lower MiXeD",
    "email@example.com https://example.org/path?q=1&r=2", "3 33 333 3333 33333 3.14159 1,000,000",
]


def cut_vocab():
    r = gguf.GGUFReader(BGE)
    tokens = r.fields["tokenizer.ggml.tokens"].contents()
    types = r.fields["tokenizer.ggml.token_type"].contents()
    keep = set(range(104))
    with open(CASES, encoding="utf-8") as f:
        for c in json.load(f)["cases"]:
            keep.update(c["ids"])
    ids = sorted(keep)
    return [tokens[i] for i in ids], [int(types[i]) for i in ids]


def write_model(path, arch, tokens, types, hidden=HIDDEN, heads=HEADS, ffn=FFN, layers=LAYERS,
                context=CONTEXT, dtype=np.float32, pooling=None, name=None):
    """A bert / nomic-bert GGUF of that shape, random weights (matrices in `dtype`, vectors F32);
    pooling: a gguf.PoolingType (default: CLS for bert, mean for nomic-bert)."""
    rng = np.random.default_rng(0 if arch == "bert" else 1)
    w = gguf.GGUFWriter(path, arch)
    w.add_name(name or "tiny-" + arch)
    w.add_block_count(layers)
    w.add_context_length(context)
    w.add_embedding_length(hidden)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_layer_norm_eps(1e-12)
    w.add_causal_attention(False)
    if pooling is None:
        pooling = gguf.PoolingType.CLS if arch == "bert" else gguf.PoolingType.MEAN
    w.add_pooling_type(pooling)
    if arch == "nomic-bert":
        w.add_rope_freq_base(1000.0)
    w.add_token_type_count(2)
    w.add_tokenizer_model("bert")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_unk_token_id(100)
    w.add_pad_token_id(0)
    w.add_sep_token_id(102)
    w.add_mask_token_id(103)

    def t(name, *shape, scale=None, mean=0.0):  # shape in numpy order: [rows, cols]
        s = scale if scale is not None else 1.0 / np.sqrt(shape[-1])
        v = (mean + s * rng.standard_normal(shape)).astype(np.float32)
        # token_types stays F32, as the converter writes it (llama.cpp adds its row to F32).
        w.add_tensor(name, v.astype(dtype) if len(shape) == 2 and "token_types" not in name else v)

    h, FFN = hidden, ffn  # noqa: N806 (the tiny shape's names, as below)
    t("token_embd.weight", len(tokens), h, scale=1.0)
    t("token_types.weight", 2, h, scale=0.5)
    if arch == "bert":
        t("position_embd.weight", context, h, scale=0.5)
    t("token_embd_norm.weight", h, scale=0.1, mean=1.0)
    t("token_embd_norm.bias", h, scale=0.1)
    for i in range(layers):
        b = "blk.%d." % i
        if arch == "bert":
            for m in ("attn_q", "attn_k", "attn_v"):
                t(b + m + ".weight", h, h)
                t(b + m + ".bias", h, scale=0.1)
            t(b + "attn_output.bias", h, scale=0.1)
            t(b + "ffn_up.bias", FFN, scale=0.1)
            t(b + "ffn_down.bias", h, scale=0.1)
        else:
            t(b + "attn_qkv.weight", 3 * h, h)
            t(b + "ffn_gate.weight", FFN, h)
        t(b + "attn_output.weight", h, h)
        t(b + "attn_output_norm.weight", h, scale=0.1, mean=1.0)
        t(b + "attn_output_norm.bias", h, scale=0.1)
        t(b + "ffn_up.weight", FFN, h)
        t(b + "ffn_down.weight", h, FFN)
        t(b + "layer_output_norm.weight", h, scale=0.1, mean=1.0)
        t(b + "layer_output_norm.bias", h, scale=0.1)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def embed(tool, model, pooling, texts=TEXTS, threads=1, ctx=512):
    """llama-embedding's vectors for `texts`. Its array is printed through llama.cpp's
    asynchronous logger, which at times exits before writing it (rc 0, empty stdout, seen on a
    loaded machine): such a run is repeated, up to 10 times."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write("\n".join(texts))
    cmd = [tool, "-m", model, "-f", f.name, "--pooling", pooling, "--embd-normalize", "2",
           "--embd-output-format", "array", "-t", str(threads), "-c", str(ctx), "-b", str(ctx),
           "-ub", str(ctx)]
    try:
        for _ in range(10):
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            try:
                vectors = json.loads(out[out.index("["):])
            except ValueError:
                continue
            if len(vectors) == len(texts):
                return vectors
        raise RuntimeError("llama-embedding printed no complete array in 10 runs: " + " ".join(cmd))
    finally:
        os.unlink(f.name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-embedding", required=True)
    args = ap.parse_args()
    tokens, types = cut_vocab()
    golden = {"generator": "tests/model/testdata/make_encoder_golden.py",
              "oracle": "llama-embedding (llama-cpp-python 0.3.36's llama.cpp) --embd-normalize 2",
              "texts": TEXTS, "models": {}}
    for arch, name in (("bert", "tiny_bert.gguf"), ("nomic-bert", "tiny_nomic_bert.gguf")):
        path = os.path.join(HERE, name)
        write_model(path, arch, tokens, types)
        golden["models"][name] = {p: embed(args.llama_embedding, path, p) for p in ("mean", "cls")}
    with open(os.path.join(HERE, "encoder_embeddings_golden.json"), "w") as f:
        json.dump(golden, f)
    print("vocab %d tokens; wrote %s" % (len(tokens), ", ".join(golden["models"])))


if __name__ == "__main__":
    main()
