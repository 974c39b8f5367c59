"""The tool-call and reasoning parsers of the third-wave families, chosen with serve's flags:
a forced call is written in the parser's format (granite's <|tool_call|>[...], phi4_mini's
functools[...], glm4's name-then-arguments, gemma4's <|tool_call>call:f{city:<|"|>...<|"|>}
<tool_call|>) and comes back as OpenAI tool_calls with JSON arguments, whole and streamed; the
reasoning parser names (mistral, glm45, gemma4) are accepted. One server per parser, on
the default model (its template has no tool syntax, so the format is the flag's)."""

import json

import openai
import pytest

from conftest import Server

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 30}},
                   "required": ["city"]}}}
NOW = {"type": "function", "function": {"name": "get_time", "description": "The time"}}


@pytest.fixture(scope="module", params=[("granite", "mistral"), ("phi4_mini", "glm45"),
                                        ("glm4", "qwen3"), ("gemma4", "gemma4")],
                ids=lambda p: p[0])
def family_server(request):
    tool_parser, reasoning_parser = request.param
    s = Server(extra_args=["--tool-call-parser", tool_parser,
                           "--reasoning-parser", reasoning_parser])
    yield s
    assert s.stop() == 0


def test_forced_call_in_the_parsers_format_comes_back_as_tool_calls(family_server):
    client = openai.OpenAI(base_url=family_server.url + "/v1", api_key="x", max_retries=0,
                           timeout=300)
    kwargs = dict(model="m", messages=[{"role": "user", "content": "Weather in Paris?"}],
                  tools=[WEATHER, NOW], temperature=0, max_tokens=60,
                  tool_choice={"type": "function", "function": {"name": "get_weather"}})
    choice = client.chat.completions.create(**kwargs).choices[0]
    assert choice.finish_reason == "tool_calls", choice
    (call,) = choice.message.tool_calls
    assert call.function.name == "get_weather"
    assert isinstance(json.loads(call.function.arguments)["city"], str)
    assert choice.message.content is None
    # Streamed, the deltas assemble to the same call.
    name, arguments = None, ""
    for chunk in client.chat.completions.create(stream=True, **kwargs):
        if chunk.choices and chunk.choices[0].delta.tool_calls:
            for delta in chunk.choices[0].delta.tool_calls:
                name = delta.function.name or name
                arguments += delta.function.arguments or ""
    assert name == "get_weather"
    assert arguments == call.function.arguments
