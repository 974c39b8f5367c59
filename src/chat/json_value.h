// Conversions between nlohmann JSON and template values, and Python json.dumps() output.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "chat/value.h"

namespace radixlm::chat {

// JSON -> Value. Objects keep the container's key order: nlohmann::ordered_json keeps
// insertion order (like a Python dict from json.loads); nlohmann::json iterates sorted keys.
// Integers become int (unsigned beyond int64 become float), other numbers float.
// Throws a kLimit TemplateError for documents nested deeper than Value::kMaxNesting.
Value ValueFromJson(const nlohmann::json& json);
Value ValueFromJson(const nlohmann::ordered_json& json);

// The options of Python's json.dumps() that chat templates use (via transformers' tojson).
struct JsonDumpOptions {
  std::optional<std::string> indent;  // nullopt: one line
  std::string item_separator = ", ";  // json.dumps default; "," when indenting
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;  // transformers passes ensure_ascii=False
};

// Byte-for-byte json.dumps(value, ...). Throws a kType TemplateError for values JSON cannot hold
// (undefined, callables, namespaces), as Python raises TypeError.
std::string DumpJson(const Value& value, const JsonDumpOptions& options);

}  // namespace radixlm::chat
