"""A Hugging Face BertModel folder served with --is-embedding, end to end: config.json,
model.safetensors (random F32 weights from numpy), a WordPiece tokenizer.json built with the
`tokenizers` package from bge-small's vocabulary as cut for tests/model/testdata/tiny_bert.gguf
("##" pieces restored), sentence-transformers' modules.json with mean pooling. radixlm's ids
equal `tokenizers`' on texts where llama.cpp's WordPiece and Hugging Face's agree, and its
/v1/embeddings vectors (through the `openai` client) match a float64 numpy forward of the same
weights (BERT's graph as llama.cpp builds it: GELU in its tanh form)."""

import json
import math
import pathlib

import numpy as np
import openai
import pytest
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from conftest import Server
from hf_folder_kit import gguf_tokenizer, save_safetensors

DATA = pathlib.Path(__file__).resolve().parents[1] / "model" / "testdata"
H, HEADS, FFN, LAYERS, CONTEXT = 32, 4, 64, 2, 64
TEXTS = ["Hello world", "The quick brown fox jumps over the lazy dog.",
         "café CAFÉ naïve résumé",
         "UPPER lower MiXeD", "It's a dog's life; they're here, we've gone, I'd say you'll see.",
         "3 33 333 3333 33333 3.14159 1,000,000", "a"]


def vocab_from_tiny_gguf():
    meta = gguf_tokenizer(str(DATA / "tiny_bert.gguf"))
    vocab = {}
    for i, (t, ty) in enumerate(zip(meta["tokenizer.ggml.tokens"],
                                    meta["tokenizer.ggml.token_type"])):
        vocab[t if ty == 3 else t[1:] if t.startswith("\u2581") else "##" + t] = i
    return vocab


def weights(n_vocab):
    rng = np.random.default_rng(3)
    w = {}

    def t(name, *shape, scale=None, mean=0.0):
        s = scale if scale is not None else 1.0 / math.sqrt(shape[-1])
        w[name] = (mean + s * rng.standard_normal(shape)).astype(np.float32)

    t("embeddings.word_embeddings.weight", n_vocab, H, scale=1.0)
    t("embeddings.position_embeddings.weight", CONTEXT, H, scale=0.5)
    t("embeddings.token_type_embeddings.weight", 2, H, scale=0.5)
    t("embeddings.LayerNorm.weight", H, scale=0.1, mean=1.0)
    t("embeddings.LayerNorm.bias", H, scale=0.1)
    for i in range(LAYERS):
        p = "encoder.layer.%d." % i
        for m, rows, cols in (("attention.self.query", H, H), ("attention.self.key", H, H),
                              ("attention.self.value", H, H), ("attention.output.dense", H, H),
                              ("intermediate.dense", FFN, H), ("output.dense", H, FFN)):
            t(p + m + ".weight", rows, cols)
            t(p + m + ".bias", rows, scale=0.1)
        for m in ("attention.output.LayerNorm", "output.LayerNorm"):
            t(p + m + ".weight", H, scale=0.1, mean=1.0)
            t(p + m + ".bias", H, scale=0.1)
    return w


def reference(w, ids):
    """BERT's forward in float64, mean pooling, L2-normalised."""
    w = {k: v.astype(np.float64) for k, v in w.items()}

    def ln(x, p):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-12) * w[p + ".weight"] + w[p + ".bias"]

    def lin(x, p):
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    n, d = len(ids), H // HEADS
    x = (w["embeddings.word_embeddings.weight"][ids]
         + w["embeddings.token_type_embeddings.weight"][0]
         + w["embeddings.position_embeddings.weight"][:n])
    x = ln(x, "embeddings.LayerNorm")
    for i in range(LAYERS):
        p = "encoder.layer.%d." % i
        q, k, v = (lin(x, p + "attention.self." + m).reshape(n, HEADS, d).transpose(1, 0, 2)
                   for m in ("query", "key", "value"))
        s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        a = (s / s.sum(-1, keepdims=True)) @ v
        x = ln(x + lin(a.transpose(1, 0, 2).reshape(n, H), p + "attention.output.dense"),
               p + "attention.output.LayerNorm")
        u = lin(x, p + "intermediate.dense")
        u = 0.5 * u * (1 + np.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u ** 3)))
        x = ln(x + lin(u, p + "output.dense"), p + "output.LayerNorm")
    e = x.mean(0)
    return e / np.linalg.norm(e)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("bert_folder")
    vocab = vocab_from_tiny_gguf()
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    tok.decoder = decoders.WordPiece()
    tok.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tok.save(str(d / "tokenizer.json"))
    (d / "tokenizer_config.json").write_text(json.dumps(
        {"unk_token": "[UNK]", "pad_token": "[PAD]", "cls_token": "[CLS]", "sep_token": "[SEP]",
         "mask_token": "[MASK]", "do_lower_case": True}))
    (d / "config.json").write_text(json.dumps(
        {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": H,
         "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "intermediate_size": FFN,
         "max_position_embeddings": CONTEXT, "type_vocab_size": 2, "vocab_size": len(vocab),
         "layer_norm_eps": 1e-12, "hidden_act": "gelu", "torch_dtype": "float32"}))
    (d / "modules.json").write_text(json.dumps(
        [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
         {"idx": 1, "name": "1", "path": "1_Pooling",
          "type": "sentence_transformers.models.Pooling"}]))
    (d / "1_Pooling").mkdir()
    (d / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": H, "pooling_mode_mean_tokens": True}))
    w = weights(len(vocab))
    save_safetensors(str(d / "model.safetensors"), w, "F32")
    return d, tok, w


@pytest.fixture(scope="module")
def server(folder):
    s = Server(model=str(folder[0]), extra_args=["--is-embedding", "--threads", "1"])
    yield s
    assert s.stop() == 0, s.log_tail()


def test_ids_match_tokenizers(folder, server):
    _, tok, _ = folder
    for text in TEXTS:
        ours = server.post("/tokenize", json={"prompt": text}).json()["tokens"]
        assert ours == tok.encode(text).ids, text


def test_vectors_match_a_numpy_forward(folder, server):
    _, tok, w = folder
    r = openai.OpenAI(base_url=server.url + "/v1", api_key="none").embeddings.create(
        model="m", input=TEXTS)
    for d, text in zip(r.data, TEXTS):
        want = reference(w, tok.encode(text).ids)
        got = np.array(d.embedding)
        assert float(got @ want) >= 0.9999, text
        assert abs(np.linalg.norm(got) - 1) < 1e-4
