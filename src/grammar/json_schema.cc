#include "grammar/json_schema.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "grammar/json_patterns.h"

// This file builds regexes by concatenating "literal" + std::string, which GCC 12 at -O3
// misreports as overlapping memcpy (GCC bug 105329); the code is correct.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace radixlm::grammar {
namespace {

// ordered_json: "properties" must be emitted in the order the schema lists them.
using Json = nlohmann::ordered_json;
namespace jp = json_patterns;

struct SchemaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The regex outgrew kMaxSchemaRegexBytes (ResourceExhausted, not a schema mistake).
struct RegexTooLarge : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const std::set<std::string>& SupportedKeywords() {
  static const std::set<std::string> kKeywords = {
      "type", "properties", "required", "additionalProperties", "enum", "const", "anyOf", "oneOf",
      "allOf", "$ref", "$defs", "definitions", "items", "prefixItems", "minItems", "maxItems",
      "minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
      "exclusiveMaximum",
      // Annotations: no effect on what is valid.
      "title", "description", "default", "examples", "$schema", "$id", "$comment", "deprecated",
      "readOnly", "writeOnly"};
  return kKeywords;
}

// True when `value` nests arrays / objects more than `limit` deep. Iterative: the point is to
// reject documents whose depth would overflow the stack of a recursive walk.
bool NestsDeeperThan(const Json& value, int limit) {
  std::vector<std::pair<const Json*, int>> stack = {{&value, 0}};
  while (!stack.empty()) {
    const auto [node, depth] = stack.back();
    stack.pop_back();
    if (!node->is_structured()) continue;
    if (depth + 1 > limit) return true;
    for (const Json& child : *node) stack.push_back({&child, depth + 1});
  }
  return false;
}

std::string Group(const std::string& regex) { return "(?:" + regex + ")"; }

std::string Alternation(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "|" : "") + parts[i];
  return Group(out);
}

// "{m,n}"-style quantifier for counts in [min, max] (max nullopt: unbounded).
std::string Quantifier(int64_t min, std::optional<int64_t> max) {
  if (max) return "{" + std::to_string(min) + "," + std::to_string(*max) + "}";
  if (min == 0) return "*";
  return "{" + std::to_string(min) + ",}";
}

std::optional<int64_t> OptionalInt(const Json& schema, const char* key) {
  if (!schema.contains(key)) return std::nullopt;
  const Json& v = schema[key];
  if (!v.is_number_integer() || v.get<int64_t>() < 0) {
    throw SchemaError(std::string("'") + key + "' must be a non-negative integer");
  }
  return v.get<int64_t>();
}

class Converter {
 public:
  Converter(const Json& root, const JsonSchemaOptions& options)
      : root_(root),
        ws_(options.whitespace_pattern ? Group(*options.whitespace_pattern) : ""),
        item_sep_(options.whitespace_pattern ? ws_ + "," + ws_ : ", "),
        key_sep_(options.whitespace_pattern ? ws_ + ":" + ws_ : ": "),
        any_depth_(options.max_any_depth) {}

  std::string Visit(const Json& schema) {
    // Bounds the recursion where the document's own depth does not: $ref chains.
    if (visit_depth_ >= kMaxSchemaDepth) {
      throw SchemaError("schemas nested deeper than " + std::to_string(kMaxSchemaDepth) +
                        " levels (through properties, items, anyOf, $ref, ...)");
    }
    ++visit_depth_;
    std::string regex = VisitSchema(schema);
    --visit_depth_;
    // Checked per schema, and summed over all of them: a level whose parts are each under the
    // cap (a thousand properties with one large $ref) must not build a huge string either.
    regex_bytes_ += regex.size();
    if (regex.size() > kMaxSchemaRegexBytes || regex_bytes_ > 16 * kMaxSchemaRegexBytes) {
      throw RegexTooLarge("the regex exceeds " + std::to_string(kMaxSchemaRegexBytes) +
                          " bytes (nested arrays or repeated $refs multiply it)");
    }
    return regex;
  }

