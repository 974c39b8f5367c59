"""A synthetic XLMRobertaModel folder (bge-m3 / multilingual-e5 style) and its float64 reference
forward, for test_hf_xlmr_folder.py and tests/model/llama_cpp/xlmr_oracle.py.

The folder: config.json ("architectures": ["XLMRobertaModel"], pad_token_id 1, positions
numbered from pad_token_id + 1, type_vocab_size 1), model.safetensors (random weights from
numpy, the pooler included as XLMRobertaModel saves it), tokenizer.json (a Unigram model with
XLM-RoBERTa's layout: <s> <pad> </s> <unk>, the pieces, <mask> last; a Precompiled nmt_nfkc
charsmap as the normaliser (as bge-m3's and multilingual-e5's files have it), Metaspace and the
"<s> $A </s>" template, built with the `tokenizers`
package from tests/hf/testdata/precompiled_golden.json's model, which sentencepiece trained on
the tests' corpus), tokenizer_config.json, and sentence-transformers' modules.json +
1_Pooling/config.json with CLS (bge-m3) or mean (multilingual-e5) pooling."""

import json
import math
import pathlib

import numpy as np
from tokenizers import Tokenizer

from hf_folder_kit import save_safetensors

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAD = 1  # XLM-RoBERTa's <pad>: positions start at PAD + 1
EPS = 1e-5


def xlmr_tokenizer():
    """The tokenizers.Tokenizer and its JSON."""
    golden = json.loads((ROOT / "tests" / "hf" / "testdata" / "precompiled_golden.json")
                        .read_text(encoding="utf-8"))["tokenizer"]
    specials = {"<unk>", "<s>", "</s>"}
    pieces = [p for p in golden["model"]["vocab"] if p[0] not in specials]
    vocab = [["<s>", 0.0], ["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0]] + pieces + \
        [["<mask>", 0.0]]
    tok = dict(golden)
    tok["model"] = dict(golden["model"], vocab=vocab, unk_id=3, byte_fallback=False)
    # bge-m3's and multilingual-e5's files carry the Precompiled normaliser alone (and the
    # converter reads the charsmap from there).
    tok["normalizer"] = golden["normalizer"]["normalizers"][0]
    assert tok["normalizer"]["type"] == "Precompiled"
    tok["added_tokens"] = [
        {"id": i, "content": vocab[i][0], "single_word": False, "lstrip": False,
         "rstrip": False, "normalized": False, "special": True}
        for i in (0, 1, 2, 3, len(vocab) - 1)]
    pp = json.loads(json.dumps(golden["post_processor"]))
    pp["special_tokens"] = {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]},
                            "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}
    tok["post_processor"] = pp
    text = json.dumps(tok, ensure_ascii=False)
    return Tokenizer.from_str(text), text, len(vocab)


def weights(n_vocab, hidden, layers, ffn, context, seed=11):
    rng = np.random.default_rng(seed)
    w = {}

    def t(name, *shape, scale=None, mean=0.0):
        s = scale if scale is not None else 1.0 / math.sqrt(shape[-1])
        w[name] = (mean + s * rng.standard_normal(shape)).astype(np.float32)

    t("embeddings.word_embeddings.weight", n_vocab, hidden, scale=1.0)
    t("embeddings.position_embeddings.weight", context + PAD + 1, hidden, scale=0.5)
    t("embeddings.token_type_embeddings.weight", 1, hidden, scale=0.5)
    t("embeddings.LayerNorm.weight", hidden, scale=0.1, mean=1.0)
    t("embeddings.LayerNorm.bias", hidden, scale=0.1)
    for i in range(layers):
        p = "encoder.layer.%d." % i
        for m, rows, cols in (("attention.self.query", hidden, hidden),
                              ("attention.self.key", hidden, hidden),
                              ("attention.self.value", hidden, hidden),
                              ("attention.output.dense", hidden, hidden),
                              ("intermediate.dense", ffn, hidden),
                              ("output.dense", hidden, ffn)):
            t(p + m + ".weight", rows, cols)
            t(p + m + ".bias", rows, scale=0.1)
        for m in ("attention.output.LayerNorm", "output.LayerNorm"):
            t(p + m + ".weight", hidden, scale=0.1, mean=1.0)
            t(p + m + ".bias", hidden, scale=0.1)
    t("pooler.dense.weight", hidden, hidden)
    t("pooler.dense.bias", hidden, scale=0.1)
    return w


def write_folder(d, pooling, hidden=32, heads=4, ffn=64, layers=2, context=64, dtype="F32"):
    """Writes the folder into `d` (a pathlib.Path); returns (tokenizer, weights)."""
    d.mkdir(parents=True, exist_ok=True)
    tok, text, n_vocab = xlmr_tokenizer()
    (d / "tokenizer.json").write_text(text, encoding="utf-8")
    (d / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "XLMRobertaTokenizer", "bos_token": "<s>", "eos_token": "</s>",
         "unk_token": "<unk>", "pad_token": "<pad>", "cls_token": "<s>", "sep_token": "</s>",
         "mask_token": "<mask>", "model_max_length": context, "clean_up_tokenization_spaces": True}))
    (d / "config.json").write_text(json.dumps(
        {"architectures": ["XLMRobertaModel"], "model_type": "xlm-roberta",
         "hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
         "intermediate_size": ffn, "max_position_embeddings": context + PAD + 1,
         "type_vocab_size": 1, "vocab_size": n_vocab, "layer_norm_eps": EPS,
         "hidden_act": "gelu", "position_embedding_type": "absolute", "bos_token_id": 0,
         "pad_token_id": PAD, "eos_token_id": 2, "torch_dtype": "float32"}))
    (d / "modules.json").write_text(json.dumps(
        [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
         {"idx": 1, "name": "1", "path": "1_Pooling",
          "type": "sentence_transformers.models.Pooling"},
         {"idx": 2, "name": "2", "path": "2_Normalize",
          "type": "sentence_transformers.models.Normalize"}]))
    (d / "1_Pooling").mkdir(exist_ok=True)
    (d / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": hidden, "pooling_mode_cls_token": pooling == "cls",
         "pooling_mode_mean_tokens": pooling == "mean"}))
    w = weights(n_vocab, hidden, layers, ffn, context)
    save_safetensors(str(d / "model.safetensors"), w, dtype)
    return tok, w


