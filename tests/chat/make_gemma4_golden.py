#!/usr/bin/env python3
"""Writes tests/chat/testdata/gemma4_golden.json: Gemma 4's chat template
(templates/gemma4.jinja) rendered by Python jinja2, in the environment make_golden.py builds
(transformers' apply_chat_template), over the common conversations and Gemma 4's own features:
thinking (enable_thinking, reasoning_content), tools, OpenAI-style tool calls with their results,
content parts with images. gemma4_template_test.cc renders the same cases with radixlm's engine
and compares byte for byte. Kept apart from golden.json so that each can be regenerated alone:

    python3 tests/chat/make_gemma4_golden.py      # needs jinja2 (>= 3.1)
"""

import json
import pathlib
import sys

import jinja2

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from golden_cases import ASSISTANT, COMMON, RANDOM, RICH_TOOL, SYSTEM, USER, USER2  # noqa: E402
from golden_cases import WEATHER_TOOL  # noqa: E402
from make_golden import make_environment, render  # noqa: E402

TEMPLATE = "gemma4.jinja"
OUTPUT = HERE / "testdata" / "gemma4_golden.json"

WEATHER_CALL = {"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": {"location": "Paris",
                                                                  "unit": "celsius"}}}
SEARCH_CALL = {"id": "call_2", "type": "function",
               "function": {"name": "search",
                            "arguments": {"query": "museums", "filters": {"open": True,
                                                                          "max": 3},
                                          "tags": ["art", "history"]}}}
TOOL_HISTORY = [
    SYSTEM,
    {"role": "user", "content": "Weather in Paris, and some museums?"},
    {"role": "assistant", "content": "", "reasoning_content": "I need both tools.",
     "tool_calls": [WEATHER_CALL, SEARCH_CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": "{\"temperature\": 21.5}"},
    {"role": "tool", "tool_call_id": "call_2",
     "content": [{"type": "text", "text": "Louvre, "}, {"type": "text", "text": "Orsay"}]},
    {"role": "assistant", "content": "It is 21.5 degrees; try the Louvre or the Orsay."},
    USER2,
]
CASES = {
    "thinking": (COMMON["multi_turn"], {"enable_thinking": True}),
    "thinking_off": (COMMON["multi_turn"], {"enable_thinking": False}),
    "thought_in_history": ([USER, {"role": "assistant",
                                   "content": "<|channel>thought\nEasy.<channel|>Paris."},
                            USER2], {}),
    "tools": ([USER], {"tools": [WEATHER_TOOL, RICH_TOOL]}),
    "tool_history": (TOOL_HISTORY, {"tools": [WEATHER_TOOL, RICH_TOOL]}),
    "tool_call_pending": (TOOL_HISTORY[:3], {"tools": [WEATHER_TOOL, RICH_TOOL],
                                             "enable_thinking": True}),
    "developer": ([{"role": "developer", "content": "  Be brief.  "}, USER, ASSISTANT], {}),
    "content_parts": ([{"role": "user", "content": [{"type": "text", "text": "What is "},
                                                    {"type": "image"},
                                                    {"type": "text", "text": " this?"}]}], {}),
}


def main():
    env = make_environment()
    source = (HERE / "templates" / TEMPLATE).read_text(encoding="utf-8")
    conversations = {name: (messages, {}) for name, messages in COMMON.items()}
    conversations.update({name: (messages, {}) for name, messages in RANDOM.items()})
    conversations.update(CASES)
    cases = []
    for conversation_name, (messages, extra) in conversations.items():
        for add_generation_prompt in (False, True):
            case = {
                "name": f"gemma4/{conversation_name}/"
                        f"{'gen' if add_generation_prompt else 'nogen'}",
                "template": TEMPLATE,
                "messages": messages,
                "add_generation_prompt": add_generation_prompt,
                "bos_token": "<bos>",
                "eos_token": "<eos>",
                "extra": extra,
            }
            case.update(render(env, source, messages, add_generation_prompt, "<bos>", "<eos>",
                               extra))
            cases.append(case)
    golden = {"generator": "tests/chat/make_gemma4_golden.py",
              "jinja2_version": jinja2.__version__, "cases": cases}
    OUTPUT.write_text(json.dumps(golden, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    errors = sum("error" in case for case in cases)
    print(f"wrote {len(cases)} cases ({errors} expected errors) to {OUTPUT}")


if __name__ == "__main__":
    main()
