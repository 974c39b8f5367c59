// JsonSchemaToRegex: a JSON schema (as JSON text) → a regex matching the JSON documents the
// schema allows, as outlines and SGLang's regex-based backends do. The regex then compiles to
// a DFA like any other.
//
// Supported keywords: type (a name or a list of names, "null" included), properties (emitted
// in the order given), required (optional properties may be omitted, order kept),
// additionalProperties (false, or absent — treated as false, as outlines does, so the output
// holds only the listed properties; a schema value is allowed only on an object without
// `properties`, meaning a map with string keys), enum, const, anyOf, oneOf (as anyOf: a regex
// cannot express "exactly one"), allOf (of object schemas: properties and required are
// merged), $ref into #/$defs/... or #/definitions/... (a recursive $ref is InvalidArgument),
// items, prefixItems, minItems, maxItems, minLength, maxLength, pattern (matched against the
// whole string content, ^ and $ optional), format (date, time, date-time, email, uuid, ipv4),
// minimum / maximum / exclusiveMinimum / exclusiveMaximum on integers (exact digit-range
// regexes) and, for numbers, only a lower bound >= 0 (no minus sign); other number bounds are
// not enforced. Annotations (title, description, default, examples, $schema, $id, $comment,
// deprecated, readOnly, writeOnly) are ignored. Any other keyword is InvalidArgument naming it.
//
// An empty schema {} (or an object / array without properties / items) allows any JSON value,
// nested up to JsonSchemaOptions::max_any_depth levels (a regex cannot count brackets).
//
// A schema document nested deeper than kMaxSchemaDepth (arrays and objects), or with schemas
// inside schemas deeper than that (through properties, items, anyOf, $ref chains, ...), is
// InvalidArgument: the conversion recurses once per level. A regex longer than
// kMaxSchemaRegexBytes is ResourceExhausted: nesting can double it per level (an array repeats
// its item's regex; two $refs to one definition copy it twice), and the NFA would be over its
// cap long before that size anyway.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace radixlm::grammar {

inline constexpr int kMaxSchemaDepth = 64;
inline constexpr size_t kMaxSchemaRegexBytes = 1u << 20;

struct JsonSchemaOptions {
  // Regex for the whitespace allowed between JSON tokens (around ',' and ':' and inside
  // brackets), e.g. "[ ]?" (outlines' default: at most one space), "[ \n\t]*" (pretty-printed
  // output) or "" (compact JSON). Unset (the default): Python json.dumps's separators, exactly
  // ", " between items and ": " after keys, nothing inside brackets. Fixed separators keep
  // models from looping on whitespace and leave no choice between a value and the next key,
  // so a whole `, "key": ` run is forced text for jump-forward.
  std::optional<std::string> whitespace_pattern;
  // Nesting depth of arrays/objects inside a schema-less ("any JSON") value.
  int max_any_depth = 2;
};

StatusOr<std::string> JsonSchemaToRegex(std::string_view schema_json,
                                        const JsonSchemaOptions& options = {});

}  // namespace radixlm::grammar
