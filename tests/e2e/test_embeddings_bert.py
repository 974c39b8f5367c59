"""Encoder embedders (GGUF architectures bert and nomic-bert) behind /v1/embeddings, end to end
with the `openai` client, on the tiny synthetic encoders of tests/model/testdata (random
weights, bge-small's WordPiece vocabulary cut to 358 tokens; written by
make_encoder_golden.py): the vectors match llama.cpp's llama-embedding on the same files
(encoder_embeddings_golden.json, L2-normalised) with the pooling the file names (bert: CLS,
nomic-bert: mean) and with --pooling overriding it; a text's vector does not depend on the
request it comes in; a prompt past the context and a generation request are 400s naming them."""

import json
import math
import pathlib
import subprocess

import openai
import pytest

from conftest import Server, _binary

DATA = pathlib.Path(__file__).resolve().parents[1] / "model" / "testdata"
GOLDEN = json.loads((DATA / "encoder_embeddings_golden.json").read_text())
TEXTS = GOLDEN["texts"]
CONTEXT = 64  # the tiny files' <arch>.context_length


def serve(name, *args):
    return Server(model=str(DATA / name), extra_args=["--is-embedding", "--threads", "1", *args])


@pytest.fixture(scope="module")
def bert():
    s = serve("tiny_bert.gguf")
    yield s
    assert s.stop() == 0, s.log_tail()


def client_of(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="none")


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def check_against_llama(server, name, pooling):
    r = client_of(server).embeddings.create(model="m", input=TEXTS)
    assert [d.index for d in r.data] == list(range(len(TEXTS)))
    for got, want, text in zip(r.data, GOLDEN["models"][name][pooling], TEXTS):
        assert len(got.embedding) == len(want)
        assert cosine(got.embedding, want) >= 0.9999, (name, pooling, text)
    return r


def test_bert_cls_from_the_file_matches_llama_embedding(bert):
    r = check_against_llama(bert, "tiny_bert.gguf", "cls")
    # [CLS] ... [SEP] around every text: at least 3 tokens each.
    assert r.usage.prompt_tokens == r.usage.total_tokens >= 3 * len(TEXTS)


def test_bert_mean_by_flag_matches_llama_embedding():
    s = serve("tiny_bert.gguf", "--pooling", "mean")
    try:
        check_against_llama(s, "tiny_bert.gguf", "mean")
    finally:
        assert s.stop() == 0, s.log_tail()


def test_nomic_bert_mean_from_the_file_matches_llama_embedding():
    s = serve("tiny_nomic_bert.gguf")
    try:
        check_against_llama(s, "tiny_nomic_bert.gguf", "mean")
    finally:
        assert s.stop() == 0, s.log_tail()


def test_a_vector_does_not_depend_on_its_request(bert):
    c = client_of(bert)
    alone = c.embeddings.create(model="m", input=TEXTS[1]).data[0].embedding
    batched = c.embeddings.create(model="m", input=TEXTS).data[1].embedding
    assert alone == batched  # bit for bit
    # Token ids in: the same ids the server's tokenizer makes give the same vector.
    ids = bert.post("/tokenize", json={"prompt": TEXTS[1]}).json()["tokens"]
    assert ids[0] == 101 and ids[-1] == 102  # [CLS] ... [SEP]
    by_ids = c.embeddings.create(model="m", input=[ids]).data[0].embedding
    assert by_ids == alone


def test_prompt_past_the_context_is_a_400(bert):
    with pytest.raises(openai.BadRequestError) as e:
        client_of(bert).embeddings.create(model="m", input="word " * (CONTEXT + 10))
    assert "context length (%d tokens)" % CONTEXT in str(e.value)


def test_generation_request_is_a_400(bert):
    c = client_of(bert)
    with pytest.raises(openai.BadRequestError) as e:
        c.completions.create(model="m", prompt="Hello", max_tokens=4)
    assert "embedding model" in str(e.value)
    r = bert.post("/generate", json={"text": "Hello", "sampling_params": {"max_new_tokens": 2}})
    assert r.status_code == 400 and "embedding" in r.json()["error"]["message"]


def test_encoder_without_is_embedding_fails_at_start_up():
    r = subprocess.run([_binary(), "serve", "--port", "1", "--model-path",
                        str(DATA / "tiny_bert.gguf")], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "--is-embedding" in r.stdout + r.stderr
