"""Images through the server: the default model with a tiny synthetic gemma3 projector
(synth_mmproj.py, output width 640 as gemma-3-270m's hidden size; 16 tokens per image).

The openai client with a base64 image, images by http and https URL from local servers (https:
a certificate the server trusts through SSL_CERT_FILE and one it does not; redirects), a local path
under --allowed-local-media-path, native /generate image_data; the same image twice shares the
radix cache through the image (cached_tokens) with the output of a cache-less server, a different
image of the same size matches only the text before it; the encoder runs once for a repeated
image (/metrics); every bad input is a 400 naming it, and a projector of the wrong width is
refused at start-up.
"""

import base64
import http.server
import os
import ssl
import struct
import subprocess
import threading
import zlib

import openai
import pytest

from conftest import Server, _binary, _model
from processes import free_port
from synth_mmproj import TOKENS_PER_IMAGE, write_mmproj

GREEDY = {"temperature": 0, "max_new_tokens": 8, "ignore_eos": True}


def png(width, height, seed):
    """An RGB PNG (stdlib zlib): a gradient with a per-seed tint."""
    rows = b""
    for y in range(height):
        rows += b"\0" + bytes((x * 7 + y * 3 + seed * 40 + c * 60) % 256
                              for x in range(width) for c in range(3))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))

    return (b"\x89PNG\r\n\x1a\n" +
            chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def data_url(data):
    return "data:image/png;base64," + base64.b64encode(data).decode()


@pytest.fixture(scope="module")
def media(tmp_path_factory):
    root = tmp_path_factory.mktemp("images")
    allowed = root / "allowed"
    allowed.mkdir()
    (allowed / "cat.png").write_bytes(png(40, 30, 1))
    (root / "outside.png").write_bytes(png(40, 30, 2))
    mmproj = root / "mmproj.gguf"
    write_mmproj(str(mmproj), 640, seed=1)
    for name in ("trusted", "untrusted"):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", str(root / f"{name}.key"), "-out", str(root / f"{name}.pem")],
                       check=True, capture_output=True)
    return root


@pytest.fixture(scope="module")
def vision_server(media):
    # The server trusts one self-signed certificate (OpenSSL's default trust store, which
    # SSL_CERT_FILE names), so https image URLs are tested without reaching the internet.
    s = Server(extra_args=["--mmproj", str(media / "mmproj.gguf"), "--allowed-local-media-path",
                           str(media / "allowed"), "--max-images-per-request", "2"],
               wrapper=("env", f"SSL_CERT_FILE={media / 'trusted.pem'}"))
    yield s
    assert s.stop() == 0, s.log_tail()


def serve_images(tls_cert=None):
    """A local HTTP(S) server serving /a.png, redirects to it (/moved, relative; /elsewhere,
    absolute), a redirect loop (/loop) and 404s. Returns (base URL, server)."""
    images = {"/a.png": png(24, 24, 3)}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            redirects = {"/moved": "/a.png", "/loop": "/loop",
                         "/elsewhere": base + "/a.png"}
            if self.path in redirects:
                self.send_response(302)
                self.send_header("Location", redirects[self.path])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = images.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    scheme = "http"
    if tls_cert is not None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(tls_cert) + ".pem", str(tls_cert) + ".key")
        httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
        scheme = "https"
    base = f"{scheme}://127.0.0.1:{httpd.server_address[1]}"
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return base, httpd


@pytest.fixture(scope="module")
def image_host():
    base, httpd = serve_images()
    yield base
    httpd.shutdown()


@pytest.fixture(scope="module")
def https_hosts(media):
    """Two HTTPS image servers: one whose certificate the server trusts, one it does not."""
    trusted, a = serve_images(media / "trusted")
    untrusted, b = serve_images(media / "untrusted")
    yield trusted, untrusted
    a.shutdown()
    b.shutdown()


def chat(server, content, **kwargs):
    body = {"messages": [{"role": "user", "content": content}], "temperature": 0,
            "max_tokens": 8, **kwargs}
    return server.post("/v1/chat/completions", body)


def image_part(url):
    return {"type": "image_url", "image_url": {"url": url}}


def generate(server, text, images):
    r = server.post("/generate", {"text": text, "image_data": images, "sampling_params": GREEDY})
    assert r.status_code == 200, r.text
    return r.json()