 private:
  std::string VisitSchema(const Json& schema) {
    if (schema.is_boolean()) {
      if (schema.get<bool>()) return Any(any_depth_);
      throw SchemaError("the schema 'false' matches nothing");
    }
    if (!schema.is_object()) throw SchemaError("a schema must be an object or a boolean");
    for (const auto& [key, value] : schema.items()) {
      if (!SupportedKeywords().count(key)) {
        throw SchemaError("unsupported JSON schema keyword '" + key + "'");
      }
    }
    if (schema.contains("$ref")) return VisitRef(schema["$ref"]);
    if (schema.contains("allOf")) return Visit(MergeAllOf(schema));
    if (schema.contains("const")) return Literal(schema["const"]);
    if (schema.contains("enum")) {
      if (!schema["enum"].is_array() || schema["enum"].empty()) {
        throw SchemaError("'enum' must be a non-empty array");
      }
      std::vector<std::string> parts;
      for (const Json& v : schema["enum"]) parts.push_back(Literal(v));
      return Alternation(parts);
    }
    for (const char* key : {"anyOf", "oneOf"}) {
      if (!schema.contains(key)) continue;
      if (!schema[key].is_array() || schema[key].empty()) {
        throw SchemaError(std::string("'") + key + "' must be a non-empty array");
      }
      std::vector<std::string> parts;
      for (const Json& sub : schema[key]) parts.push_back(Visit(sub));
      return Alternation(parts);
    }
    if (schema.contains("type")) {
      const Json& type = schema["type"];
      if (type.is_string()) return TypeRegex(type.get<std::string>(), schema);
      if (!type.is_array() || type.empty()) throw SchemaError("'type' must be a string or list");
      std::vector<std::string> parts;
      for (const Json& t : type) {
        if (!t.is_string()) throw SchemaError("'type' list entries must be strings");
        parts.push_back(TypeRegex(t.get<std::string>(), schema));
      }
      return Alternation(parts);
    }
    // No type: infer it from the keywords present, else any value.
    if (schema.contains("properties") || schema.contains("additionalProperties")) {
      return TypeRegex("object", schema);
    }
    if (schema.contains("items") || schema.contains("prefixItems"))
      return TypeRegex("array", schema);
    if (schema.contains("pattern") || schema.contains("format") || schema.contains("minLength") ||
        schema.contains("maxLength")) {
      return TypeRegex("string", schema);
    }
    return Any(any_depth_);
  }

