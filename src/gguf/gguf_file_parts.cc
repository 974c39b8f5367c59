// GgufFile::FromParts: a GGUF presented from a metadata list and a tensor table whose data
// lives elsewhere (a Hugging Face folder's mapped safetensors and load-time copies).
#include "gguf/gguf_file.h"

namespace radixlm::gguf {

StatusOr<std::unique_ptr<GgufFile>> GgufFile::FromParts(
    std::string path, std::vector<std::pair<std::string, Value>> metadata,
    std::vector<TensorInfo> tensors, std::shared_ptr<const void> storage) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->path_ = std::move(path);
  file->storage_ = std::move(storage);
  for (auto& [key, value] : metadata) {
    if (key.empty() || !file->metadata_index_.emplace(key, file->metadata_.size()).second) {
      return InvalidArgument(file->path_ + ": empty or duplicate metadata key '" + key + "'");
    }
    file->metadata_.emplace_back(std::move(key), std::move(value));
  }
  uint64_t total = 0;
  for (TensorInfo& t : tensors) {
    const std::string who = file->path_ + ": tensor '" + t.name + "'";
    if (!GetTypeTraits(t.type).has_value()) return InvalidArgument(who + ": unknown type");
    if (t.shape.empty() || t.shape.size() > 4 || t.data == nullptr) {
      return InvalidArgument(who + ": needs 1 to 4 dimensions and data");
    }
    for (int64_t d : t.shape) {
      if (d <= 0) return InvalidArgument(who + ": a dimension is not positive");
    }
    const int64_t row = RowSizeBytes(t.type, t.shape[0]);
    if (row < 0 ||
        static_cast<uint64_t>(row) * static_cast<uint64_t>(t.num_rows()) != t.size_bytes) {
      return InvalidArgument(who + ": " + std::to_string(t.size_bytes) + " bytes do not match " +
                             std::string(GgmlTypeName(t.type)) + " of its shape");
    }
    if (!file->tensor_index_.emplace(t.name, file->tensors_.size()).second) {
      return InvalidArgument(file->path_ + ": duplicate tensor name '" + t.name + "'");
    }
    t.offset = total;
    total += t.size_bytes;
    file->tensors_.push_back(std::move(t));
  }
  file->size_ = static_cast<size_t>(total);
  return file;
}

}  // namespace radixlm::gguf
