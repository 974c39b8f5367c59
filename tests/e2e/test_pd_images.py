"""Images through prefill/decode disaggregation behind SGLang's gateway: both servers run the
default model with a tiny synthetic gemma3 projector (synth_mmproj.py); the prefill server
encodes the image and computes the prompt, its KV record carries the image's span, and the
decode server answers. Greedy outputs must equal a single plain server's with the same
projector, for one image and for two. Skipped as tests/e2e/test_pd.py is (no smg, or radixlm
built without UCX).
"""

import base64

import pytest
import requests

from conftest import Server
from synth_mmproj import write_mmproj
from test_images import png
from test_pd import PdPair, kv_transfer_totals, pytestmark  # noqa: F401  (the same skips)

GREEDY = {"temperature": 0, "max_new_tokens": 12, "ignore_eos": True}
PROMPTS = [
    ("Describe <__media__> in a few words:", [png(40, 30, 1)]),
    ("Compare <__media__> with <__media__>. The first one", [png(48, 32, 2), png(20, 20, 3)]),
]


def b64(data):
    return base64.b64encode(data).decode()


def generate(url, text, images):
    r = requests.post(url + "/generate", timeout=300, json={
        "text": text, "image_data": [b64(i) for i in images], "sampling_params": GREEDY})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["meta_info"]["finish_reason"]["type"] != "abort", out
    return out


@pytest.fixture(scope="module")
def mmproj(tmp_path_factory):
    path = tmp_path_factory.mktemp("pd-images") / "mmproj.gguf"
    write_mmproj(str(path), 640, seed=1)
    return str(path)


@pytest.fixture(scope="module")
def reference(mmproj):
    s = Server(extra_args=["--threads", "1", "--mmproj", mmproj])
    try:
        yield {text: generate(s.url, text, images)["text"] for text, images in PROMPTS}
    finally:
        assert s.stop() == 0, s.log_tail()


@pytest.fixture(scope="module")
def image_pair(mmproj):
    p = PdPair(extra=["--mmproj", mmproj])
    yield p
    p.stop()


def test_image_prompts_through_the_pair_equal_a_single_server(image_pair, reference):
    for text, images in PROMPTS:
        out = generate(image_pair.gateway.url, text, images)
        assert out["text"] == reference[text], text


def test_the_decode_server_takes_the_image_span_from_the_record(image_pair):
    # A new image: nothing of it is cached on either server before this request.
    before = kv_transfer_totals(image_pair.decode)
    out = generate(image_pair.gateway.url, PROMPTS[0][0], [png(36, 36, 9)])
    meta = out["meta_info"]
    # The decode server found the whole prompt, the image's span included, in the imported
    # record (at most the last position is computed again).
    assert meta["cached_tokens"] >= meta["prompt_tokens"] - 1, meta
    assert kv_transfer_totals(image_pair.decode)[0] == before[0] + 1
