#include "gguf/gguf_value.h"

#include <cassert>
#include <charconv>
#include <cstdio>
#include <limits>

namespace radixlm::gguf {

std::string_view ValueTypeName(ValueType t) {
  switch (t) {
    case ValueType::kUint8:
      return "u8";
    case ValueType::kInt8:
      return "i8";
    case ValueType::kUint16:
      return "u16";
    case ValueType::kInt16:
      return "i16";
    case ValueType::kUint32:
      return "u32";
    case ValueType::kInt32:
      return "i32";
    case ValueType::kFloat32:
      return "f32";
    case ValueType::kBool:
      return "bool";
    case ValueType::kString:
      return "string";
    case ValueType::kArray:
      return "array";
    case ValueType::kUint64:
      return "u64";
    case ValueType::kInt64:
      return "i64";
    case ValueType::kFloat64:
      return "f64";
  }
  return "unknown";
}

bool Value::is_integer() const {
  switch (type) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kUint16:
    case ValueType::kInt16:
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kUint64:
    case ValueType::kInt64:
      return true;
    default:
      return false;
  }
}

int64_t Value::AsInt() const {
  assert(is_integer());
  if (const auto* u = std::get_if<uint64_t>(&data)) {
    constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    return *u > kMax ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(*u);
  }
  if (const auto* i = std::get_if<int64_t>(&data)) return *i;
  return 0;
}

double Value::AsFloat() const {
  if (const auto* d = std::get_if<double>(&data)) return *d;
  if (const auto* u = std::get_if<uint64_t>(&data)) return static_cast<double>(*u);
  if (const auto* i = std::get_if<int64_t>(&data)) return static_cast<double>(*i);
  assert(false && "Value::AsFloat on a non-numeric value");
  return 0.0;
}

bool Value::AsBool() const {
  assert(is_bool());
  const auto* b = std::get_if<bool>(&data);
  return b != nullptr && *b;
}

const std::string& Value::AsString() const {
  assert(is_string());
  return std::get<std::string>(data);
}

const Array& Value::AsArray() const {
  assert(is_array());
  return std::get<Array>(data);
}

namespace {

// Shortest text that round-trips the value at its on-disk precision.
std::string FormatFloat(double v, bool single_precision) {
  char buf[64];
  std::to_chars_result r = single_precision
                               ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v))
                               : std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

void AppendQuoted(std::string& out, const std::string& s, size_t max_bytes) {
  size_t n = s.size();
  if (n > max_bytes) {
    n = max_bytes;
    // Back off to a UTF-8 lead byte so the cut never splits a code point.
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  }
  out.push_back('"');
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char esc[8];
          std::snprintf(esc, sizeof(esc), "\\x%02X", c);
          out += esc;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
  if (n < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
}

void AppendValue(std::string& out, const Value& v, size_t max_items, size_t max_string_bytes) {
  switch (v.type) {
    case ValueType::kFloat32:
    case ValueType::kFloat64:
      out += FormatFloat(v.AsFloat(), v.type == ValueType::kFloat32);
      return;
    case ValueType::kBool:
      out += v.AsBool() ? "true" : "false";
      return;
    case ValueType::kString:
      AppendQuoted(out, v.AsString(), max_string_bytes);
      return;
    case ValueType::kArray: {
      const Array& a = v.AsArray();
      out.push_back('[');
      size_t shown = a.items.size() <= max_items ? a.items.size() : max_items;
      for (size_t i = 0; i < shown; ++i) {
        if (i > 0) out += ", ";
        AppendValue(out, a.items[i], max_items, max_string_bytes);
      }
      if (shown < a.items.size()) {
        out += shown > 0 ? ", ... (" : "... (";
        out += std::to_string(a.items.size()) + " items)";
      }
      out.push_back(']');
      return;
    }
    default:
      if (const auto* u = std::get_if<uint64_t>(&v.data)) {
        out += std::to_string(*u);
      } else if (const auto* i = std::get_if<int64_t>(&v.data)) {
        out += std::to_string(*i);
      }
      return;
  }
}

}  // namespace

std::string Value::ToString(size_t max_items) const {
  return ToString(max_items, std::numeric_limits<size_t>::max());
}

std::string Value::ToString(size_t max_items, size_t max_string_bytes) const {
  std::string out;
  AppendValue(out, *this, max_items, max_string_bytes);
  return out;
}

bool operator==(const Array& a, const Array& b) {
  return a.element_type == b.element_type && a.items == b.items;
}

bool operator==(const Value& a, const Value& b) { return a.type == b.type && a.data == b.data; }

Value Value::U8(uint8_t v) { return Value{ValueType::kUint8, uint64_t{v}}; }
Value Value::I8(int8_t v) { return Value{ValueType::kInt8, int64_t{v}}; }
Value Value::U16(uint16_t v) { return Value{ValueType::kUint16, uint64_t{v}}; }
Value Value::I16(int16_t v) { return Value{ValueType::kInt16, int64_t{v}}; }
Value Value::U32(uint32_t v) { return Value{ValueType::kUint32, uint64_t{v}}; }
Value Value::I32(int32_t v) { return Value{ValueType::kInt32, int64_t{v}}; }
Value Value::U64(uint64_t v) { return Value{ValueType::kUint64, v}; }
Value Value::I64(int64_t v) { return Value{ValueType::kInt64, v}; }
Value Value::F32(float v) { return Value{ValueType::kFloat32, static_cast<double>(v)}; }
Value Value::F64(double v) { return Value{ValueType::kFloat64, v}; }
Value Value::Bool(bool v) { return Value{ValueType::kBool, v}; }
Value Value::Str(std::string v) { return Value{ValueType::kString, std::move(v)}; }

Value Value::Arr(ValueType element_type, std::vector<Value> items) {
  return Value{ValueType::kArray, Array{element_type, std::move(items)}};
}

Value Value::StrArr(const std::vector<std::string>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (const std::string& s : items) values.push_back(Str(s));
  return Arr(ValueType::kString, std::move(values));
}

Value Value::F32Arr(const std::vector<float>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (float f : items) values.push_back(F32(f));
  return Arr(ValueType::kFloat32, std::move(values));
}

Value Value::I32Arr(const std::vector<int32_t>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (int32_t i : items) values.push_back(I32(i));
  return Arr(ValueType::kInt32, std::move(values));
}

}  // namespace radixlm::gguf
