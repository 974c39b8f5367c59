"""A Gemma 3 Hugging Face folder served end to end (hf_gemma_kit.py writes it from the shipped
gemma-3-270m GGUF's vocabulary: a SentencePiece tokenizer.model serialized with the
`sentencepiece` package's protobuf, the tokenizer.json transformers' GemmaConverter makes of
it built with the `tokenizers` package, a 2-layer Gemma3ForCausalLM of random numpy weights):

- with tokenizer.json (preferred to tokenizer.model, and start-up says so), /tokenize gives
  the `tokenizers` package's ids on the tests' corpus (the 126 distinct texts of
  tests/tokenizer/testdata/gemma3_tokenize_golden.json: runs of spaces and newlines, tabs,
  leading spaces, emoji and characters that need byte fallback, special tokens in the text),
  and so it does with the same vocabulary behind Llama 2's Prepend normaliser and behind
  Metaspace pre-tokenizers (prepend_scheme first and always); /detokenize gives the
  package's text back (special tokens shown: the synthetic tokenizer.json has
  <start_of_image> as a non-special token, which radixlm hides as a special marker);
- with tokenizer.model alone, /tokenize gives llama.cpp's ids from that golden file (its
  parse_special cases: what /tokenize does), since the folder then becomes the metadata
  llama.cpp's converter writes from tokenizer.model;
- both serve /v1/chat/completions through the openai client with Gemma 3's chat template.
Skipped, saying why, when the gemma-3-270m GGUF is not at RADIXLM_DEFAULT_MODEL."""

import json
import os
import pathlib
import shutil

import openai
import pytest

import hf_gemma_kit
from conftest import Server

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "tokenizer" / "testdata" / "gemma3_tokenize_golden.json"


def gemma_gguf():
    path = os.environ.get("RADIXLM_DEFAULT_MODEL")
    if not path or not os.path.isfile(path):
        pytest.skip("the gemma-3-270m GGUF (the folder's vocabulary) is not at "
                    "RADIXLM_DEFAULT_MODEL (scripts/setup.sh exports it)")
    return path


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """(folder with tokenizer.json and tokenizer.model, folder with tokenizer.model only,
    the tokenizers.Tokenizer of the first)."""
    gguf = gemma_gguf()
    both = tmp_path_factory.mktemp("hf") / "tiny-gemma3"
    both.mkdir()
    tok, _ = hf_gemma_kit.write_folder(both, gguf)
    only_model = both.parent / "tiny-gemma3-spm"
    shutil.copytree(both, only_model)
    (only_model / "tokenizer.json").unlink()
    return both, only_model, tok


@pytest.fixture(scope="module")
def json_server(folders):
    s = Server(model=str(folders[0]))
    yield s
    assert s.stop() == 0, s.log_tail()


@pytest.fixture(scope="module")
def model_server(folders):
    s = Server(model=str(folders[1]))
    yield s
    assert s.stop() == 0, s.log_tail()


def golden_cases():
    return json.loads(GOLDEN.read_text())["cases"]


def corpus():
    texts = []
    for case in golden_cases():
        if case["text"] not in texts:
            texts.append(case["text"])
    return texts


def test_startup_says_which_tokenizer_file(json_server, model_server):
    log = json_server.log_text()
    assert "Gemma3ForCausalLM (config.json) -> gemma3 family" in log
    assert ("tokenizer: tokenizer.json (preferred to tokenizer.model), SentencePiece-style BPE "
            "(byte fallback, 262144 tokens") in log
    assert "chat template: tokenizer_config.json" in log
    log = model_server.log_text()
    assert ("tokenizer: tokenizer.model (no tokenizer.json), SentencePiece BPE (262144 pieces, "
            "byte fallback, no space prefix)") in log


