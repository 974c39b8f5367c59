#include "server/gemma4_call_regex.h"

#include <algorithm>
#include <vector>

#include "grammar/json_patterns.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

constexpr const char* kString = "<\\|\"\\|>[^<]*<\\|\"\\|>";
constexpr const char* kInteger = "-?(?:0|[1-9][0-9]{0,17})";
constexpr const char* kNumber = "-?(?:0|[1-9][0-9]{0,17})(?:\\.[0-9]{1,17})?";
constexpr const char* kBoolean = "(?:true|false)";

std::string AnyScalar() {
  return std::string("(?:") + kString + "|" + kNumber + "|true|false|null)";
}

std::string AnyValue() {
  const std::string scalar = AnyScalar();
  return "(?:" + scalar + "|\\[(?:" + scalar + "(?:," + scalar + ")*)?\\])";
}

std::string ValueRegex(const json& schema) {
  const json* type = schema.is_object() && schema.contains("type") ? &schema["type"] : nullptr;
  if (type != nullptr && type->is_string()) {
    const std::string t = type->get<std::string>();
    if (t == "string") {
      // A length bound keeps a forced string from running on to max_tokens.
      const auto max = schema.find("maxLength");
      if (max != schema.end() && max->is_number_unsigned() && max->get<uint64_t>() <= 1000) {
        const auto min = schema.find("minLength");
        const uint64_t lo = min != schema.end() && min->is_number_unsigned()
                                ? std::min(min->get<uint64_t>(), max->get<uint64_t>())
                                : 0;
        return "<\\|\"\\|>[^<]{" + std::to_string(lo) + "," + std::to_string(max->get<uint64_t>()) +
               "}<\\|\"\\|>";
      }
      return kString;
    }
    if (t == "integer") return kInteger;
    if (t == "number") return kNumber;
    if (t == "boolean") return kBoolean;
  }
  return AnyValue();
}

}  // namespace

std::string Gemma4ArgsRegex(const json& parameters) {
  const json* properties = parameters.is_object() && parameters.contains("properties")
                               ? &parameters["properties"]
                               : nullptr;
  if (properties == nullptr || !properties->is_object() || properties->empty()) {
    const std::string pair = "[A-Za-z_][A-Za-z0-9_]{0,63}:" + AnyValue();
    return "\\{(?:" + pair + "(?:," + pair + ")*)?\\}";
  }
  std::vector<std::string> required;
  if (const auto it = parameters.find("required"); it != parameters.end() && it->is_array()) {
    for (const json& name : *it) {
      if (name.is_string() && properties->contains(name.get<std::string>())) {
        required.push_back(name.get<std::string>());
      }
    }
  }
  auto pair = [&](const std::string& key) {
    return grammar::json_patterns::EscapeRegex(key) + ":" + ValueRegex((*properties)[key]);
  };
  std::string body;
  for (const std::string& key : required) body += (body.empty() ? "" : ",") + pair(key);
  std::vector<std::string> optional;
  for (const auto& [key, schema] : properties->items()) {
    if (std::find(required.begin(), required.end(), key) == required.end()) {
      optional.push_back(key);
    }
  }
  if (required.empty()) {
    // Any of the properties, each as often as the model likes (a regex cannot count them).
    std::string any;
    for (const std::string& key : optional) any += (any.empty() ? "" : "|") + pair(key);
    return "\\{(?:(?:" + any + ")(?:,(?:" + any + "))*)?\\}";
  }
  for (const std::string& key : optional) body += "(?:," + pair(key) + ")?";
  return "\\{" + body + "\\}";
}

}  // namespace radixlm::server
