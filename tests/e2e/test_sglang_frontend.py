"""SGLang's own frontend language (from PyPI), unmodified programs, through RuntimeEndpoint."""

import pytest


def test_gen_with_stop_and_max_tokens(sgl):
    @sgl.function
    def program(s):
        s += "Q: List three fruits.\nA: 1."
        s += sgl.gen("fruits", max_tokens=16, stop="\n", temperature=0)
        s += "\nDone."

    state = program.run()
    assert "\n" not in state["fruits"]
    assert state.text().endswith("\nDone.")
    meta = state.get_meta_info("fruits")
    assert meta["completion_tokens"] <= 16


def test_gen_int(sgl):
    @sgl.function
    def program(s):
        s += "Q: What is 3 + 4?\nA: The answer is "
        s += sgl.gen_int("answer", max_tokens=4)

    state = program.run()
    assert state.error() is None, state.error()
    int(state["answer"].strip())  # gen_int's regex constraint: an integer


def test_gen_string(sgl):
    @sgl.function
    def program(s):
        s += "Q: What is the capital of France? Answer with a quoted word.\nA: "
        s += sgl.gen_string("city", max_tokens=24, temperature=0)

    state = program.run()
    assert state.error() is None, state.error()
    import re
    city = state["city"]
    # gen_string's regex constraint: a double-quoted run of word characters and spaces.
    if state.get_meta_info("city")["finish_reason"]["type"] == "stop":
        assert re.fullmatch(r'"[\w\d\s]*"', city), city
    else:
        assert re.fullmatch(r'"[\w\d\s]*', city), city


def test_gen_with_regex(sgl):
    @sgl.function
    def program(s):
        s += "My phone number is "
        s += sgl.gen("phone", max_tokens=12, regex=r"\d{3}-\d{4}", temperature=0)

    state = program.run()
    assert state.error() is None, state.error()
    import re
    assert re.fullmatch(r"\d{3}-\d{4}", state["phone"]), state["phone"]


def test_select_normalized_and_greedy(sgl):
    @sgl.function
    def program(s, method):
        s += "The capital of France is"
        s += sgl.select("city", choices=[" Paris", " a banana", " Tokyo"], temperature=0,
                        choices_method=method)

    normalized = program.run(method=sgl.token_length_normalized)
    assert normalized["city"] in (" Paris", " a banana", " Tokyo")
    meta = normalized.get_meta_info("city")
    assert len(meta["normalized_prompt_logprobs"]) == 3
    greedy = program.run(method=sgl.greedy_token_selection)
    assert greedy["city"] in (" Paris", " a banana", " Tokyo")
    assert normalized["city"] == " Paris"


def _greedy(server, text, **params):
    """/generate's temperature-0 completion of `text`, called directly (not through SGLang)."""
    r = server.post("/generate", {"text": text,
                                  "sampling_params": {"temperature": 0, **params}})
    assert r.status_code == 200, r.text
    return r.json()


def test_fork_join(sgl, server):
    head = "Two facts about the ocean:\n"

    @sgl.function
    def program(s):
        s += head
        forks = s.fork(2)
        for i, f in enumerate(forks):
            f += f"Fact {i + 1}:" + sgl.gen("fact", max_tokens=8, stop="\n", temperature=0)
        forks.join()
        s += "Summary:" + sgl.gen("summary", max_tokens=6, temperature=0)

    state = program.run()
    assert state.error() is None, state.error()
    # join() gathers each branch's variable into the parent, in fork order; each branch
    # continued the shared prefix with its own text.
    facts = state["fact"]
    assert isinstance(facts, list) and len(facts) == 2, facts
    for i, fact in enumerate(facts):
        expected = _greedy(server, f"{head}Fact {i + 1}:", max_new_tokens=8, stop="\n")
        assert fact == expected["text"], (i, fact, expected["text"])
        assert "\n" not in fact
    # Forks do not write into the parent: the summary continues the prefix alone.
    expected = _greedy(server, head + "Summary:", max_new_tokens=6)
    assert state["summary"] == expected["text"]
    assert state.text() == head + "Summary:" + expected["text"]


def test_roles(sgl, server):
    @sgl.function
    def program(s, generate):
        s += sgl.system("You are terse.")
        s += sgl.user("Say hi.")
        if generate:
            s += sgl.assistant(sgl.gen("reply", max_tokens=6, temperature=0))
        else:
            s += sgl.assistant_begin()

    prompt = program.run(generate=False).text()  # the rendered turns up to the model's turn
    assert "<start_of_turn>user" in prompt and prompt.endswith("<start_of_turn>model\n")
    state = program.run(generate=True)
    assert state.error() is None, state.error()
    expected = _greedy(server, prompt, max_new_tokens=6)
    reply = state["reply"]
    assert reply == expected["text"]
    assert state.text().startswith(prompt + reply)
    assert state.text()[len(prompt + reply):].startswith("<end_of_turn>")
    assert [m["role"] for m in state.messages()] == ["system", "user", "assistant"]
    assert state.messages()[0]["content"] == "You are terse."
    assert state.messages()[1]["content"] == "Say hi."
    assert state.messages()[2]["content"] == reply.lstrip()


def test_run_batch(sgl, server):
    @sgl.function
    def program(s, topic):
        s += f"One word about {topic}:" + sgl.gen("word", max_tokens=3, temperature=0)

    topics = ("cats", "rain", "music")
    states = program.run_batch([{"topic": t} for t in topics],
                               num_threads=3, progress_bar=False)
    assert len(states) == 3
    # Each state belongs to its own argument (in order) and holds that prompt's greedy text.
    for topic, st in zip(topics, states):
        assert st.error() is None, st.error()
        expected = _greedy(server, f"One word about {topic}:", max_new_tokens=3)
        assert st["word"] == expected["text"], (topic, st["word"], expected["text"])
        assert st.text() == f"One word about {topic}:" + expected["text"]
        assert st.get_meta_info("word")["completion_tokens"] == \
            expected["meta_info"]["completion_tokens"]


def test_streaming(sgl, server):
    prompt = "Count to five: one,"

    @sgl.function
    def program(s):
        s += prompt
        s += sgl.gen("count", max_tokens=8, temperature=0)

    state = program.run(stream=True)
    pieces = list(state.text_iter(var_name="count"))
    expected = _greedy(server, prompt, max_new_tokens=8)
    # Streamed in several chunks whose concatenation is the non-streamed greedy text.
    assert expected["meta_info"]["completion_tokens"] >= 2, expected
    assert len([p for p in pieces if p]) >= 2, pieces
    assert "".join(pieces) == state["count"] == expected["text"]
    assert state.text() == prompt + expected["text"]
    # The last chunk's meta_info (what SGLang keeps) carries the finish reason.
    meta = state.get_meta_info("count")
    assert meta["finish_reason"] is not None
    assert meta["finish_reason"]["type"] == expected["meta_info"]["finish_reason"]["type"]
    assert meta["completion_tokens"] == expected["meta_info"]["completion_tokens"]
