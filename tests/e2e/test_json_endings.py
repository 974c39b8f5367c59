"""JSON numbers end: over 40 schemas at temperature 0 and 0.8, at most 10 % of JSON-schema
generations end by max_tokens inside a value (numbers are bounded in length)."""

import pytest

from json_schema_endings import cut_share


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_json_schema_generations_end(server, temperature):
    assert cut_share(server.url, temperature) <= 0.10
