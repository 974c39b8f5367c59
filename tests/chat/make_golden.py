#!/usr/bin/env python3
"""Writes tests/chat/testdata/golden.json: each chat template in tests/chat/templates/ rendered
by Python jinja2 over a fixed set of conversations, with the environment Hugging Face
transformers builds for apply_chat_template (transformers/utils/chat_template_utils.py):

    ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                  extensions=[AssistantTracker, jinja2.ext.loopcontrols])
    filters["tojson"] = json.dumps(x, ensure_ascii=False, indent, separators, sort_keys)
    globals["raise_exception"], globals["strftime_now"]

and the variables transformers passes: messages, tools=None, documents=None,
add_generation_prompt, bos_token, eos_token, plus per-case extras.

The C++ test (golden_test.cc) renders the same cases with radixlm's engine and compares byte for
byte. Rerun after changing a template or a case:

    /usr/bin/python3 tests/chat/make_golden.py      # needs python3-jinja2 (>= 3.1)
"""

import json
import pathlib
from datetime import datetime

import jinja2
from jinja2.exceptions import TemplateError
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = pathlib.Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
OUTPUT = HERE / "testdata" / "golden.json"


class GenerationTag(Extension):
    """transformers' AssistantTracker with tracking off: {% generation %} renders its body."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def make_environment():
    def raise_exception(message):
        raise TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.now().strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


# ---- conversations -------------------------------------------------------------------------

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
USER = {"role": "user", "content": "What is the capital of France?"}
ASSISTANT = {"role": "assistant", "content": "The capital of France is Paris."}
USER2 = {"role": "user", "content": "And of Germany?"}

COMMON = {
    "user_only": [{"role": "user", "content": "Hello!"}],
    "system_user": [SYSTEM, USER],
    "multi_turn": [USER, ASSISTANT, USER2],
    "system_multi_turn": [SYSTEM, USER, ASSISTANT, USER2],
    "assistant_last": [USER, ASSISTANT],
    "system_assistant_last": [SYSTEM, USER, ASSISTANT],
    "unicode": [
        {"role": "system", "content": "Réponds en français 🇫🇷, s’il te plaît."},
        {"role": "user", "content": "\u00a0你好，世界！ 👋🏽 café naïve — “quotes” ‘single’\u3000"},
        {"role": "assistant", "content": "مرحبا 😀 Здравствуйте, Ελληνικά ß"},
        {"role": "user", "content": "ZWJ 👩\u200d👩\u200d👧\u200d👦 combining e\u0301 \U0001F600"},
    ],
    "empty_content": [
        {"role": "user", "content": ""},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": ""},
    ],
    "multiline": [
        {"role": "system", "content": "Line 1\nLine 2\n\n    indented line\n"},
        {"role": "user", "content": "  leading and trailing spaces  \n\n"},
        {"role": "assistant", "content": "```python\nprint('hi')\n```\n"},
        {"role": "user", "content": "tabs\tand\r\nCRLF\n\t"},
    ],
    "template_like_content": [
        {"role": "user", "content": "{{ not a template }} {% if %} {# c #} <|im_end|> \\n \" '"},
        {"role": "assistant", "content": "None True [1, 2] {'a': 1}"},
        {"role": "user", "content": "</s>[INST] <start_of_turn> <think>x</think>"},
    ],
}

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "City name, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "default": 1},
            },
            "required": ["location"],
        },
    },
}
TOOL_ARGS = {"location": "Paris", "unit": "celsius", "days": 2, "detail": 0.5, "raw": None,
             "flag": True}

QWEN3_EXTRA = {
    "think_history": [
        USER,
        {"role": "assistant", "content": "<think>\nThe user asks about France.\n</think>\n\nParis."},
        USER2,
    ],
    "think_assistant_last": [
        USER,
        {"role": "assistant", "content": "<think>\nEasy one.\n</think>\n\nParis."},
    ],
    "reasoning_content": [
        SYSTEM,
        USER,
        {"role": "assistant", "content": "Paris.", "reasoning_content": "\nRecall geography.\n"},
        USER2,
        {"role": "assistant", "content": "Berlin.", "reasoning_content": "Also easy."},
    ],
}

TOOL_CONVERSATIONS = {
    "qwen": [
        SYSTEM,
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "",
         "tool_calls": [{"type": "function",
                         "function": {"name": "get_weather", "arguments": TOOL_ARGS}}]},
        {"role": "tool", "content": "{\"temperature\": 21.5}"},
        {"role": "tool", "content": "sunny"},
    ],
    "llama": [
        SYSTEM,
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant",
         "tool_calls": [{"type": "function",
                         "function": {"name": "get_weather", "arguments": TOOL_ARGS}}]},
        {"role": "tool", "content": "{\"temperature\": 21.5}"},
    ],
    "mistral": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant",
         "tool_calls": [{"id": "call12345", "type": "function",
                         "function": {"name": "get_weather", "arguments": TOOL_ARGS}}]},
        {"role": "tool", "tool_call_id": "call12345", "content": {"temperature": 21.5}},
        {"role": "assistant", "content": "It is 21.5 degrees."},
        {"role": "user", "content": "Thanks!"},
    ],
}

ALTERNATION_ERROR = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]

# template file -> special tokens and extra cases: name -> (messages, extra variables).
TEMPLATE_CONFIG = {
    "gemma3.jinja": {
        "bos": "<bos>", "eos": "<eos>",
        "extra": {"error_alternation": (ALTERNATION_ERROR, {})},
    },
    "llama3.jinja": {"bos": "<|begin_of_text|>", "eos": "<|eot_id|>", "extra": {}},
    "llama3_1.jinja": {
        "bos": "<|begin_of_text|>", "eos": "<|eot_id|>",
        "extra": {
            "date_string": (COMMON["system_user"], {"date_string": "01 Jan 2025"}),
            "tools_in_user": (TOOL_CONVERSATIONS["llama"], {"tools": [WEATHER_TOOL]}),
            "tools_in_system": (TOOL_CONVERSATIONS["llama"],
                                {"tools": [WEATHER_TOOL], "tools_in_user_message": False}),
            "builtin_tools": (COMMON["system_user"],
                              {"builtin_tools": ["brave_search", "wolfram_alpha",
                                                 "code_interpreter"]}),
        },
    },
    "llama3_2.jinja": {
        "bos": "<|begin_of_text|>", "eos": "<|eot_id|>",
        "vars": {"date_string": "26 Jul 2024"},  # strftime_now would make the golden date-bound
        "extra": {
            "tools_in_user": (TOOL_CONVERSATIONS["llama"],
                              {"tools": [WEATHER_TOOL], "date_string": "02 Feb 2025"}),
        },
    },
    "qwen2_5.jinja": {
        "bos": "", "eos": "<|im_end|>",
        "extra": {"tools": (TOOL_CONVERSATIONS["qwen"], {"tools": [WEATHER_TOOL]})},
    },
    "qwen3.jinja": {
        "bos": "", "eos": "<|im_end|>",
        "extra": dict(
            {name: (messages, {}) for name, messages in QWEN3_EXTRA.items()},
            no_thinking=(COMMON["system_user"], {"enable_thinking": False}),
            thinking_true=(COMMON["multi_turn"], {"enable_thinking": True}),
            tools=(TOOL_CONVERSATIONS["qwen"], {"tools": [WEATHER_TOOL]}),
        ),
    },
    "mistral_v0_3.jinja": {
        "bos": "<s>", "eos": "</s>",
        "extra": {
            "tools": (TOOL_CONVERSATIONS["mistral"], {"tools": [WEATHER_TOOL]}),
            "error_alternation": (ALTERNATION_ERROR, {}),
        },
    },
    "chatml.jinja": {"bos": "", "eos": "<|im_end|>", "extra": {}},
}


def render(env, source, messages, add_generation_prompt, bos, eos, extra):
    template = env.from_string(source)
    variables = {"messages": messages, "tools": None, "documents": None,
                 "add_generation_prompt": add_generation_prompt, "bos_token": bos,
                 "eos_token": eos}
    variables.update(extra)  # like apply_chat_template's **kwargs
    try:
        return {"expected": template.render(**variables)}
    except Exception as e:  # the C++ engine must fail on these too
        return {"error": str(e)}


def main():
    env = make_environment()
    cases = []
    for template_name, config in TEMPLATE_CONFIG.items():
        source = (TEMPLATES / template_name).read_text(encoding="utf-8")
        conversations = {name: (messages, {}) for name, messages in COMMON.items()}
        conversations.update(config["extra"])
        for conversation_name, (messages, extra) in conversations.items():
            variables = dict(config.get("vars", {}), **extra)
            for add_generation_prompt in (False, True):
                case = {
                    "name": f"{template_name[:-6]}/{conversation_name}/"
                            f"{'gen' if add_generation_prompt else 'nogen'}",
                    "template": template_name,
                    "messages": messages,
                    "add_generation_prompt": add_generation_prompt,
                    "bos_token": config["bos"],
                    "eos_token": config["eos"],
                    "extra": variables,
                }
                case.update(render(env, source, messages, add_generation_prompt, config["bos"],
                                   config["eos"], variables))
                cases.append(case)
    golden = {
        "generator": "tests/chat/make_golden.py",
        "jinja2_version": jinja2.__version__,
        "cases": cases,
    }
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(golden, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    errors = sum("error" in case for case in cases)
    print(f"wrote {len(cases)} cases ({errors} expected errors) to {OUTPUT}")


if __name__ == "__main__":
    main()
