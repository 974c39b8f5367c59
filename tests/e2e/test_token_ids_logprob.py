"""token_ids_logprob on /generate against the real server: the logprobs of requested token ids
at every scored position (input and output), streaming, ragged batches, and decode-time values
equal to prefill-time values for the same positions."""

import math

from conftest import sse_events

G = "/generate"
PROMPT = "The quick brown fox jumps over the lazy"
TOL = 1e-3  # decode and prefill compute the same rows in different batch shapes (CPU: equal)


def prompt_ids(server, text=PROMPT):
    r = server.post("/tokenize", {"prompt": text})
    assert r.status_code == 200, r.text
    return r.json()["tokens"]


def generate(server, **body):
    r = server.post(G, body)
    assert r.status_code == 200, r.text
    return r.json()


def check_lists(entries, ids, with_text):
    """Each position's list: one [logprob, id, text] per requested id, in their order."""
    for entry in entries:
        assert [e[1] for e in entry] == ids
        for logprob, _, text in entry:
            assert logprob <= 0 and math.isfinite(logprob)
            assert (isinstance(text, str)) if with_text else (text is None)


def test_shapes_and_agreement_with_token_logprobs(server):
    ids = prompt_ids(server)
    first = generate(server, input_ids=ids, sampling_params={"temperature": 0,
                                                              "max_new_tokens": 6})
    out_ids = first["output_ids"]
    # Ask for the generated tokens themselves, a repeat, and two unrelated ids.
    wanted = out_ids[:3] + [out_ids[0], 100, 2]
    r = generate(server, input_ids=ids, sampling_params={"temperature": 0, "max_new_tokens": 6},
                 return_logprob=True, logprob_start_len=0, token_ids_logprob=wanted,
                 top_logprobs_num=1)
    meta = r["meta_info"]
    assert r["output_ids"] == out_ids
    inputs, outputs = meta["input_token_ids_logprobs"], meta["output_token_ids_logprobs"]
    assert len(inputs) == meta["prompt_tokens"] == len(ids)
    assert inputs[0] is None  # nothing predicts the first token
    check_lists(inputs[1:], wanted, with_text=False)
    assert len(outputs) == len(out_ids)
    check_lists(outputs, wanted, with_text=False)
    # The same distribution as output_token_logprobs / input_token_logprobs.
    for k, (logprob, token, _) in enumerate(meta["output_token_logprobs"]):
        for lp, tid, _ in outputs[k]:
            if tid == token:
                assert lp == logprob
        # Greedy: the top token is the sampled one, so no requested id beats it.
        assert all(lp <= logprob + 1e-6 for lp, _, _ in outputs[k])
    for p, (logprob, token, _) in enumerate(meta["input_token_logprobs"][1:], start=1):
        for lp, tid, _ in inputs[p]:
            if tid == token:
                assert lp == logprob
    # Without token_ids_logprob the fields are absent, as in SGLang.
    plain = generate(server, input_ids=ids, return_logprob=True,
                     sampling_params={"temperature": 0, "max_new_tokens": 2})
    assert "output_token_ids_logprobs" not in plain["meta_info"]
    # With return_text_in_logprobs each entry carries its token's text.
    texts = generate(server, input_ids=ids, return_logprob=True, return_text_in_logprobs=True,
                     token_ids_logprob=wanted, logprob_start_len=3,
                     sampling_params={"temperature": 0, "max_new_tokens": 2})["meta_info"]
    assert len(texts["input_token_ids_logprobs"]) == len(ids) - 3
    check_lists(texts["input_token_ids_logprobs"], wanted, with_text=True)
    check_lists(texts["output_token_ids_logprobs"], wanted, with_text=True)


def test_decode_time_values_equal_prefill_time_values(server):
    ids = prompt_ids(server, "In 1969 the first people to walk on the moon were")
    wanted = [100, 2, 1000, 5000, 20000]
    gen = generate(server, input_ids=ids, return_logprob=True, token_ids_logprob=wanted,
                   sampling_params={"temperature": 0, "max_new_tokens": 12, "ignore_eos": True})
    out_ids = gen["output_ids"]
    decoded = gen["meta_info"]["output_token_ids_logprobs"]
    assert len(decoded) == len(out_ids) == 12
    # Prompt + output as input, scored from the first output position: the row that predicts
    # output k is the same row the decode step sampled it from.
    server.post("/flush_cache")
    score = generate(server, input_ids=ids + out_ids, return_logprob=True,
                     logprob_start_len=len(ids), token_ids_logprob=wanted,
                     sampling_params={"max_new_tokens": 0})
    prefilled = score["meta_info"]["input_token_ids_logprobs"]
    assert len(prefilled) == len(out_ids)
    worst = 0.0
    for k in range(len(out_ids)):
        assert [e[1] for e in prefilled[k]] == wanted
        for (a, ia, _), (b, ib, _) in zip(decoded[k], prefilled[k]):
            assert ia == ib
            worst = max(worst, abs(a - b))
    assert worst <= TOL, worst
    # And each output token's own logprob, the same way.
    for (a, ta, _), (b, tb, _) in zip(gen["meta_info"]["output_token_logprobs"],
                                      score["meta_info"]["input_token_logprobs"]):
        assert ta == tb and abs(a - b) <= TOL