  const Json& Resolve(const std::string& ref) {
    for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
      const std::string p(prefix);
      if (ref.rfind(p, 0) != 0) continue;
      const std::string section = p.substr(2, p.size() - 3);
      const std::string name = ref.substr(p.size());
      if (root_.contains(section) && root_[section].contains(name)) return root_[section][name];
      throw SchemaError("$ref '" + ref + "' does not resolve");
    }
    if (ref == "#") return root_;
    throw SchemaError("unsupported $ref '" + ref + "' (only #/$defs/... and #/definitions/...)");
  }

  std::string VisitRef(const Json& ref_value) {
    if (!ref_value.is_string()) throw SchemaError("'$ref' must be a string");
    const std::string ref = ref_value.get<std::string>();
    for (const std::string& active : ref_stack_) {
      if (active == ref) {
        throw SchemaError("recursive $ref '" + ref + "' is not supported (a regex cannot nest)");
      }
    }
    ref_stack_.push_back(ref);
    std::string out = Visit(Resolve(ref));
    ref_stack_.pop_back();
    return out;
  }

  // allOf of object schemas: one object schema with the properties and required lists merged
  // (first occurrence of a property wins its position); other keywords are copied if absent.
  Json MergeAllOf(const Json& schema) {
    if (!schema["allOf"].is_array()) throw SchemaError("'allOf' must be an array");
    Json merged = schema;
    merged.erase("allOf");
    std::vector<Json> parts;
    for (const Json& sub : schema["allOf"]) {
      const Json* s = &sub;
      std::set<std::string> seen_refs;
      while (s->is_object() && s->contains("$ref")) {
        const std::string ref = (*s)["$ref"].get<std::string>();
        if (!seen_refs.insert(ref).second) throw SchemaError("recursive $ref '" + ref + "'");
        s = &Resolve(ref);
      }
      if (!s->is_object()) throw SchemaError("allOf entries must be object schemas");
      if (s->contains("allOf")) {
        parts.push_back(MergeAllOf(*s));
      } else {
        parts.push_back(*s);
      }
    }
    for (const Json& part : parts) {
      for (const auto& [key, value] : part.items()) {
        if (key == "properties") {
          if (!merged.contains("properties")) merged["properties"] = Json::object();
          for (const auto& [name, prop] : value.items()) {
            if (!merged["properties"].contains(name)) merged["properties"][name] = prop;
          }
        } else if (key == "required") {
          if (!merged.contains("required")) merged["required"] = Json::array();
          for (const Json& r : value) {
            if (std::find(merged["required"].begin(), merged["required"].end(), r) ==
                merged["required"].end()) {
              merged["required"].push_back(r);
            }
          }
        } else if (key == "type" && merged.contains("type") && merged["type"] != value) {
          throw SchemaError("allOf with conflicting types is not supported");
        } else if (!merged.contains(key)) {
          merged[key] = value;
        }
      }
    }
    return merged;
  }

  std::string TypeRegex(const std::string& type, const Json& schema) {
    if (type == "string") return StringRegex(schema);
    if (type == "integer") return IntegerRegex(schema);
    if (type == "number") return NumberRegex(schema);
    if (type == "boolean") return jp::kBoolean;
    if (type == "null") return jp::kNull;
    if (type == "object") return ObjectRegex(schema);
    if (type == "array") return ArrayRegex(schema);
    throw SchemaError("unknown type '" + type + "'");
  }

  std::string StringRegex(const Json& schema) {
    if (schema.contains("pattern")) {
      if (!schema["pattern"].is_string()) throw SchemaError("'pattern' must be a string");
      std::string p = schema["pattern"].get<std::string>();
      // JSON-schema patterns are unanchored in principle; like outlines we match the whole
      // string content, so explicit anchors are redundant and removed.
      if (!p.empty() && p.front() == '^') p.erase(0, 1);
      if (!p.empty() && p.back() == '$' && (p.size() < 2 || p[p.size() - 2] != '\\')) p.pop_back();
      return "\"" + Group(p) + "\"";
    }
    if (schema.contains("format")) {
      const std::string format =
          schema["format"].is_string() ? schema["format"].get<std::string>() : "";
      std::optional<std::string> regex = jp::FormatRegex(format);
      if (!regex) throw SchemaError("unsupported string format '" + format + "'");
      return "\"" + Group(*regex) + "\"";
    }
    const int64_t min = OptionalInt(schema, "minLength").value_or(0);
    const std::optional<int64_t> max = OptionalInt(schema, "maxLength");
    if (max && *max < min) throw SchemaError("maxLength < minLength");
    return "\"" + std::string(jp::kStringChar) + Quantifier(min, max) + "\"";
  }

  // Integer bounds from minimum/maximum (inclusive) and their exclusive forms; a non-integer
  // bound is rounded inward.
  std::string IntegerRegex(const Json& schema) {
    std::optional<int64_t> lo, hi;
    auto number = [&](const char* key) -> std::optional<double> {
      if (!schema.contains(key)) return std::nullopt;
      if (!schema[key].is_number())
        throw SchemaError(std::string("'") + key + "' must be a number");
      return schema[key].get<double>();
    };
    constexpr double kLimit = 9.0e18;  // inside int64 with room for the +-1 below
    auto clamp = [&](double v) {
      return static_cast<int64_t>(std::max(-kLimit, std::min(kLimit, v)));
    };
    if (auto v = number("minimum")) lo = clamp(std::ceil(*v));
    if (auto v = number("exclusiveMinimum")) {
      const int64_t x = clamp(std::floor(*v)) + 1;
      lo = lo ? std::max(*lo, x) : x;
    }
    if (auto v = number("maximum")) hi = clamp(std::floor(*v));
    if (auto v = number("exclusiveMaximum")) {
      const int64_t x = clamp(std::ceil(*v)) - 1;
      hi = hi ? std::min(*hi, x) : x;
    }
    if (lo && hi && *lo > *hi) throw SchemaError("no integer satisfies minimum/maximum");
    return jp::IntegerRange(lo, hi);
  }

  std::string NumberRegex(const Json& schema) {
    // Only "x >= 0" style bounds are expressible simply (drop the minus sign); other bounds on
    // non-integers are not enforced (documented in json_schema.h).
    for (const char* key : {"minimum", "exclusiveMinimum"}) {
      if (schema.contains(key) && schema[key].is_number() && schema[key].get<double>() >= 0 &&
          !schema.contains("maximum") && !schema.contains("exclusiveMaximum")) {
        return std::string(jp::kNumber).substr(2);  // kNumber without its leading "-?"
      }
    }
    return jp::kNumber;
  }

  std::string ObjectRegex(const Json& schema) {
    const Json properties = schema.value("properties", Json::object());
    if (!properties.is_object()) throw SchemaError("'properties' must be an object");
    const Json additional = schema.value("additionalProperties", Json(false));
    if (properties.empty()) {
      // A map: any string keys, values of the additionalProperties schema (or any value).
      if (additional.is_boolean() && !schema.contains("additionalProperties")) {
        return GenericObject(Any(any_depth_ - 1));
      }
      if (additional.is_boolean() && !additional.get<bool>()) return "\\{" + ws_ + "\\}";
      return GenericObject(additional.is_boolean() ? Any(any_depth_ - 1) : Visit(additional));
    }
    if (!(additional.is_boolean() && !additional.get<bool>())) {
      throw SchemaError(
          "'additionalProperties' other than false is not supported together with "
          "'properties'");
    }
    std::set<std::string> required;
    if (schema.contains("required")) {
      for (const Json& r : schema["required"]) required.insert(r.get<std::string>());
    }
    struct Member {
      std::string regex;
      bool required;
    };
    std::vector<Member> members;
    for (const auto& [name, sub] : properties.items()) {
      members.push_back({jp::EscapeRegex(Json(name).dump()) + key_sep_ + Group(Visit(sub)),
                         required.count(name) > 0});
    }
    // rest[i]: members i.. each preceded by a comma; first[i]: members i.. where the first one
    // present has no comma. Required members are mandatory, optional ones may be skipped, and
    // the order is the schema's.
    const size_t n = members.size();
    std::vector<std::string> rest(n + 1), first(n + 1);
    for (size_t i = n; i-- > 0;) {
      const std::string with_comma = item_sep_ + members[i].regex;
      rest[i] =
          members[i].required ? with_comma + rest[i + 1] : Group(with_comma) + "?" + rest[i + 1];
      const std::string here = ws_ + members[i].regex + rest[i + 1];
      first[i] = members[i].required ? here : Group(here + "|" + first[i + 1]);
    }
    return "\\{" + first[0] + ws_ + "\\}";
  }

  std::string GenericObject(const std::string& value) {
    const std::string member =
        "\"" + std::string(jp::kStringChar) + "*\"" + key_sep_ + Group(value);
    return "\\{" + ws_ + Group(member + Group(item_sep_ + member) + "*") + "?" + ws_ + "\\}";
  }

  std::string ArrayRegex(const Json& schema) {
    const int64_t min = OptionalInt(schema, "minItems").value_or(0);
    const std::optional<int64_t> max = OptionalInt(schema, "maxItems");
    if (max && *max < min) throw SchemaError("maxItems < minItems");
    const std::string& sep = item_sep_;
    std::vector<std::string> prefix;
    if (schema.contains("prefixItems")) {
      for (const Json& sub : schema["prefixItems"]) prefix.push_back(Group(Visit(sub)));
    }
    // Items past the prefix: `items` (false: none). Without prefixItems an absent `items`
    // means any value; with prefixItems it means no extra items (like absent
    // additionalProperties).
    std::optional<std::string> item;
    if (schema.contains("items")) {
      if (!(schema["items"].is_boolean() && !schema["items"].get<bool>())) {
        item = Group(Visit(schema["items"]));
      }
    } else if (prefix.empty()) {
      item = Group(Any(any_depth_ - 1));
    }
    if (prefix.empty()) {
      if (!item || (max && *max == 0)) return "\\[" + ws_ + "\\]";
      std::optional<int64_t> more_max;
      if (max) more_max = *max - 1;
      const std::string body =
          *item + Group(sep + *item) + Quantifier(std::max<int64_t>(min - 1, 0), more_max);
      return "\\[" + ws_ + (min > 0 ? body : Group(body) + "?") + ws_ + "\\]";
    }
    // All prefix items are emitted (minItems below their count is not honoured).
    const int64_t k = static_cast<int64_t>(prefix.size());
    if (max && *max < k)
      throw SchemaError("maxItems below the number of prefixItems is not supported");
    std::string out = "\\[" + ws_ + prefix[0];
    for (size_t i = 1; i < prefix.size(); ++i) out += sep + prefix[i];
    if (item) {
      std::optional<int64_t> more_max;
      if (max) more_max = *max - k;
      out += Group(sep + *item) + Quantifier(std::max<int64_t>(min - k, 0), more_max);
    }
    return out + ws_ + "\\]";
  }

  // Exactly the JSON value `v` (const / enum), with this converter's separators.
  std::string Literal(const Json& v) {
    if (!v.is_array() && !v.is_object()) return jp::EscapeRegex(v.dump());
    std::string out = v.is_array() ? "\\[" + ws_ : "\\{" + ws_;
    bool first = true;
    for (const auto& [key, item] : v.items()) {
      if (!first) out += item_sep_;
      first = false;
      if (v.is_object()) out += jp::EscapeRegex(Json(key).dump()) + key_sep_;
      out += Literal(item);
    }
    return out + ws_ + (v.is_array() ? "\\]" : "\\}");
  }

  // Any JSON value with arrays/objects nested at most `depth` levels.
  std::string Any(int depth) {
    std::vector<std::string> parts = {"\"" + std::string(jp::kStringChar) + "*\"", jp::kNumber,
                                      jp::kBoolean, jp::kNull};
    if (depth > 0) {
      const std::string inner = Any(depth - 1);
      parts.push_back("\\[" + ws_ + Group(Group(inner) + Group(item_sep_ + Group(inner)) + "*") +
                      "?" + ws_ + "\\]");
      parts.push_back(GenericObject(inner));
    }
    return Alternation(parts);
  }

  const Json& root_;
  const std::string ws_;        // inside brackets, before the first and after the last member
  const std::string item_sep_;  // between items / members
  const std::string key_sep_;   // between a key and its value
  const int any_depth_;
  std::vector<std::string> ref_stack_;
  int visit_depth_ = 0;     // Visit calls in progress
  size_t regex_bytes_ = 0;  // sum of the sizes of the regexes Visit returned
};

}  // namespace

StatusOr<std::string> JsonSchemaToRegex(std::string_view schema_json,
                                        const JsonSchemaOptions& options) {
  Json root = Json::parse(schema_json, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return InvalidArgument("JSON schema: not valid JSON");
  if (NestsDeeperThan(root, kMaxSchemaDepth)) {
    return InvalidArgument("JSON schema: the document nests deeper than " +
                           std::to_string(kMaxSchemaDepth) + " levels");
  }
  try {
    return Converter(root, options).Visit(root);
  } catch (const SchemaError& e) {
    return InvalidArgument(std::string("JSON schema: ") + e.what());
  } catch (const RegexTooLarge& e) {
    return ResourceExhausted(std::string("JSON schema: ") + e.what());
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("JSON schema: malformed value: ") + e.what());
  }
}

}  // namespace radixlm::grammar
