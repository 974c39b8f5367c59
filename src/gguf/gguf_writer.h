// GgufWriter: builds a valid GGUF (version 3) file in memory or on disk.
// Used by tests to write tiny random-weight models and malformed variants of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/ggml_types.h"
#include "gguf/gguf_value.h"
#include "util/status.h"

namespace radixlm::gguf {

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = 3, uint64_t alignment = 32);

  void AddMetadata(std::string key, Value value);
  // `data` holds the raw bytes of the tensor in `type` (size must equal the type's row bytes
  // × rows). shape in ggml order (shape[0] contiguous).
  Status AddTensor(std::string name, GgmlType type, std::vector<int64_t> shape,
                   std::vector<uint8_t> data);
  Status AddF32Tensor(std::string name, std::vector<int64_t> shape, const std::vector<float>& v);

  std::vector<uint8_t> Serialize() const;
  Status WriteToFile(const std::string& path) const;

 private:
  struct PendingTensor {
    std::string name;
    GgmlType type;
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;
  };
  uint32_t version_;
  uint64_t alignment_;
  std::vector<std::pair<std::string, Value>> metadata_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace radixlm::gguf