def test_openai_client_with_a_base64_image(vision_server):
    client = openai.OpenAI(base_url=vision_server.url + "/v1", api_key="none")
    out = client.chat.completions.create(
        model="default", max_tokens=8, temperature=0,
        messages=[{"role": "user", "content": [
            {"type": "text", "text": "What is in this picture?"},
            image_part(data_url(png(40, 30, 1)))]}])
    assert out.choices[0].message.content
    text_only = client.chat.completions.create(
        model="default", max_tokens=8, temperature=0,
        messages=[{"role": "user", "content": "What is in this picture?"}])
    # The image's span and its <start_of_image> / <end_of_image> are in the prompt.
    assert out.usage.prompt_tokens >= text_only.usage.prompt_tokens + TOKENS_PER_IMAGE + 2
    info = vision_server.get("/get_model_info").json()
    assert info["has_image_understanding"] is True


def test_image_by_http_url_and_local_path(vision_server, image_host, media):
    r = chat(vision_server, [{"type": "text", "text": "Describe:"},
                             image_part(image_host + "/a.png")])
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["content"]
    by_path = generate(vision_server, "Look: <__media__>", str(media / "allowed" / "cat.png"))
    by_file_url = generate(vision_server, "Look: <__media__>",
                           "file://" + str(media / "allowed" / "cat.png"))
    by_data = generate(vision_server, "Look: <__media__>", data_url(png(40, 30, 1)))
    assert by_path["output_ids"] == by_file_url["output_ids"] == by_data["output_ids"]


def test_image_by_https_url_and_redirects(vision_server, https_hosts, image_host):
    trusted, untrusted = https_hosts
    by_data = generate(vision_server, "Look: <__media__>", data_url(png(24, 24, 3)))
    for url in (trusted + "/a.png", trusted + "/moved", trusted + "/elsewhere",
                image_host + "/moved"):
        assert generate(vision_server, "Look: <__media__>", url)["output_ids"] == \
            by_data["output_ids"], url
    r = chat(vision_server, [{"type": "text", "text": "Describe:"},
                             image_part(trusted + "/a.png")])
    assert r.status_code == 200, r.text
    for url, words in ((untrusted + "/a.png", "certificate verify failed"),
                       (trusted + "/loop", "answered HTTP 302 (redirects are followed"),
                       (trusted + "/none.png", "answered HTTP 404")):
        r = vision_server.post("/generate", {"text": "Look: <__media__>", "image_data": url,
                                             "sampling_params": GREEDY})
        assert r.status_code == 400, r.text
        assert words in r.json()["error"]["message"], r.text


def test_same_image_shares_the_cache_and_output_matches_a_cacheless_server(vision_server, media):
    assert vision_server.post("/flush_cache").status_code == 200
    image = data_url(png(40, 30, 5))
    text = "Here is an image: <__media__> and a question about it."
    first = generate(vision_server, text, image)
    second = generate(vision_server, text, image)
    prompt = second["meta_info"]["prompt_tokens"]
    assert first["meta_info"]["cached_tokens"] == 0
    assert second["meta_info"]["cached_tokens"] == prompt - 1  # through the image and beyond
    assert second["output_ids"] == first["output_ids"]
    plain = Server(extra_args=["--mmproj", str(media / "mmproj.gguf"), "--disable-radix-cache"])
    try:
        cold = generate(plain, text, image)
        assert cold["meta_info"]["cached_tokens"] == 0
        assert cold["output_ids"] == first["output_ids"]
    finally:
        assert plain.stop() == 0, plain.log_tail()


def test_a_different_image_matches_only_the_text_before_it(vision_server):
    assert vision_server.post("/flush_cache").status_code == 200
    before = "Compare this picture: "
    text = before + "<__media__> with what you know."
    generate(vision_server, text, data_url(png(40, 30, 6)))
    other = generate(vision_server, text, data_url(png(40, 30, 7)))  # same size, other pixels
    n_before = len(vision_server.post("/tokenize", {"prompt": before + "<start_of_image>"})
                   .json()["tokens"])
    assert 0 < other["meta_info"]["cached_tokens"] <= n_before


def test_a_repeated_image_is_encoded_once(vision_server):
    def encodes():
        for line in vision_server.get("/metrics").text.splitlines():
            if line.startswith("radixlm:image_encodes_total"):
                return float(line.split()[-1])
        raise AssertionError("no image_encodes_total in /metrics")

    image = data_url(png(40, 30, 8))
    start = encodes()
    generate(vision_server, "One <__media__>", image)
    generate(vision_server, "Two <__media__>", image)
    generate(vision_server, "Three <__media__>", image)
    assert encodes() == start + 1


