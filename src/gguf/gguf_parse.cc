#include "gguf/gguf_parse.h"

#include <algorithm>
#include <bit>
#include <utility>
#include <vector>

namespace radixlm::gguf::internal {

Status ByteCursor::Need(size_t n, std::string_view what) const {
  if (n <= remaining()) return Status::Ok();
  return InvalidArgument("truncated file: " + std::string(what) + " at offset " +
                         std::to_string(pos_) + " needs " + std::to_string(n) + " bytes but only " +
                         std::to_string(remaining()) + " remain");
}

uint64_t ByteCursor::TakeLe(size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{data_[pos_ + i]} << (8 * i);
  pos_ += n;
  return v;
}

Status ByteCursor::ReadU8(uint8_t* out, std::string_view what) {
  RADIXLM_RETURN_IF_ERROR(Need(1, what));
  *out = static_cast<uint8_t>(TakeLe(1));
  return Status::Ok();
}

Status ByteCursor::ReadU16(uint16_t* out, std::string_view what) {
  RADIXLM_RETURN_IF_ERROR(Need(2, what));
  *out = static_cast<uint16_t>(TakeLe(2));
  return Status::Ok();
}

Status ByteCursor::ReadU32(uint32_t* out, std::string_view what) {
  RADIXLM_RETURN_IF_ERROR(Need(4, what));
  *out = static_cast<uint32_t>(TakeLe(4));
  return Status::Ok();
}

Status ByteCursor::ReadU64(uint64_t* out, std::string_view what) {
  RADIXLM_RETURN_IF_ERROR(Need(8, what));
  *out = TakeLe(8);
  return Status::Ok();
}

Status ByteCursor::ReadString(std::string* out, std::string_view what) {
  RADIXLM_RETURN_IF_ERROR(Need(8, what));  // the length field
  uint64_t len = TakeLe(8);
  if (len > remaining()) {
    return InvalidArgument("bad string length: " + std::string(what) + " at offset " +
                           std::to_string(pos_ - 8) + " claims " + std::to_string(len) +
                           " bytes but only " + std::to_string(remaining()) + " remain");
  }
  out->assign(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(len));
  pos_ += static_cast<size_t>(len);
  return Status::Ok();
}

std::string QuoteName(std::string_view name) {
  constexpr size_t kMaxShown = 80;
  const bool cut = name.size() > kMaxShown;
  std::string out;
  out.reserve(kMaxShown + 5);
  out.push_back('\'');
  out.append(name.substr(0, kMaxShown));
  if (cut) out.append("...");
  out.push_back('\'');
  return out;
}

size_t MinEncodedSize(uint32_t type_id) {
  switch (static_cast<ValueType>(type_id)) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kBool:
      return 1;
    case ValueType::kUint16:
    case ValueType::kInt16:
      return 2;
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kFloat32:
      return 4;
    case ValueType::kUint64:
    case ValueType::kInt64:
    case ValueType::kFloat64:
    case ValueType::kString:  // the length field
      return 8;
    case ValueType::kArray:  // element type + count
      return 12;
  }
  return 0;
}

