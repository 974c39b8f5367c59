"""Grammars and prompts shared by eval_constrained.py and bench_jump_forward.py.

SCHEMAS: 40 JSON schemas (records, enums, arrays, nesting, optional keys, formats, integer
ranges, string patterns and lengths). REGEXES: 20 regexes (dates, codes, phone numbers,
sentences with fixed words). Each comes with a prompt for a small instruction-following model.
"""

import json


def _obj(props, required=None):
    return {"type": "object", "properties": props,
            "required": list(props) if required is None else required}


S, I, N, B = {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}

SCHEMAS = [
    ("a person", _obj({"name": S, "age": I, "city": S})),
    ("a book", _obj({"title": S, "author": S, "year": I, "genre": S})),
    ("a product", _obj({"product_name": S, "price": N, "in_stock": B})),
    ("a movie", _obj({"title": S, "director": S, "release_year": I, "rating": N})),
    ("a city", _obj({"city_name": S, "country": S, "population": I})),
    ("a user account", _obj({"username": S, "email": {"type": "string", "format": "email"},
                             "is_admin": B})),
    ("an event", _obj({"event_name": S, "date": {"type": "string", "format": "date"},
                       "location": S})),
    ("a car", _obj({"make": S, "model": S, "year": {"type": "integer", "minimum": 1950,
                                                     "maximum": 2030}})),
    ("a weather report", _obj({"city": S, "temperature_celsius": N,
                               "condition": {"enum": ["sunny", "cloudy", "rainy", "snowy"]}})),
    ("a recipe", _obj({"dish": S, "servings": {"type": "integer", "minimum": 1, "maximum": 12},
                       "vegetarian": B})),
    ("a shopping list", _obj({"store": S, "items": {"type": "array", "items": S,
                                                    "minItems": 1, "maxItems": 5}})),
    ("a student", _obj({"student_id": {"type": "string", "pattern": "^S[0-9]{5}$"},
                        "name": S, "grade": {"type": "integer", "minimum": 1, "maximum": 12}})),
    ("a color", _obj({"color_name": S, "hex": {"type": "string",
                                               "pattern": "^#[0-9a-f]{6}$"}})),
    ("an employee", _obj({"first_name": S, "last_name": S, "department":
                          {"enum": ["sales", "engineering", "marketing", "support"]},
                          "salary": I})),
    ("a planet", _obj({"planet": S, "moons": {"type": "integer", "minimum": 0,
                                              "maximum": 200}, "has_rings": B})),
    ("a song", _obj({"title": S, "artist": S, "duration_seconds": I})),
    ("a country", _obj({"country": S, "capital": S, "continent":
                        {"enum": ["Africa", "Asia", "Europe", "North America",
                                  "South America", "Oceania", "Antarctica"]}})),
    ("a restaurant review", _obj({"restaurant": S, "stars": {"type": "integer", "minimum": 1,
                                                            "maximum": 5}, "comment": S})),
    ("a flight", _obj({"flight_number": {"type": "string", "pattern": "^[A-Z]{2}[0-9]{3,4}$"},
                       "origin": S, "destination": S})),
    ("an address", _obj({"street": S, "city": S, "zip_code":
                         {"type": "string", "pattern": "^[0-9]{5}$"}})),
    ("a point", _obj({"x": N, "y": N})),
    ("a task", _obj({"task": S, "priority": {"enum": ["low", "medium", "high"]},
                     "done": B})),
    ("an animal", _obj({"species": S, "legs": {"type": "integer", "minimum": 0,
                                                "maximum": 8}, "can_fly": B})),
    ("a company", _obj({"company_name": S, "founded": {"type": "integer", "minimum": 1800,
                                                        "maximum": 2025},
                        "employees": I, "public": B})),
    ("a team", _obj({"team_name": S, "members": {"type": "array", "items": S,
                                                 "minItems": 2, "maxItems": 4}})),
    ("a contact", _obj({"name": S, "phone": {"type": "string",
                                             "pattern": "^[0-9]{3}-[0-9]{3}-[0-9]{4}$"},
                        "email": S}, required=["name", "phone"])),
    ("a laptop", _obj({"brand": S, "ram_gb": {"enum": [4, 8, 16, 32, 64]},
                       "ssd": B, "price_usd": N})),
    ("a sports match", _obj({"home_team": S, "away_team": S,
                             "score": _obj({"home": I, "away": I})})),
    ("an order", _obj({"order_id": I, "customer": _obj({"name": S, "email": S}),
                       "total": N})),
    ("a quiz question", _obj({"question": S, "choices": {"type": "array", "items": S,
                                                         "minItems": 4, "maxItems": 4},
                              "answer_index": {"type": "integer", "minimum": 0,
                                               "maximum": 3}})),
    ("a short tweet", _obj({"text": {"type": "string", "maxLength": 60},
                            "likes": {"type": "integer", "minimum": 0}})),
    ("a language", _obj({"language": S, "family": S, "speakers_millions": N})),
    ("a website", _obj({"domain": {"type": "string", "pattern": "^[a-z]+\\.(com|org|net)$"},
                        "https": B})),
    ("a mountain", _obj({"name": S, "height_m": I, "country": S})),
    ("an invoice line", _obj({"description": S, "quantity": {"type": "integer",
                                                             "minimum": 1},
                              "unit_price": N})),
    ("a boolean answer", _obj({"answer": B, "confidence": {"enum": ["low", "high"]}})),
    ("a tag list", _obj({"tags": {"type": "array", "items":
                                  {"enum": ["news", "sports", "tech", "health"]},
                                  "minItems": 1, "maxItems": 3}})),
    ("a meeting", _obj({"title": S, "start_time": {"type": "string", "format": "time"},
                        "attendees": I, "remote": B})),
    ("a medication", _obj({"drug": S, "dose_mg": I, "times_per_day":
                           {"type": "integer", "minimum": 1, "maximum": 4}},
                          required=["drug", "dose_mg"])),
    ("a sensor reading", _obj({"sensor_id": {"type": "string", "pattern": "^sensor-[0-9]{2}$"},
                               "value": N, "unit": {"const": "celsius"}, "ok": B})),
]

