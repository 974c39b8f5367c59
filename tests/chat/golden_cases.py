"""The conversations (per template) that make_golden.py renders with jinja2."""

import random

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

RICH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "  Search the web.  ",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": " words "},
                "tags": {"type": "array", "items": {"type": "string"}, "description": "tags"},
                "limit": {"type": ["integer", "number"], "description": "max results"},
                "filters": {"type": "object", "additionalProperties": {"type": "number"},
                            "description": "numeric filters"},
                "options": {"type": "object", "description": "free-form"},
                "anything": {"description": "no type"},
            },
            "required": ["query"],
        },
        "return": {"type": "string", "description": "the results"},
    },
}
NO_PARAMS_TOOL = {"type": "function", "function": {
    "name": "now", "description": "Current time.", "parameters": {"type": "object", "properties": {}}}}

DEEPSEEK_TOOLS = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Weather in Paris and Rome?"},
    {"role": "assistant", "content": None,
     "tool_calls": [
         {"type": "function", "function": {"name": "get_weather", "arguments": "{\"location\": \"Paris\"}"}},
         {"type": "function", "function": {"name": "get_weather", "arguments": "{\"location\": \"Rome\"}"}},
     ]},
    {"role": "tool", "content": "21C"},
    {"role": "tool", "content": "25C"},
    {"role": "assistant", "content": "<think>\nboth warm\n</think>\n\nParis 21C, Rome 25C."},
    {"role": "user", "content": "Thanks"},
]

# Random conversations (fixed seed): content assembled from pieces that stress trimming,
# Unicode, quoting and template-looking text.
PIECES = ["hello", "world", "Paris", "42", "3.14", " ", "  ", "\n", "\n\n", "\t", "\r\n",
          "\u00a0", "\u3000", "\u2003", "\u200b", "é", "ß", "Σ", "日本語", "😀", "👩\u200d💻",
          "'", '"', "\\", "{{ x }}", "{% if %}", "{#", "<|im_end|>", "<think>", "</think>",
          "[INST]", "<start_of_turn>", "None", "True", "-", "#", "*", "```"]


def random_conversations(seed, count):
    rng = random.Random(seed)
    conversations = {}
    for n in range(count):
        messages = []
        if rng.random() < 0.5:
            messages.append({"role": "system",
                             "content": "".join(rng.choices(PIECES, k=rng.randint(0, 8)))})
        for turn in range(rng.randint(1, 4)):
            role = "user" if turn % 2 == 0 else "assistant"
            content = "".join(rng.choices(PIECES, k=rng.randint(0, 12)))
            messages.append({"role": role, "content": content})
        conversations[f"random_{n}"] = messages
    return conversations


RANDOM = random_conversations(seed=20250101, count=6)

ALTERNATION_ERROR = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]

# Templates that print today's date render with strftime_now() at this time (2026-01-15 UTC).
FIXED_NOW = 1768435200

WEATHER_CALL_JSON = '{"name": "get_weather", "arguments": {"location": "Paris"}}'

