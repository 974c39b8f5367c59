"""How often JSON-schema decoding ends by max_tokens inside a value, over 40 schemas at
temperature 0 and 0.8 (issue 18). Used by test_json_endings.py; run directly against a server
to compare builds:  python tests/e2e/json_schema_endings.py http://127.0.0.1:30000"""

import json
import sys

import requests

MAX_TOKENS = 96


def schemas():
    scalars = [
        {"type": "integer"}, {"type": "number"}, {"type": "boolean"},
        {"type": "string", "maxLength": 20}, {"type": "integer", "minimum": 0},
        {"type": "number", "minimum": 0}, {"type": "string", "enum": ["red", "green", "blue"]},
        {"type": "integer", "maximum": 100}, {"type": "string", "format": "date"},
        {"type": "null"},
    ]
    out = []
    for i, s in enumerate(scalars):
        out.append({"type": "object", "properties": {"value": s}, "required": ["value"]})
        out.append({"type": "object", "properties": {"id": {"type": "integer"}, "x": s},
                    "required": ["id", "x"]})
        out.append({"type": "array", "items": s, "minItems": 1, "maxItems": 3})
        out.append({"type": "object",
                    "properties": {"name": {"type": "string", "maxLength": 16},
                                   "pos": {"type": "object",
                                           "properties": {"lat": {"type": "number"},
                                                          "lon": {"type": "number"}},
                                           "required": ["lat", "lon"]},
                                   "v": s},
                    "required": ["name", "pos", "v"]})
    return out  # 40


PROMPTS = ["Here is the record as JSON: ", "The measurement, in JSON: ", "JSON output:\n"]


def cut_share(url, temperature):
    """The share of generations that ended by max_tokens."""
    cut = total = 0
    for i, schema in enumerate(schemas()):
        body = {"text": PROMPTS[i % len(PROMPTS)],
                "sampling_params": {"max_new_tokens": MAX_TOKENS, "temperature": temperature,
                                    "json_schema": json.dumps(schema), "sampling_seed": i}}
        r = requests.post(url + "/generate", json=body, timeout=300)
        r.raise_for_status()
        out = r.json()
        total += 1
        if out["meta_info"]["finish_reason"]["type"] == "length":
            cut += 1
    return cut / total


if __name__ == "__main__":
    for t in (0.0, 0.8):
        print(f"temperature {t}: {cut_share(sys.argv[1], t):.1%} ended by max_tokens")
