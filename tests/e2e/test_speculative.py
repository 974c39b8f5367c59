"""Speculative decoding (--speculative-algorithm NGRAM, and STANDALONE with a draft model,
drafting chains or top-k trees) against the shared server without it: the same requests give the same outputs (greedy,
regex / JSON-schema constrained, stop strings, sampled with a seed, n > 1, 8 concurrent,
streaming, retraction under a tiny KV pool), and text that repeats earlier text is decoded in
fewer steps (meta_info's spec_verify_ct / spec_accept_length)."""

import concurrent.futures
import subprocess

import pytest

from conftest import Server, _binary, _model, sse_events

PASSAGE = ("The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor "
           "jugs. How vexingly quick daft zebras jump. ")
CODE = ("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\n"
        "def mul(a, b):\n    return a * b\n")

COPY_PROMPTS = [
    f"Repeat the text exactly.\nText: {PASSAGE}\nRepeated: {PASSAGE}\nText: {PASSAGE}\nRepeated:",
    f"Copy this code:\n{CODE}\nCopy:\n{CODE}\nCopy again:\n",
    "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,",
    "Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday, Monday, Tuesday,",
    f"Quote the first sentence of this passage: \"{PASSAGE}\" The first sentence is \"",
    "A B C D E F G H I J K L M N O P Q R S T U V W X Y Z A B C D E F G",
]
OTHER_PROMPTS = [f"Question {i}: name a {t} and describe it in one sentence.\nAnswer:"
                 for i, t in enumerate(["river", "bird", "color", "planet", "tree", "city",
                                        "metal", "fruit", "language", "instrument", "sport",
                                        "mountain", "ocean", "tool", "flower", "animal",
                                        "country", "game", "dance", "fabric", "gem", "spice",
                                        "cloud", "machine"])]


@pytest.fixture(scope="module")
def spec_server():
    s = Server(extra_args=["--speculative-algorithm", "NGRAM"])
    yield s
    assert s.stop() == 0, s.log_tail()


def generate(srv, text, **params):
    params.setdefault("temperature", 0)
    params.setdefault("max_new_tokens", 40)
    r = srv.post("/generate", {"text": text, "sampling_params": params})
    assert r.status_code == 200, r.text
    return r.json()


def test_greedy_outputs_are_unchanged_and_copies_take_fewer_steps(server, spec_server):
    accepted = 0
    for prompt in COPY_PROMPTS + OTHER_PROMPTS:
        want = generate(server, prompt)
        got = generate(spec_server, prompt)
        assert got["output_ids"] == want["output_ids"], prompt
        assert got["text"] == want["text"]
        meta = got["meta_info"]
        assert meta["spec_verify_ct"] >= 1
        assert "spec_verify_ct" not in want["meta_info"]
        if prompt in COPY_PROMPTS:
            accepted += meta["spec_accepted_tokens"]
    # Copy-heavy prompts are decoded in far fewer steps than tokens.
    assert accepted >= 60
    info = spec_server.server_info()
    assert info["speculative_algorithm"] == "NGRAM"
    assert info["internal_states"][0]["avg_spec_accept_length"] > 1.0


def test_constrained_and_stop_requests_are_unchanged(server, spec_server):
    cases = [
        dict(regex=r"(yes|no), because [a-z ]{5,30}\."),
        dict(json_schema='{"type":"object","properties":{"name":{"type":"string"},'
                         '"age":{"type":"integer"}},"required":["name","age"]}'),
        dict(stop=["."]),
        dict(stop=[" Tuesday"]),
        dict(max_new_tokens=7),
    ]
    for params in cases:
        for prompt in COPY_PROMPTS[:4]:
            want = generate(server, prompt, **params)
            got = generate(spec_server, prompt, **params)
            assert got["text"] == want["text"], (params, prompt)
            assert got["meta_info"]["finish_reason"] == want["meta_info"]["finish_reason"]


# Constrained prompts whose answers copy the prompt: their drafts are kept.
SCHEMA = ('{"type":"object","properties":{"name":{"type":"string"},"city":{"type":"string"}},'
          '"required":["name","city"]}')
CONSTRAINED_COPIES = [
    (COPY_PROMPTS[3], dict(regex=r"[A-Za-z, ]{10,120}")),
    ("A B C D E F G H I J K L M N O P Q R S T U V W X Y Z A B C D E F G",
     dict(regex=r"( [A-Z]){5,30}")),
    ('Copy the record.\nRecord: {"name": "Ada Lovelace", "city": "London"}\n'
     'Copy: {"name": "Ada Lovelace", "city": "London"}\nRecord: {"name": "Alan Turing", '
     '"city": "Manchester"}\nCopy:', dict(json_schema=SCHEMA)),
]


def test_constrained_requests_draft_and_stay_unchanged(server, spec_server):
    drafted = accepted = 0
    for prompt, params in CONSTRAINED_COPIES:
        want = generate(server, prompt, max_new_tokens=48, **params)
        got = generate(spec_server, prompt, max_new_tokens=48, **params)
        assert got["output_ids"] == want["output_ids"], (params, prompt)
        assert got["text"] == want["text"]
        drafted += got["meta_info"]["spec_draft_tokens"]
        accepted += got["meta_info"]["spec_accepted_tokens"]
    assert drafted > 0
    assert accepted >= 10, (drafted, accepted)


def test_seeded_sampling_and_n_are_unchanged(server, spec_server):
    for prompt in COPY_PROMPTS[:3]:
        params = dict(temperature=0.8, top_p=0.9, sampling_seed=11, n=2, max_new_tokens=30)
        want = server.post("/generate", {"text": prompt, "sampling_params": params}).json()
        got = spec_server.post("/generate", {"text": prompt, "sampling_params": params}).json()
        assert [g["text"] for g in got] == [w["text"] for w in want], prompt