# Tool histories in the shapes radixlm's tool_prompt.cc hands each family's template.
FAMILY_TOOL_CONVERSATIONS = {
    # Granite 3.x and SmolLM3 print an assistant turn's content only: the call is its text.
    "granite": [
        SYSTEM,
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "<|tool_call|>[" + WEATHER_CALL_JSON + "]"},
        {"role": "tool", "content": "{\"temperature\": 21.5}"},
    ],
    "smollm3": [
        SYSTEM,
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "<tool_call>\n" + WEATHER_CALL_JSON + "\n</tool_call>"},
        {"role": "tool", "content": "{\"temperature\": 21.5}"},
    ],
    # GLM-4: a call is an assistant turn with metadata (the name), a result an observation.
    "glm4": [
        SYSTEM,
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "metadata": "get_weather", "content": "{\"location\": \"Paris\"}"},
        {"role": "observation", "content": "{\"temperature\": 21.5}"},
        {"role": "assistant", "content": "It is 21.5 degrees."},
        USER2,
    ],
    # Phi-4-mini: the tools, as a JSON string, ride on the system message.
    "phi4_mini": [
        {"role": "system", "content": "You are a helpful assistant with some tools.",
         "tools": "[{\"name\": \"get_weather\", \"description\": \"Get the current weather.\", "
                  "\"parameters\": {\"location\": {\"type\": \"str\"}}}]"},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "functools[" + WEATHER_CALL_JSON + "]"},
        {"role": "user", "content": "Thanks!"},
    ],
}

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
    # Beyond the required set: more real templates exercising macros, recursion and RAG.
    "hermes3_tool_use.jinja": {
        "bos": "<|begin_of_text|>", "eos": "<|im_end|>",
        "vars": {"tools": [WEATHER_TOOL, RICH_TOOL, NO_PARAMS_TOOL]},
        "extra": {"tool_calls": (TOOL_CONVERSATIONS["qwen"], {})},
    },
    "deepseek_r1_distill_qwen.jinja": {
        "bos": "<\uff5cbegin\u2581of\u2581sentence\uff5c>",
        "eos": "<\uff5cend\u2581of\u2581sentence\uff5c>",
        "extra": dict({name: (messages, {}) for name, messages in QWEN3_EXTRA.items()},
                      tool_calls=(DEEPSEEK_TOOLS, {})),
    },
    "phi3_5.jinja": {"bos": "<s>", "eos": "<|endoftext|>", "extra": {}},
    "granite3_3.jinja": {
        "bos": "", "eos": "<|end_of_text|>",
        # Without a system message this template prints strftime_now().
        "fixed_now": FIXED_NOW,
        "only": ["system_user", "system_multi_turn", "system_assistant_last", "unicode",
                 "multiline"],
        "extra": {
            "documents": (COMMON["system_user"],
                          {"documents": [{"doc_id": 1, "text": "Paris is in France."},
                                         {"doc_id": "b", "text": "Berlin."}],
                           "controls": {"citations": True, "length": "short"}}),
            "tools": (COMMON["system_user"], {"tools": [WEATHER_TOOL]}),
            "dated_user_only": (COMMON["user_only"], {}),
            "dated_tools": (COMMON["multi_turn"], {"tools": [WEATHER_TOOL, RICH_TOOL]}),
            "thinking": (COMMON["multi_turn"], {"thinking": True}),
            "tool_history": (FAMILY_TOOL_CONVERSATIONS["granite"], {"tools": [WEATHER_TOOL]}),
        },
    },
    # The families of the third wave (tests/chat/templates/README.md).
    "gemma2.jinja": {
        "bos": "<bos>", "eos": "<eos>",
        "extra": {"error_alternation": (ALTERNATION_ERROR, {})},
    },
    "olmo2.jinja": {"bos": "<|endoftext|>", "eos": "<|endoftext|>", "extra": {}},
    "phi4_mini.jinja": {
        "bos": "<|endoftext|>", "eos": "<|endoftext|>",
        "extra": {"tools_in_system": (FAMILY_TOOL_CONVERSATIONS["phi4_mini"], {})},
    },
    "smollm3.jinja": {
        "bos": "", "eos": "<|im_end|>",
        "fixed_now": FIXED_NOW,
        "extra": {
            "no_think": (COMMON["system_user"], {"enable_thinking": False}),
            "system_no_think": ([{"role": "system", "content": "Be brief. /no_think"}, USER], {}),
            "system_think": ([{"role": "system", "content": "/think"}, USER, ASSISTANT, USER2],
                             {"enable_thinking": False}),
            "system_override": ([{"role": "system", "content": "Only this./system_override "},
                                 USER, ASSISTANT, USER2], {}),
            "tools": (FAMILY_TOOL_CONVERSATIONS["smollm3"], {"tools": [WEATHER_TOOL, RICH_TOOL]}),
            "python_tools": (COMMON["user_only"], {"python_tools": "def now() -> str: ..."}),
            "think_history": (QWEN3_EXTRA["think_history"], {}),
        },
    },
    "glm_z1_0414.jinja": {
        "bos": "", "eos": "<|user|>",
        "extra": {
            "tools": (FAMILY_TOOL_CONVERSATIONS["glm4"],
                      {"tools": [WEATHER_TOOL, RICH_TOOL, NO_PARAMS_TOOL["function"]]}),
            "think_history": (QWEN3_EXTRA["think_history"], {}),
        },
    },
    "mistral_small3_1.jinja": {
        "bos": "<s>", "eos": "</s>",
        # Without a system message the default one prints strftime_now().
        "fixed_now": FIXED_NOW,
        "extra": {
            "tools": (TOOL_CONVERSATIONS["mistral"], {"tools": [WEATHER_TOOL, RICH_TOOL]}),
            "error_alternation": (ALTERNATION_ERROR, {}),
            "content_blocks": ([{"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
                                {"role": "user", "content": [{"type": "text", "text": "What is "},
                                                             {"type": "image"},
                                                             {"type": "text", "text": "?"}]}],
                               {}),
        },
    },
    # gpt-oss (harmony): prints today's date; tools as a TypeScript-like namespace; the thinking
    # of the last assistant turn as its analysis channel.
    # DeepSeek-V3.1 (deepseek2): thinking off by default (<think></think> after <｜Assistant｜>),
    # `thinking` / `enable_thinking` on, a history's reasoning dropped, DeepSeek's tool-call tokens.
    "deepseek_v3_1.jinja": {
        "bos": "<\uff5cbegin\u2581of\u2581sentence\uff5c>",
        "eos": "<\uff5cend\u2581of\u2581sentence\uff5c>",
        "extra": {
            "thinking": (COMMON["system_user"], {"thinking": True}),
            "enable_thinking": (COMMON["multi_turn"], {"enable_thinking": True}),
            "think_history": (QWEN3_EXTRA["think_history"], {}),
            "tool_calls": (DEEPSEEK_TOOLS, {}),
        },
    },
    "gpt_oss.jinja": {
        "bos": "<|startoftext|>", "eos": "<|return|>",
        "fixed_now": FIXED_NOW,
        "extra": {
            "tools": (TOOL_CONVERSATIONS["qwen"], {"tools": [WEATHER_TOOL, RICH_TOOL]}),
            "reasoning_low": (COMMON["system_user"], {"reasoning_effort": "low"}),
            "thinking_history": ([USER, {"role": "assistant", "content": "Hi.",
                                         "thinking": "Greet back."}, USER2], {}),
        },
    },
}
