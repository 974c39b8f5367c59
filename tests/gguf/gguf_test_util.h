// Helpers shared by the gguf tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "gguf/gguf_file.h"
#include "util/status.h"

namespace radixlm::gguf::testing {

inline std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(n);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

// Parses the first `size` bytes from an exact-size heap copy, so a read past the end is caught
// by AddressSanitizer rather than landing in the rest of the original vector.
inline Status ParseStatus(const std::vector<uint8_t>& bytes, size_t size) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[size == 0 ? 1 : size]);
  if (size > 0) std::memcpy(copy.get(), bytes.data(), size);
  StatusOr<std::unique_ptr<GgufFile>> file = GgufFile::FromBuffer(copy.get(), size);
  if (!file.ok()) return file.status();
  // A file that parses must have every tensor's data inside the buffer.
  for (const TensorInfo& t : (*file)->tensors()) {
    if (t.data < copy.get() || t.data + t.size_bytes > copy.get() + size) {
      return Internal("tensor '" + t.name + "' data escapes the buffer");
    }
  }
  return Status::Ok();
}

inline Status ParseStatus(const std::vector<uint8_t>& bytes) {
  return ParseStatus(bytes, bytes.size());
}

}  // namespace radixlm::gguf::testing
