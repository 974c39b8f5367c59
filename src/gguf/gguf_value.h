// A GGUF metadata value: a scalar, a string, or a (possibly nested) array of values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace radixlm::gguf {

// On-disk ids of gguf_type.
enum class ValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

std::string_view ValueTypeName(ValueType t);

struct Value;

struct Array {
  ValueType element_type = ValueType::kUint8;
  std::vector<Value> items;
};

// Integers of every width are held as int64_t or uint64_t (by signedness), floats as double;
// `type` remembers the on-disk type so the writer can round-trip exactly.
struct Value {
  ValueType type = ValueType::kUint8;
  std::variant<uint64_t, int64_t, double, bool, std::string, Array> data;

  bool is_integer() const;
  bool is_float() const { return type == ValueType::kFloat32 || type == ValueType::kFloat64; }
  bool is_string() const { return type == ValueType::kString; }
  bool is_array() const { return type == ValueType::kArray; }
  bool is_bool() const { return type == ValueType::kBool; }

  // Accessors; callers check the kind first (assert on mismatch).
  int64_t AsInt() const;   // any integer type (uint64 values above INT64_MAX are clamped)
  double AsFloat() const;  // float or integer types
  bool AsBool() const;
  const std::string& AsString() const;
  const Array& AsArray() const;

  // Short human-readable rendering; arrays longer than max_items are abbreviated
  // as "[a, b, c, ... (N items)]".
  std::string ToString(size_t max_items = 8) const;
  // Same, and strings longer than max_string_bytes are cut (at a UTF-8 boundary) and end in
  // "... (N bytes)". Strings are quoted, with control characters escaped.
  std::string ToString(size_t max_items, size_t max_string_bytes) const;

  // Constructors for building metadata (writer, tests).
  static Value U8(uint8_t v);
  static Value I8(int8_t v);
  static Value U16(uint16_t v);
  static Value I16(int16_t v);
  static Value U32(uint32_t v);
  static Value I32(int32_t v);
  static Value U64(uint64_t v);
  static Value I64(int64_t v);
  static Value F32(float v);
  static Value F64(double v);
  static Value Bool(bool v);
  static Value Str(std::string v);
  static Value Arr(ValueType element_type, std::vector<Value> items);
  static Value StrArr(const std::vector<std::string>& items);
  static Value F32Arr(const std::vector<float>& items);
  static Value I32Arr(const std::vector<int32_t>& items);
};

// Deep equality: same on-disk type and same contents (floats compare by value, so NaN != NaN).
bool operator==(const Array& a, const Array& b);
bool operator==(const Value& a, const Value& b);

}  // namespace radixlm::gguf
