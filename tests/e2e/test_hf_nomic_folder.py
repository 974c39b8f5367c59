"""A Hugging Face NomicBertModel folder with a Unigram tokenizer.json, served with
--is-embedding end to end: config.json as nomic-embed-text-v1.5's (tiny shape),
model.safetensors (random F32 weights from numpy: fused Wqkv, SwiGLU fc11 / fc12 / fc2, no
biases), the Unigram tokenizer.json of tests/hf/testdata/unigram_golden.json ("<s> $A </s>",
Metaspace, byte fallback; built with the `tokenizers` package by make_unigram_golden.py),
sentence-transformers' modules.json with mean pooling. Start-up names the architecture and the
tokenizer kind; /tokenize equals the `tokenizers` package's ids on the tests' corpus; and
/v1/embeddings vectors (through the `openai` client) match a float64 numpy forward of the same
weights (nomic-bert as llama.cpp builds it: NeoX rotary embeddings, post-norm blocks, SwiGLU)."""

import json
import math
import pathlib

import numpy as np
import openai
import pytest
from tokenizers import Tokenizer

from conftest import Server
from hf_folder_kit import save_safetensors

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "hf" / "testdata" / "unigram_golden.json"
H, HEADS, FFN, LAYERS, ROPE_BASE = 32, 4, 64, 2, 1000.0
TEXTS = ["Hello world", "The quick brown fox jumps over the lazy dog.", "café CAFÉ naïve résumé",
         "emoji 🎉 and 中文", "a"]


def weights(n_vocab):
    rng = np.random.default_rng(5)
    w = {}

    def t(name, *shape, scale=None, mean=0.0):
        s = scale if scale is not None else 1.0 / math.sqrt(shape[-1])
        w[name] = (mean + s * rng.standard_normal(shape)).astype(np.float32)

    t("embeddings.word_embeddings.weight", n_vocab, H, scale=1.0)
    t("embeddings.token_type_embeddings.weight", 2, H, scale=0.5)
    t("emb_ln.weight", H, scale=0.1, mean=1.0)
    t("emb_ln.bias", H, scale=0.1)
    for i in range(LAYERS):
        p = "encoder.layers.%d." % i
        t(p + "attn.Wqkv.weight", 3 * H, H)
        t(p + "attn.out_proj.weight", H, H)
        t(p + "mlp.fc11.weight", FFN, H)
        t(p + "mlp.fc12.weight", FFN, H)
        t(p + "mlp.fc2.weight", H, FFN)
        for m in ("norm1", "norm2"):
            t(p + m + ".weight", H, scale=0.1, mean=1.0)
            t(p + m + ".bias", H, scale=0.1)
    return w


def rope(x):
    """NeoX rotary embeddings on [heads, n, d]: pairs (i, i + d/2) rotated by pos * base^(-2i/d)."""
    _, n, d = x.shape
    inv = ROPE_BASE ** (-np.arange(0, d // 2) * 2.0 / d)
    ang = np.arange(n)[:, None] * inv[None, :]
    cos, sin = np.cos(ang), np.sin(ang)
    a, b = x[..., :d // 2], x[..., d // 2:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


def reference(w, ids):
    """nomic-bert's forward in float64, mean pooling, L2-normalised."""
    w = {k: v.astype(np.float64) for k, v in w.items()}

    def ln(x, p):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-12) * w[p + ".weight"] + w[p + ".bias"]

    n, d = len(ids), H // HEADS
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.token_type_embeddings.weight"][0]
    x = ln(x, "emb_ln")
    for i in range(LAYERS):
        p = "encoder.layers.%d." % i
        qkv = x @ w[p + "attn.Wqkv.weight"].T
        q, k, v = (qkv[:, j * H:(j + 1) * H].reshape(n, HEADS, d).transpose(1, 0, 2)
                   for j in range(3))
        q, k = rope(q), rope(k)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        a = (s / s.sum(-1, keepdims=True)) @ v
        x = ln(x + a.transpose(1, 0, 2).reshape(n, H) @ w[p + "attn.out_proj.weight"].T,
               p + "norm1")
        up = x @ w[p + "mlp.fc11.weight"].T
        gate = x @ w[p + "mlp.fc12.weight"].T
        y = (up * gate / (1 + np.exp(-gate))) @ w[p + "mlp.fc2.weight"].T
        x = ln(x + y, p + "norm2")
    e = x.mean(0)
    return e / np.linalg.norm(e)


def golden():
    return json.loads(GOLDEN.read_text())["variants"]["metaspace_always"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("nomic_folder")
    variant = golden()
    (d / "tokenizer.json").write_text(json.dumps(variant["tokenizer"]))
    tok = Tokenizer.from_file(str(d / "tokenizer.json"))
    n_vocab = tok.get_vocab_size()
    (d / "tokenizer_config.json").write_text(json.dumps(
        {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"}))
    (d / "config.json").write_text(json.dumps(
        {"architectures": ["NomicBertModel"], "model_type": "nomic_bert",
         "activation_function": "swiglu", "causal": False, "prenorm": False,
         "qkv_proj_bias": False, "mlp_fc1_bias": False, "mlp_fc2_bias": False,
         "rotary_emb_fraction": 1.0, "rotary_emb_interleaved": False,
         "rotary_emb_scale_base": None, "rotary_scaling_factor": None,
         "rotary_emb_base": ROPE_BASE, "n_embd": H, "n_layer": LAYERS, "n_head": HEADS,
         "n_inner": FFN, "n_positions": 8192, "max_trained_positions": 2048,
         "type_vocab_size": 2, "vocab_size": n_vocab, "layer_norm_epsilon": 1e-12,
         "torch_dtype": "float32"}))
    (d / "modules.json").write_text(json.dumps(
        [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
         {"idx": 1, "name": "1", "path": "1_Pooling",
          "type": "sentence_transformers.models.Pooling"}]))
    (d / "1_Pooling").mkdir()
    (d / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": H, "pooling_mode_mean_tokens": True}))
    w = weights(n_vocab)
    save_safetensors(str(d / "model.safetensors"), w, "F32")
    return d, tok, w


@pytest.fixture(scope="module")
def server(folder):
    s = Server(model=str(folder[0]), extra_args=["--is-embedding", "--threads", "1"])
    yield s
    assert s.stop() == 0, s.log_tail()


def test_startup_names_the_architecture_and_tokenizer(server):
    log = server.log_text()
    assert "NomicBertModel (config.json) -> nomic-bert family" in log
    assert "tokenizer: tokenizer.json, Unigram (" in log


def test_ids_match_tokenizers(folder, server):
    _, tok, _ = folder
    texts = [c["text"] for c in golden()["cases"]]
    assert len(texts) >= 80
    r = server.post("/tokenize", json={"prompt": texts})
    assert r.status_code == 200, r.text
    want = [e.ids for e in tok.encode_batch(texts)]
    bad = [(t, g, w) for t, g, w in zip(texts, r.json()["tokens"], want) if g != w]
    assert not bad, f"{len(bad)} of {len(texts)} differ, first: {bad[0]}"


def test_vectors_match_a_numpy_forward(folder, server):
    _, tok, w = folder
    r = openai.OpenAI(base_url=server.url + "/v1", api_key="none").embeddings.create(
        model="m", input=TEXTS)
    for d, text in zip(r.data, TEXTS):
        want = reference(w, tok.encode(text).ids)
        got = np.array(d.embedding)
        assert float(got @ want) >= 0.9999, text
        assert abs(np.linalg.norm(got) - 1) < 1e-4