REGEXES = [
    ("a date in the form YYYY-MM-DD", r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"),
    ("a US phone number", r"\([0-9]{3}\) [0-9]{3}-[0-9]{4}"),
    ("an email address", r"[a-z]{3,10}\.[a-z]{3,10}@example\.com"),
    ("an IPv4 address", r"((25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])"),
    ("yes or no", r"(yes|no)"),
    ("the answer to a multiple-choice question", r"The answer is (A|B|C|D)\."),
    ("a hex color", r"#[0-9a-fA-F]{6}"),
    ("a time of day", r"([01][0-9]|2[0-3]):[0-5][0-9]"),
    ("a price", r"\$[1-9][0-9]{0,3}\.[0-9]{2}"),
    ("a ticket id", r"TICKET-[0-9]{4}-[A-Z]{2}"),
    ("a sentence about the weather", r"Today it is (sunny|cloudy|rainy) and [0-9]{1,2} degrees\."),
    ("a first and last name", r"[A-Z][a-z]{1,10} [A-Z][a-z]{1,12}"),
    ("a US zip code", r"[0-9]{5}(-[0-9]{4})?"),
    ("a percentage", r"(100|[1-9]?[0-9])%"),
    ("a version number", r"v[0-9]+\.[0-9]+\.[0-9]+"),
    ("a rating out of five", r"Rating: [1-5]/5 - (poor|fair|good|great|excellent)"),
    ("a key=value pair", r"[a-z_]{2,12}=[0-9]{1,6}"),
    ("a short list of three fruits", r"(apple|banana|cherry|grape|mango)(, (apple|banana|cherry|grape|mango)){2}"),
    ("a UUID", r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"),
    ("a log line", r"\[(INFO|WARN|ERROR)\] [a-z]+ (started|stopped|failed) in [0-9]{1,4} ms"),
]


def schema_prompt(what, schema):
    return (f"Write {what} as a JSON object with the keys "
            f"{', '.join(schema.get('properties', {}))}.\nJSON: ")


def regex_prompt(what):
    return f"Write {what}.\nAnswer: "


def cases():
    """[(kind, name, grammar text, prompt)]: 40 json_schema cases, then 20 regex cases."""
    out = []
    for what, schema in SCHEMAS:
        out.append(("json_schema", what, json.dumps(schema), schema_prompt(what, schema)))
    for what, regex in REGEXES:
        out.append(("regex", what, regex, regex_prompt(what)))
    return out