def test_tokenizer_json_equals_the_tokenizers_package(json_server, folders):
    texts = corpus()
    assert len(texts) >= 80
    r = json_server.post("/tokenize", json={"prompt": texts, "add_special_tokens": False})
    assert r.status_code == 200, r.text
    want = [e.ids for e in folders[2].encode_batch(texts, add_special_tokens=False)]
    bad = [(t, g, w) for t, g, w in zip(texts, r.json()["tokens"], want) if g != w]
    assert not bad, f"{len(bad)} of {len(texts)} differ, first: {bad[0]}"
    # And back: the user-defined runs of U+2581 ("\u2581\u2581" in tokenizer.json) are spaces.
    r = json_server.post("/detokenize", json={"tokens": want, "skip_special_tokens": False})
    assert r.status_code == 200, r.text
    got = r.json()["text"]
    want_text = folders[2].decode_batch(want, skip_special_tokens=False)
    bad = [(t, g, w) for t, g, w in zip(texts, got, want_text) if g != w]
    assert not bad, f"{len(bad)} of {len(texts)} decode differently, first: {bad[0]}"


@pytest.mark.parametrize("style", ["prepend", "metaspace-first", "metaspace-always"])
def test_space_prefix_styles_equal_the_tokenizers_package(folders, tmp_path, style):
    """The same vocabulary with a prefix space: Llama 2's Prepend normaliser (llama.cpp's rule:
    every piece between added tokens) and a Metaspace pre-tokenizer (tokenizers' rule: not
    when the piece starts with a space; "first": only at the start of the text)."""
    tok = folders[2]
    hf_gemma_kit.set_space_style(tok, style)
    try:
        for name in ("config.json", "tokenizer_config.json"):
            shutil.copy(folders[0] / name, tmp_path / name)
        (tmp_path / "model.safetensors").symlink_to(folders[0] / "model.safetensors")
        tok.save(str(tmp_path / "tokenizer.json"))
        texts = corpus()
        want = [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]
    finally:
        hf_gemma_kit.set_space_style(tok, "gemma")
    s = Server(model=str(tmp_path))
    try:
        assert ("Metaspace prefix " + style.split("-")[-1] if "metaspace" in style
                else "space prefix)") in s.log_text()
        r = s.post("/tokenize", json={"prompt": texts, "add_special_tokens": False})
        assert r.status_code == 200, r.text
        bad = [(t, g, w) for t, g, w in zip(texts, r.json()["tokens"], want) if g != w]
        assert not bad, f"{len(bad)} of {len(texts)} differ, first: {bad[0]}"
    finally:
        assert s.stop() == 0


def test_tokenizer_model_equals_llama_cpp(model_server):
    cases = [c for c in golden_cases() if c["parse_special"] and not c["add_bos"]]
    assert len(cases) >= 60
    texts = [c["text"] for c in cases]
    r = model_server.post("/tokenize", json={"prompt": texts, "add_special_tokens": False})
    assert r.status_code == 200, r.text
    bad = [(c["text"], g, c["ids"]) for c, g in zip(cases, r.json()["tokens"]) if g != c["ids"]]
    assert not bad, f"{len(bad)} of {len(cases)} differ, first: {bad[0]}"


@pytest.mark.parametrize("which", ["json_server", "model_server"])
def test_chat_completions(request, which):
    server = request.getfixturevalue(which)
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="none")
    messages = [{"role": "user", "content": "Say hello"}]
    reply = client.chat.completions.create(model="tiny-gemma3", messages=messages,
                                           max_tokens=8, temperature=0)
    assert reply.choices[0].finish_reason in ("length", "stop")
    assert isinstance(reply.choices[0].message.content, str)
    assert reply.usage.completion_tokens >= 1
    # The prompt is Gemma 3's turn format, tokenized with the folder's tokenizer.
    r = server.post("/tokenize", json={"messages": messages, "add_generation_prompt": True})
    assert r.status_code == 200, r.text
    assert reply.usage.prompt_tokens == r.json()["count"]
    assert r.json()["tokens"][:2] == [2, 105]  # <bos> <start_of_turn>
