#include "chat/json_value.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "chat/template_error.h"
#include "chat/text.h"

namespace radixlm::chat {

namespace {

template <typename Json>
Value FromJson(const Json& json, int depth) {
  if (depth > Value::kMaxNesting) {
    throw TemplateError(ErrorKind::kLimit, "JSON input nested more than " +
                                               std::to_string(Value::kMaxNesting) + " deep");
  }
  switch (json.type()) {
    case nlohmann::json::value_t::null:
      return Value::None();
    case nlohmann::json::value_t::boolean:
      return Value::Bool(json.template get<bool>());
    case nlohmann::json::value_t::number_integer:
      return Value::Int(json.template get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      const uint64_t u = json.template get<uint64_t>();
      if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Value::Int(static_cast<int64_t>(u));
      }
      return Value::Float(static_cast<double>(u));
    }
    case nlohmann::json::value_t::number_float:
      return Value::Float(json.template get<double>());
    case nlohmann::json::value_t::string:
      return Value::String(json.template get<std::string>());
    case nlohmann::json::value_t::array: {
      Value::List items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(FromJson(item, depth + 1));
      return Value::MakeList(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      DictData dict;
      dict.Reserve(json.size());
      for (auto it = json.begin(); it != json.end(); ++it) {
        dict.Append(Value::String(it.key()), FromJson(it.value(), depth + 1));  // keys are unique
      }
      return Value::MakeDict(std::move(dict));
    }
    case nlohmann::json::value_t::binary:
    case nlohmann::json::value_t::discarded:
      break;
  }
  return Value::Undefined("unsupported JSON value");
}

void AppendJsonString(std::string_view s, bool ensure_ascii, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  auto append_u = [&](uint32_t unit) {
    out->append("\\u");
    for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHex[(unit >> shift) & 0xF]);
  };
  out->push_back('"');
  for (size_t pos = 0; pos < s.size();) {
    const size_t start = pos;
    const char32_t cp = NextCodePoint(s, &pos);
    switch (cp) {
      case '"':
        out->append("\\\"");
        continue;
      case '\\':
        out->append("\\\\");
        continue;
      case '\n':
        out->append("\\n");
        continue;
      case '\r':
        out->append("\\r");
        continue;
      case '\t':
        out->append("\\t");
        continue;
      case '\b':
        out->append("\\b");
        continue;
      case '\f':
        out->append("\\f");
        continue;
      default:
        break;
    }
    if (cp < 0x20) {
      append_u(cp);
    } else if (cp < 0x80 || !ensure_ascii) {
      out->append(s.substr(start, pos - start));
    } else if (cp < 0x10000) {
      append_u(cp);
    } else {
      const uint32_t v = cp - 0x10000;
      append_u(0xD800 | (v >> 10));
      append_u(0xDC00 | (v & 0x3FF));
    }
  }
  out->push_back('"');
}

std::string JsonFloat(double f) {
  if (std::isnan(f)) return "NaN";
  if (std::isinf(f)) return f > 0 ? "Infinity" : "-Infinity";
  return FormatPyFloat(f);
}

class JsonWriter {
 public:
  JsonWriter(const JsonDumpOptions& options, std::string* out) : opt_(options), out_(out) {}

  void Write(const Value& v, int level) {
    using Kind = Value::Kind;
    switch (v.kind()) {
      case Kind::kNone:
        out_->append("null");
        return;
      case Kind::kBool:
        out_->append(v.as_bool() ? "true" : "false");
        return;
      case Kind::kInt:
        out_->append(std::to_string(v.as_int()));
        return;
      case Kind::kFloat:
        out_->append(JsonFloat(v.as_float()));
        return;
      case Kind::kString:
        AppendJsonString(v.as_string(), opt_.ensure_ascii, out_);
        return;
      case Kind::kList:
        WriteList(v.as_list(), level);
        return;
      case Kind::kDict:
        WriteDict(v.as_dict(), level);
        return;
      case Kind::kUndefined:
      case Kind::kCallable:
      case Kind::kNamespace:
        break;
    }
    ThrowTypeError("Object of type " + v.TypeName() + " is not JSON serializable");
  }

 private:
  void Open(char bracket, int level) {
    out_->push_back(bracket);
    if (opt_.indent) NewLine(level + 1);
  }
  void Close(char bracket, int level) {
    if (opt_.indent) NewLine(level);
    out_->push_back(bracket);
  }
  void NewLine(int level) {
    out_->push_back('\n');
    for (int i = 0; i < level; ++i) out_->append(*opt_.indent);
  }
  void Separator(int level) {
    out_->append(opt_.item_separator);
    if (opt_.indent) NewLine(level + 1);
  }

  void WriteList(const Value::List& items, int level) {
    if (items.empty()) {
      out_->append("[]");
      return;
    }
    Open('[', level);
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) Separator(level);
      Write(items[i], level + 1);
    }
    Close(']', level);
  }

  static std::string KeyString(const Value& key) {
    if (key.is_string()) return key.as_string();
    if (key.is_bool()) return key.as_bool() ? "true" : "false";
    if (key.is_none()) return "null";
    if (key.is_int()) return std::to_string(key.as_int());
    if (key.is_float()) return JsonFloat(key.as_float());
    ThrowTypeError("keys must be str, int, float, bool or None, not " + key.TypeName());
  }

  void WriteDict(const DictData& dict, int level) {
    if (dict.empty()) {
      out_->append("{}");
      return;
    }
    std::vector<const DictData::Entry*> entries;
    for (const auto& entry : dict.entries()) entries.push_back(&entry);
    if (opt_.sort_keys) SortEntries(&entries);
    Open('{', level);
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) Separator(level);
      AppendJsonString(KeyString(entries[i]->first), opt_.ensure_ascii, out_);
      out_->append(opt_.key_separator);
      Write(entries[i]->second, level + 1);
    }
    Close('}', level);
  }

  static void SortEntries(std::vector<const DictData::Entry*>* entries) {
    const bool all_strings = std::all_of(entries->begin(), entries->end(),
                                         [](const auto* e) { return e->first.is_string(); });
    const bool all_numbers = std::all_of(entries->begin(), entries->end(),
                                         [](const auto* e) { return e->first.is_number(); });
    if (!all_strings && !all_numbers) {
      ThrowTypeError("'<' not supported between dict keys of different types");
    }
    std::stable_sort(entries->begin(), entries->end(), [&](const auto* a, const auto* b) {
      if (all_strings) return a->first.as_string() < b->first.as_string();
      return a->first.ToDouble() < b->first.ToDouble();
    });
  }

  const JsonDumpOptions& opt_;
  std::string* out_;
};

}  // namespace

Value ValueFromJson(const nlohmann::json& json) { return FromJson(json, 0); }
Value ValueFromJson(const nlohmann::ordered_json& json) { return FromJson(json, 0); }

std::string DumpJson(const Value& value, const JsonDumpOptions& options) {
  std::string out;
  JsonWriter(options, &out).Write(value, 0);
  return out;
}

}  // namespace radixlm::chat