def test_streaming_carries_the_same_lists(server):
    ids = prompt_ids(server)
    wanted = [100, 2, 7]
    body = {"input_ids": ids, "return_logprob": True, "logprob_start_len": 0,
            "token_ids_logprob": wanted,
            "sampling_params": {"temperature": 0, "max_new_tokens": 5, "ignore_eos": True}}
    whole = generate(server, **body)["meta_info"]
    with server.post(G, {**body, "stream": True}, stream=True) as resp:
        assert resp.status_code == 200
        events = sse_events(resp)
    assert len(events) >= 2
    last = events[-1]["meta_info"]
    # Cumulative chunks: the last one has every position, equal to the non-streamed answer.
    assert len(last["output_token_ids_logprobs"]) == 5
    for a, b in zip(last["output_token_ids_logprobs"], whole["output_token_ids_logprobs"]):
        assert [e[1] for e in a] == [e[1] for e in b] == wanted
        assert all(abs(x[0] - y[0]) <= TOL for x, y in zip(a, b))
    assert last["input_token_ids_logprobs"][0] is None
    for a, b in zip(last["input_token_ids_logprobs"][1:], whole["input_token_ids_logprobs"][1:]):
        assert [e[1] for e in a] == [e[1] for e in b] == wanted
        assert all(abs(x[0] - y[0]) <= TOL for x, y in zip(a, b))
    # Each chunk's lists grow with its outputs.
    for event in events:
        meta = event["meta_info"]
        assert len(meta["output_token_ids_logprobs"]) == meta["completion_tokens"]


def test_ragged_batch(server):
    texts = ["Water boils at", "The sky is", "One plus one is"]
    per_prompt = [[100, 2], [7], None]
    out = server.post(G, {"text": texts, "return_logprob": True, "logprob_start_len": 1,
                          "token_ids_logprob": per_prompt,
                          "sampling_params": {"temperature": 0, "max_new_tokens": 3}})
    assert out.status_code == 200, out.text
    results = out.json()
    assert len(results) == 3
    for result, wanted in zip(results, per_prompt):
        meta = result["meta_info"]
        if wanted is None:
            assert "output_token_ids_logprobs" not in meta
            continue
        assert len(meta["input_token_ids_logprobs"]) == meta["prompt_tokens"] - 1
        check_lists(meta["input_token_ids_logprobs"], wanted, with_text=False)
        assert len(meta["output_token_ids_logprobs"]) == meta["completion_tokens"]
        check_lists(meta["output_token_ids_logprobs"], wanted, with_text=False)
    # Each prompt alone gives the same values.
    for text, wanted, result in zip(texts[:2], per_prompt[:2], results[:2]):
        alone = generate(server, text=text, return_logprob=True, logprob_start_len=1,
                         token_ids_logprob=wanted,
                         sampling_params={"temperature": 0, "max_new_tokens": 3})["meta_info"]
        for a, b in zip(alone["output_token_ids_logprobs"],
                        result["meta_info"]["output_token_ids_logprobs"]):
            assert all(abs(x[0] - y[0]) <= TOL for x, y in zip(a, b))
    # A flat list applies to every prompt of the batch.
    flat = server.post(G, {"text": texts[:2], "return_logprob": True, "token_ids_logprob": [5, 6],
                           "sampling_params": {"temperature": 0, "max_new_tokens": 2}}).json()
    for result in flat:
        check_lists(result["meta_info"]["output_token_ids_logprobs"], [5, 6], with_text=False)


def test_bad_token_ids_logprob_is_400(server):
    for body, needle in [
        ({"text": "a", "return_logprob": True, "token_ids_logprob": [1, 10**9]},
         "token_ids_logprob[1]"),
        ({"text": "a", "return_logprob": True, "token_ids_logprob": [[1], [2]]}, "single prompt"),
        ({"text": ["a", "b"], "return_logprob": True, "token_ids_logprob": [[1]]}, "2 prompts"),
        ({"text": "a", "return_logprob": True, "token_ids_logprob": "1"}, "token_ids_logprob"),
        ({"text": "a", "return_logprob": True, "token_ids_logprob": [-1]}, "vocabulary"),
    ]:
        r = server.post(G, body)
        assert r.status_code == 400, (body, r.text)
        assert needle in r.json()["error"]["message"], (body, r.text)
