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


def test_fork_join(sgl):
    @sgl.function
    def program(s):
        s += "Two facts about the ocean:\n"
        forks = s.fork(2)
        for i, f in enumerate(forks):
            f += f"Fact {i + 1}:" + sgl.gen("fact", max_tokens=8, stop="\n", temperature=0)
        forks.join()
        s += "Summary:" + sgl.gen("summary", max_tokens=6, temperature=0)

    state = program.run()
    assert isinstance(state["summary"], str)
    assert "Fact 1:" not in state.text()  # forks do not write into the parent


def test_roles(sgl):
    @sgl.function
    def program(s):
        s += sgl.system("You are terse.")
        s += sgl.user("Say hi.")
        s += sgl.assistant(sgl.gen("reply", max_tokens=6, temperature=0))

    state = program.run()
    assert isinstance(state["reply"], str)
    assert "<start_of_turn>user" in state.text()
    assert len(state.messages()) == 3


def test_run_batch(sgl):
    @sgl.function
    def program(s, topic):
        s += f"One word about {topic}:" + sgl.gen("word", max_tokens=3, temperature=0)

    states = program.run_batch([{"topic": t} for t in ("cats", "rain", "music")],
                               num_threads=3, progress_bar=False)
    assert len(states) == 3
    assert all(isinstance(st["word"], str) for st in states)


def test_streaming(sgl):
    @sgl.function
    def program(s):
        s += "Count to five: one,"
        s += sgl.gen("count", max_tokens=8, temperature=0)

    state = program.run(stream=True)
    pieces = list(state.text_iter(var_name="count"))
    assert "".join(pieces) == state["count"]
    assert len(pieces) >= 1
