"""A Hugging Face XLMRobertaModel folder (bge-m3 / multilingual-e5 style, hf_xlmr_kit.py: random
F32 weights from numpy, a Unigram tokenizer.json with XLM-RoBERTa's Precompiled normaliser built
with the `tokenizers` package) served with --is-embedding, end to end: radixlm's ids equal the
package's (<s> ... </s>), and its /v1/embeddings vectors (through the `openai` client) match a
float64 numpy forward of the same weights with positions from pad_token_id + 1, pooled as
1_Pooling/config.json says (CLS as bge-m3, mean as multilingual-e5), L2-normalised."""

import numpy as np
import openai
import pytest

from conftest import Server
from hf_xlmr_kit import reference, write_folder

HEADS = 4
TEXTS = ["Hello world", "The quick brown fox jumps over the lazy dog.",
         "café CAFÉ naïve résumé", "Ｆｕｌｌ－ｗｉｄｔｈ ＡＳＣＩＩ ﬁne ①",
         "It's a dog's life; they're here, we've gone.", "3 33 333 3.14159", "a",
         "Der schnelle braune Fuchs springt über den faulen Hund. 한국어"]


@pytest.fixture(scope="module", params=["cls", "mean"])
def served(request, tmp_path_factory):
    d = tmp_path_factory.mktemp("xlmr_" + request.param)
    tok, w = write_folder(d, request.param, heads=HEADS)
    s = Server(model=str(d), extra_args=["--is-embedding", "--threads", "1"])
    yield request.param, tok, w, s
    assert s.stop() == 0, s.log_tail()


def test_ids_match_tokenizers(served):
    _, tok, _, server = served
    for text in TEXTS:
        ours = server.post("/tokenize", json={"prompt": text}).json()["tokens"]
        assert ours == tok.encode(text).ids, text
        assert ours[0] == 0 and ours[-1] == 2  # <s> ... </s>


def test_vectors_match_a_numpy_forward(served):
    pooling, tok, w, server = served
    r = openai.OpenAI(base_url=server.url + "/v1", api_key="none").embeddings.create(
        model="m", input=TEXTS)
    assert len(r.data) == len(TEXTS)
    for d, text in zip(r.data, TEXTS):
        want = reference(w, tok.encode(text).ids, HEADS, pooling)
        got = np.array(d.embedding)
        assert float(got @ want) >= 0.9999, text
        assert abs(np.linalg.norm(got) - 1) < 1e-4
