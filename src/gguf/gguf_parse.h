// Internal to the gguf module: bounds-checked little-endian decoding of GGUF primitives and
// metadata values. Every read checks the bytes remaining first and fails with a Status that
// names what was being read and where; nothing here trusts a count or length from the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gguf/gguf_value.h"
#include "util/status.h"

namespace radixlm::gguf::internal {

// Maximum nesting of arrays inside a metadata value (an array of arrays is depth 2).
inline constexpr int kMaxArrayDepth = 8;
// Maximum number of metadata values (array items included) in one file. Each value costs
// ~48 bytes in memory, so this caps the metadata at under 1 GiB even for a crafted file;
// real vocabularies (262k tokens + scores + types) are well below it.
inline constexpr uint64_t kMaxMetadataValues = uint64_t{1} << 24;

class ByteCursor {
 public:
  ByteCursor(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }
  const uint8_t* data() const { return data_; }

  // Each reads a little-endian value and advances; `what` names it in the error.
  Status ReadU8(uint8_t* out, std::string_view what);
  Status ReadU16(uint16_t* out, std::string_view what);
  Status ReadU32(uint32_t* out, std::string_view what);
  Status ReadU64(uint64_t* out, std::string_view what);
  // A GGUF string: uint64 byte length, then the bytes (not NUL-terminated).
  Status ReadString(std::string* out, std::string_view what);

 private:
  Status Need(size_t n, std::string_view what) const;
  uint64_t TakeLe(size_t n);

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Mutable limits shared by all values of one file.
struct ValueBudget {
  uint64_t values_left = kMaxMetadataValues;
};

// "'name'" for error messages; names from the file may be huge, so long ones are cut to 80
// bytes and end in "...".
std::string QuoteName(std::string_view name);

// Smallest number of bytes a value of on-disk type `type_id` can occupy, or 0 if the id is not a
// known value type.
size_t MinEncodedSize(uint32_t type_id);

// Reads one value of on-disk type `type_id` (already read from the file). `depth` is the array
// nesting level of this value (0 for a top-level value). Errors name the problem, not the key;
// the caller adds the key.
Status ReadValue(ByteCursor& cursor, uint32_t type_id, int depth, ValueBudget& budget, Value* out);

}  // namespace radixlm::gguf::internal