def reference(w, ids, heads, pooling):
    """XLM-RoBERTa's forward in float64 (positions from PAD + 1, token type 0, GELU in the tanh
    form llama.cpp builds), pooled, L2-normalised."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    hidden = w["embeddings.LayerNorm.weight"].shape[0]
    layers = sum(1 for k in w if k.endswith("attention.self.query.weight"))

    def ln(x, p):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + EPS) * w[p + ".weight"] + w[p + ".bias"]

    def lin(x, p):
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    n, d = len(ids), hidden // heads
    x = (w["embeddings.word_embeddings.weight"][ids]
         + w["embeddings.token_type_embeddings.weight"][0]
         + w["embeddings.position_embeddings.weight"][PAD + 1:PAD + 1 + n])
    x = ln(x, "embeddings.LayerNorm")
    for i in range(layers):
        p = "encoder.layer.%d." % i
        q, k, v = (lin(x, p + "attention.self." + m).reshape(n, heads, d).transpose(1, 0, 2)
                   for m in ("query", "key", "value"))
        s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        a = (s / s.sum(-1, keepdims=True)) @ v
        x = ln(x + lin(a.transpose(1, 0, 2).reshape(n, hidden), p + "attention.output.dense"),
               p + "attention.output.LayerNorm")
        u = lin(x, p + "intermediate.dense")
        u = 0.5 * u * (1 + np.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u ** 3)))
        x = ln(x + lin(u, p + "output.dense"), p + "output.LayerNorm")
    e = x[0] if pooling == "cls" else x.mean(0)
    return e / np.linalg.norm(e)
