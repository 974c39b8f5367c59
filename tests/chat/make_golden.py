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

The cases live in golden_cases.py (conversations per template) and golden_features.py (one small
template per engine feature). The C++ test (golden_test.cc) renders the same cases with radixlm's engine and compares byte for
byte. Rerun after changing a template or a case:

    /usr/bin/python3 tests/chat/make_golden.py      # needs python3-jinja2 (>= 3.1)
"""

import json
import pathlib
import sys
from datetime import datetime, timezone

import jinja2
from jinja2.exceptions import TemplateError
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from golden_cases import COMMON, RANDOM, TEMPLATE_CONFIG  # noqa: E402
from golden_features import FEATURES  # noqa: E402

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


# Templates that print the date (config "fixed_now") render with strftime_now() formatting this
# Unix time in UTC; the C++ test sets RenderLimits::fixed_now_unix_s to the same value.
FIXED_NOW = {"now": None}


def make_environment():
    def raise_exception(message):
        raise TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(format):
        if FIXED_NOW["now"] is not None:
            return datetime.fromtimestamp(FIXED_NOW["now"], timezone.utc).strftime(format)
        return datetime.now().strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env



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
        FIXED_NOW["now"] = config.get("fixed_now")
        conversations = {name: (messages, {}) for name, messages in COMMON.items()
                         if name in config.get("only", COMMON)}
        if "only" not in config:
            conversations.update({name: (messages, {}) for name, messages in RANDOM.items()})
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
                if FIXED_NOW["now"] is not None:
                    case["fixed_now_unix_s"] = FIXED_NOW["now"]
                case.update(render(env, source, messages, add_generation_prompt, config["bos"],
                                   config["eos"], variables))
                cases.append(case)
    FIXED_NOW["now"] = None
    features = []
    for name, source, variables in FEATURES:
        feature = {"name": name, "source": source, "variables": variables}
        try:
            feature["expected"] = env.from_string(source).render(**variables)
        except Exception as e:
            feature["error"] = str(e)
        features.append(feature)
    golden = {
        "generator": "tests/chat/make_golden.py",
        "jinja2_version": jinja2.__version__,
        "cases": cases,
        "features": features,
    }
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(golden, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    errors = sum("error" in case for case in cases)
    print(f"wrote {len(cases)} template cases ({errors} expected errors) and "
          f"{len(features)} feature cases to {OUTPUT}")


if __name__ == "__main__":
    main()
