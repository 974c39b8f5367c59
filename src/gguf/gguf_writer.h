// GgufWriter: builds a valid GGUF (version 3, or 2) file in memory or on disk: header, metadata
// in the order added, tensor infos, then each tensor's data padded to the alignment.
// Used by tests to write tiny random-weight models and, with GgufLayout + PatchU32/PatchU64,
// malformed variants of them. Not thread-safe; Serialize() does not modify the writer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/ggml_types.h"
#include "gguf/gguf_value.h"
#include "util/status.h"

namespace radixlm::gguf {

// Absolute byte positions of the fields of a serialized file, so tests can patch them to build
// malformed variants (see PatchU32/PatchU64 below).
struct GgufLayout {
  struct Kv {
    size_t key = 0;         // the key's uint64 length field
    size_t value_type = 0;  // uint32 value type
    size_t value = 0;       // first byte of the value (for arrays: the element type field)
  };
  struct Tensor {
    size_t name = 0;           // the name's uint64 length field
    size_t n_dims = 0;         // uint32
    size_t dims = 0;           // first of n_dims uint64 dimensions
    size_t type = 0;           // uint32 ggml type
    size_t offset = 0;         // uint64 offset relative to the data section
    uint64_t data_offset = 0;  // the value written there
  };
  size_t version = 4;       // uint32
  size_t tensor_count = 8;  // uint64
  size_t kv_count = 16;     // uint64
  std::vector<Kv> kvs;      // in file order (an automatic general.alignment comes last)
  std::vector<Tensor> tensors;
  size_t data_section = 0;  // absolute offset of the data section
};

class GgufWriter {
 public:
  // `version` is written verbatim (the layout is that of versions 2 and 3, which are the same).
  // `alignment` must be a nonzero power of two; if it is not 32, a general.alignment u32 key is
  // emitted after the other metadata unless the caller added that key itself. A caller-supplied
  // general.alignment is written as given (even if invalid) while the layout still uses
  // `alignment`: that is how tests build files with bad alignment values.
  explicit GgufWriter(uint32_t version = 3, uint64_t alignment = 32);

  // Keys are written in the order added. Duplicates are NOT rejected (tests use them); every
  // item of an array must have the array's element_type.
  void AddMetadata(std::string key, Value value);
  // `data` holds the raw bytes of the tensor in `type` (size must equal the type's row bytes
  // × rows). shape in ggml order (shape[0] contiguous). InvalidArgument for an unknown type,
  // more than 4 dims, a non-positive dim, a row size that is not a multiple of the block size,
  // a wrong data size or a duplicate name. Tensors are laid out in the order added.
  Status AddTensor(std::string name, GgmlType type, std::vector<int64_t> shape,
                   std::vector<uint8_t> data);
  Status AddF32Tensor(std::string name, std::vector<int64_t> shape, const std::vector<float>& v);

  std::vector<uint8_t> Serialize() const;
  // Same bytes; also fills `layout` (if non-null) with the position of every field.
  std::vector<uint8_t> Serialize(GgufLayout* layout) const;
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

// Overwrite a little-endian field of a serialized file in place (pos + width <= bytes.size()).
void PatchU32(std::vector<uint8_t>& bytes, size_t pos, uint32_t value);
void PatchU64(std::vector<uint8_t>& bytes, size_t pos, uint64_t value);

}  // namespace radixlm::gguf