def test_concurrent_requests_are_unchanged(server, spec_server):
    prompts = COPY_PROMPTS + OTHER_PROMPTS[:2]
    want = [generate(server, p)["text"] for p in prompts]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda p: generate(spec_server, p)["text"], prompts))
    assert got == want


def test_streaming_sends_the_same_text(server, spec_server):
    prompt = COPY_PROMPTS[1]
    want = generate(server, prompt)["text"]
    r = spec_server.post("/generate", {"text": prompt, "stream": True,
                                       "sampling_params": {"temperature": 0,
                                                           "max_new_tokens": 40}},
                         stream=True)
    assert r.status_code == 200
    events = [e for e in sse_events(r)]
    assert len(events) >= 2
    assert events[-1]["text"] == want


def test_retraction_under_a_tiny_pool_is_unchanged(server):
    # 8 requests in one batch, in a pool that holds about three of them, admitted
    # optimistically (a tiny decode reserve): requests are retracted and resumed while they
    # draft.
    tiny = Server(extra_args=["--speculative-algorithm", "NGRAM", "--max-total-tokens", "400",
                              "--max-running-requests", "8", "--schedule-conservativeness",
                              "0.01"])
    try:
        prompts = COPY_PROMPTS + OTHER_PROMPTS[:2]
        params = {"temperature": 0, "max_new_tokens": 80}
        want = [generate(server, p, max_new_tokens=80)["text"] for p in prompts]
        r = tiny.post("/generate", {"text": prompts, "sampling_params": params})
        assert r.status_code == 200, r.text
        assert [g["text"] for g in r.json()] == want
        metrics = tiny.get("/metrics").text
        retractions = [line for line in metrics.splitlines()
                       if "retract" in line and not line.startswith("#")]
        assert retractions and float(retractions[0].split()[-1]) > 0, metrics
    finally:
        assert tiny.stop() == 0, tiny.log_tail()


def run_draft_model_server(server, extra_args, cases):
    """Runs `cases` ((prompt, params) pairs, 32 tokens each) on a STANDALONE server whose draft
    model is the model itself (no smaller model of its vocabulary is at hand) and on the plain
    server: the texts must be equal. Returns the drafted, accepted and verify-step totals, the
    STANDALONE server's /get_server_info and its log."""
    srv = Server(extra_args=["--speculative-algorithm", "STANDALONE",
                             "--speculative-draft-model-path", _model(), *extra_args])
    try:
        drafted = accepted = steps = 0
        for prompt, params in cases:
            want = generate(server, prompt, max_new_tokens=32, **params)
            got = generate(srv, prompt, max_new_tokens=32, **params)
            assert got["text"] == want["text"], (params, prompt)
            drafted += got["meta_info"]["spec_draft_tokens"]
            accepted += got["meta_info"]["spec_accepted_tokens"]
            steps += got["meta_info"]["spec_verify_ct"]
        return drafted, accepted, steps, srv.server_info(), srv.log_text()
    finally:
        assert srv.stop() == 0, srv.log_tail()


def test_draft_model_speculation_is_unchanged(server):
    # Chains of 4: outputs are unchanged and most drafts are kept. As in SGLang, a chain's
    # draft size is num_steps + 1: another --speculative-num-draft-tokens is adjusted, with a
    # warning.
    cases = [(p, {}) for p in COPY_PROMPTS[:3] + OTHER_PROMPTS[:3]] + CONSTRAINED_COPIES[:2]
    drafted, accepted, _, info, log = run_draft_model_server(
        server, ["--speculative-num-steps", "4", "--speculative-num-draft-tokens", "9"], cases)
    assert accepted > 0.8 * drafted > 0, (accepted, drafted)
    assert info["speculative_algorithm"] == "STANDALONE"
    assert info["speculative_num_draft_tokens"] == 5
    assert ("--speculative-num-draft-tokens 9 is adjusted to --speculative-num-steps + 1 = 5"
            in log), log


def test_draft_model_tree_speculation_is_unchanged(server):
    # Top-3 trees of up to 8 nodes, 3 levels: outputs are unchanged, the greedy chain inside
    # each tree is mostly kept, and side branches are drafted (and rejected) beside it.
    cases = [(p, {}) for p in COPY_PROMPTS[:2] + OTHER_PROMPTS[:2]] + CONSTRAINED_COPIES[:1]
    drafted, accepted, steps, info, log = run_draft_model_server(
        server, ["--speculative-num-steps", "3", "--speculative-eagle-topk", "3",
                 "--speculative-num-draft-tokens", "8"], cases)
    assert drafted > accepted > 1.5 * steps, (drafted, accepted, steps)
    assert info["speculative_algorithm"] == "STANDALONE"
    assert info["speculative_num_draft_tokens"] == 8
    assert "adjusted" not in log


def test_unsupported_algorithms_are_refused_at_startup():
    for args in [["--speculative-algorithm", "EAGLE"], ["--speculative-algorithm", "ngram"],
                 ["--speculative-algorithm", "STANDALONE"],
                 ["--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path",
                  _model(), "--speculative-eagle-topk", "0"],
                 ["--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path",
                  _model(), "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens",
                  "100"],
                 ["--speculative-draft-model-path", _model()]]:
        p = subprocess.run([_binary(), "serve", "--model-path", _model(), "--port", "0", *args],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode != 0, args
        assert "--speculative-" in p.stderr, p.stderr
