#include "engine/kv_identity.h"

#include <algorithm>
#include <string>

namespace radixlm {

uint64_t KvIdentity(const gguf::GgufFile& file, int32_t block_tokens, kernels::KvDtype dtype) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto bytes = [&h](const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  };
  auto str = [&bytes](const std::string& s) {
    const uint64_t n = s.size();
    bytes(&n, sizeof(n));
    bytes(s.data(), s.size());
  };
  const uint64_t size = file.file_size();
  bytes(&size, sizeof(size));
  for (const auto& [key, value] : file.metadata()) {
    str(key);
    str(value.ToString(64));
  }
  for (const gguf::TensorInfo& t : file.tensors()) {
    str(t.name);
    const auto type = static_cast<int64_t>(t.type);
    bytes(&type, sizeof(type));
    for (const int64_t d : t.shape) bytes(&d, sizeof(d));
    if (t.data != nullptr) bytes(t.data, std::min<size_t>(256, t.size_bytes));
  }
  str(std::string("kv=") + kernels::KvDtypeName(dtype));
  // The layout of a hybrid model's linear-layer state in snapshot files (recurrent_state.h):
  // DeltaNet matrices key-major since this tag (files of the value-major layout are not read).
  str("linear-state=2");
  const int64_t block = block_tokens;
  bytes(&block, sizeof(block));
  return h;
}

}  // namespace radixlm