namespace {

Status ReadArray(ByteCursor& cursor, int depth, ValueBudget& budget, Value* out) {
  if (depth >= kMaxArrayDepth) {
    return InvalidArgument("arrays nested deeper than " + std::to_string(kMaxArrayDepth) +
                           " levels at offset " + std::to_string(cursor.pos()));
  }
  uint32_t element_type = 0;
  RADIXLM_RETURN_IF_ERROR(cursor.ReadU32(&element_type, "array element type"));
  size_t min_size = MinEncodedSize(element_type);
  if (min_size == 0) {
    return InvalidArgument("unknown value type " + std::to_string(element_type) +
                           " for array elements at offset " + std::to_string(cursor.pos() - 4));
  }
  uint64_t count = 0;
  RADIXLM_RETURN_IF_ERROR(cursor.ReadU64(&count, "array count"));
  if (count > cursor.remaining() / min_size) {
    return InvalidArgument("bad array count: " + std::to_string(count) + " items of type " +
                           std::string(ValueTypeName(static_cast<ValueType>(element_type))) +
                           " cannot fit in the " + std::to_string(cursor.remaining()) +
                           " bytes remaining at offset " + std::to_string(cursor.pos() - 8));
  }
  if (count > budget.values_left) {
    return InvalidArgument("too many metadata values: array of " + std::to_string(count) +
                           " items exceeds the limit of " + std::to_string(kMaxMetadataValues) +
                           " values per file");
  }
  budget.values_left -= count;
  Array array;
  array.element_type = static_cast<ValueType>(element_type);
  // Grow as items actually parse, so memory tracks the bytes really present.
  array.items.reserve(static_cast<size_t>(std::min<uint64_t>(count, 1 << 16)));
  for (uint64_t i = 0; i < count; ++i) {
    RADIXLM_RETURN_IF_ERROR(
        ReadValue(cursor, element_type, depth + 1, budget, &array.items.emplace_back()));
  }
  *out = Value{ValueType::kArray, std::move(array)};
  return Status::Ok();
}

}  // namespace

Status ReadValue(ByteCursor& cursor, uint32_t type_id, int depth, ValueBudget& budget, Value* out) {
  const auto type = static_cast<ValueType>(type_id);
  switch (type) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kBool: {
      uint8_t v = 0;
      RADIXLM_RETURN_IF_ERROR(cursor.ReadU8(&v, ValueTypeName(type)));
      if (type == ValueType::kUint8) *out = Value::U8(v);
      if (type == ValueType::kInt8) *out = Value::I8(static_cast<int8_t>(v));
      if (type == ValueType::kBool) {
        if (v > 1) {
          return InvalidArgument("bad bool value " + std::to_string(v) + " at offset " +
                                 std::to_string(cursor.pos() - 1) + " (must be 0 or 1)");
        }
        *out = Value::Bool(v != 0);
      }
      return Status::Ok();
    }
    case ValueType::kUint16:
    case ValueType::kInt16: {
      uint16_t v = 0;
      RADIXLM_RETURN_IF_ERROR(cursor.ReadU16(&v, ValueTypeName(type)));
      *out = type == ValueType::kUint16 ? Value::U16(v) : Value::I16(static_cast<int16_t>(v));
      return Status::Ok();
    }
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kFloat32: {
      uint32_t v = 0;
      RADIXLM_RETURN_IF_ERROR(cursor.ReadU32(&v, ValueTypeName(type)));
      if (type == ValueType::kUint32) *out = Value::U32(v);
      if (type == ValueType::kInt32) *out = Value::I32(static_cast<int32_t>(v));
      if (type == ValueType::kFloat32) *out = Value::F32(std::bit_cast<float>(v));
      return Status::Ok();
    }
    case ValueType::kUint64:
    case ValueType::kInt64:
    case ValueType::kFloat64: {
      uint64_t v = 0;
      RADIXLM_RETURN_IF_ERROR(cursor.ReadU64(&v, ValueTypeName(type)));
      if (type == ValueType::kUint64) *out = Value::U64(v);
      if (type == ValueType::kInt64) *out = Value::I64(static_cast<int64_t>(v));
      if (type == ValueType::kFloat64) *out = Value::F64(std::bit_cast<double>(v));
      return Status::Ok();
    }
    case ValueType::kString: {
      std::string s;
      RADIXLM_RETURN_IF_ERROR(cursor.ReadString(&s, "string value"));
      *out = Value::Str(std::move(s));
      return Status::Ok();
    }
    case ValueType::kArray:
      return ReadArray(cursor, depth, budget, out);
  }
  return InvalidArgument("unknown value type " + std::to_string(type_id) + " at offset " +
                         std::to_string(cursor.pos() - 4));
}

}  // namespace radixlm::gguf::internal
