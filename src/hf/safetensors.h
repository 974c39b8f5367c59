// Safetensors checkpoints (Hugging Face's weight format): one `model.safetensors`, or shards
// listed by `model.safetensors.index.json`, each memory-mapped read-only.
//
// A file is an 8-byte little-endian header length N, N bytes of JSON
//   {"__metadata__": {...}, "<name>": {"dtype": "BF16", "shape": [rows, cols], "data_offsets":
//   [begin, end]}, ...}
// and the tensors' bytes, offsets relative to the first byte after the header. Open() checks
// the header before any data is read: N within the file, the JSON an object, every dtype known,
// every shape non-negative with end - begin = elements x dtype size, every range inside the
// file and no two ranges overlapping. Failures are InvalidArgument naming the file (and the
// tensor); IoError when the file cannot be opened or mapped. Immutable after Open(); safe to
// read from many threads. Tensor data lives as long as the SafetensorsFile.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace radixlm::hf {

enum class StDtype { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool };

// "F32" -> kF32 ...; false for a name the format does not define (or radixlm does not read).
bool ParseStDtype(std::string_view name, StDtype* out);
std::string_view StDtypeName(StDtype t);
int StDtypeBytes(StDtype t);

struct StTensor {
  std::string name;
  StDtype dtype = StDtype::kF32;
  std::vector<int64_t> shape;  // row-major, outermost first (PyTorch order: [out, in] for a weight)
  const uint8_t* data = nullptr;
  uint64_t size_bytes = 0;
  std::string file;  // the file it is in (for messages)

  int64_t num_elements() const;
};

class SafetensorsFile {
 public:
  static StatusOr<std::unique_ptr<SafetensorsFile>> Open(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::vector<StTensor>& tensors() const { return tensors_; }
  // The "__metadata__" object's string values (e.g. {"format": "pt"}).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  SafetensorsFile() = default;
  Status Parse();

  std::string path_;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  std::vector<StTensor> tensors_;
  std::map<std::string, std::string> metadata_;
};

// Every tensor of a checkpoint folder: `model.safetensors`, or the shards that
// `model.safetensors.index.json`'s weight_map names (each tensor must be in the shard the map
// says; a tensor in two shards or a shard that is missing is an error naming it).
class Checkpoint {
 public:
  static StatusOr<std::unique_ptr<Checkpoint>> Open(const std::string& dir);

  const std::vector<const StTensor*>& tensors() const { return tensors_; }
  const StTensor* Find(std::string_view name) const;  // nullptr if absent
  // "model.safetensors" or "model.safetensors.index.json (N shards)".
  const std::string& description() const { return description_; }

 private:
  Checkpoint() = default;
  Status Add(std::unique_ptr<SafetensorsFile> file);

  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::vector<const StTensor*> tensors_;  // in file order, shards in index order
  std::map<std::string, const StTensor*, std::less<>> index_;
  std::string description_;
};

}  // namespace radixlm::hf