@pytest.mark.parametrize("case", ["truncated", "unsupported", "too_large", "too_many",
                                  "unreachable", "outside", "markers", "not_base64"])
def test_bad_images_are_400(vision_server, media, case):
    good = data_url(png(40, 30, 1))
    text, images, words = "Look: <__media__>", [good], ""
    if case == "truncated":
        images, words = [data_url(png(40, 30, 1)[:60])], "image 0"
    elif case == "unsupported":
        images, words = [data_url(b"BM" + b"\0" * 64)], "image 0"
    elif case == "too_large":
        images, words = [data_url(png(9000, 1, 1))], "image 0"
    elif case == "too_many":
        text, images, words = "<__media__>" * 3, [good] * 3, "the limit is 2"
    elif case == "unreachable":
        images, words = ["http://127.0.0.1:9/none.png"], "could not be fetched"
    elif case == "outside":
        images, words = [str(media / "outside.png")], "outside the allowed media folder"
    elif case == "markers":
        text, words = "No marker here", "image markers"
    elif case == "not_base64":
        images, words = ["%%% not an image %%%"], "neither a URL"
    r = vision_server.post("/generate", {"text": text, "image_data": images,
                                         "sampling_params": GREEDY})
    assert r.status_code == 400, r.text
    assert words in r.json()["error"]["message"], r.text


def test_chat_image_errors_are_400(vision_server):
    r = chat(vision_server, [image_part("data:image/png;base64,AAAA")])
    assert r.status_code == 400, r.text
    r = chat(vision_server, [{"type": "image_url", "image_url": {}}])
    assert r.status_code == 400 and "image_url.url" in r.text, r.text


def test_images_to_a_model_without_a_projector_are_400(server):
    r = server.post("/generate", {"text": "Look: <__media__>",
                                  "image_data": data_url(png(8, 8, 1)),
                                  "sampling_params": GREEDY})
    assert r.status_code == 400, r.text
    assert "--mmproj" in r.json()["error"]["message"]
    info = server.get("/get_model_info").json()
    assert info["has_image_understanding"] is False


def test_a_projector_of_another_width_is_refused_at_start_up(tmp_path):
    wrong = tmp_path / "wrong.gguf"
    write_mmproj(str(wrong), 64)
    out = subprocess.run([_binary(), "serve", "--host", "127.0.0.1", "--port", str(free_port()),
                          "--model-path", _model(), "--mmproj", str(wrong)],
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ})
    assert out.returncode != 0
    assert "outputs rows of 64 values but the model takes rows of 640" in out.stdout + out.stderr


def test_a_projector_for_another_language_model_is_refused_at_start_up():
    # Qwen2.5-VL's projector gives its images M-RoPE positions, which a qwen2vl language model
    # reads (test_images_qwen2vl.py); beside gemma3 it is refused by name, never served wrongly.
    qwen = os.path.join(os.path.dirname(__file__), "..", "vision", "testdata",
                        "tiny_qwen25vl_mmproj.gguf")
    out = subprocess.run([_binary(), "serve", "--host", "127.0.0.1", "--port", str(free_port()),
                          "--model-path", _model(), "--mmproj", qwen],
                         capture_output=True, text=True, timeout=300, env={**os.environ})
    assert out.returncode != 0
    assert ("a 'qwen2.5vl_merger' projector does not fit a 'gemma3' language model" in
            out.stdout + out.stderr)


def test_sglang_frontend_image(sgl, vision_server, media):
    """SGLang's frontend, unmodified: sgl.image writes the chat template's image token
    (gemma-it's <start_of_image>) and sends the file as base64 image_data."""
    backend = sgl.RuntimeEndpoint(vision_server.url)

    @sgl.function
    def program(s, path):
        s += sgl.user(sgl.image(path) + "What is in the picture?")
        s += sgl.assistant(sgl.gen("answer", max_tokens=8, temperature=0))

    state = program.run(path=str(media / "allowed" / "cat.png"), backend=backend)
    assert state.error() is None, state.error()
    assert state["answer"]
    meta = state.get_meta_info("answer")
    assert meta["prompt_tokens"] > TOKENS_PER_IMAGE
