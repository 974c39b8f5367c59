// GgufFile: a validated, memory-mapped GGUF file (versions 2 and 3).
//
// Open() maps the file read-only and parses the header, metadata and tensor infos, checking
// every count, length and offset against the file size before use: a malformed file yields a
// Status naming the problem (never a crash, a hang or a huge allocation). Tensor data is not
// copied; TensorInfo::data points into the mapping, which lives as long as the GgufFile.
// A GgufFile is immutable after Open() and safe to read from many threads.
//
// Accepted: little-endian versions 2 and 3; general.alignment (if present) a u32 power of two;
// arrays nested at most 8 deep and at most 2^24 metadata values in all; tensors of 0..4 dims,
// each dim > 0, shape[0] a multiple of the type's block size, offsets multiples of the
// alignment, data inside the file and not overlapping; keys and tensor names unique. All
// failures are InvalidArgument (IoError when the file cannot be opened or mapped).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/ggml_types.h"
#include "gguf/gguf_value.h"
#include "util/status.h"

namespace radixlm::gguf {

struct TensorInfo {
  std::string name;
  GgmlType type = GgmlType::kF32;
  std::vector<int64_t> shape;  // ggml order: shape[0] is the contiguous (row) dimension
  uint64_t offset = 0;         // relative to the start of the data section
  uint64_t size_bytes = 0;
  const uint8_t* data = nullptr;  // into the mapping

  int64_t num_elements() const;
  int64_t row_size() const { return shape.empty() ? 1 : shape[0]; }
  int64_t num_rows() const { return shape.empty() ? 1 : num_elements() / shape[0]; }
};

class GgufFile {
 public:
  static StatusOr<std::unique_ptr<GgufFile>> Open(const std::string& path);
  // Parses an in-memory image (same validation; the buffer must outlive the GgufFile).
  static StatusOr<std::unique_ptr<GgufFile>> FromBuffer(const uint8_t* data, size_t size);
  // A file assembled from parts (a Hugging Face folder read by src/hf): the metadata and the
  // tensor table as given, each tensor's data pointing into memory that `storage` keeps alive
  // for the GgufFile's lifetime. Checked: keys and tensor names unique, every tensor's type
  // known, its shape and size_bytes consistent and data non-null. file_size() is the sum of
  // the tensors' bytes; is_mapped() is false (ReleasePages releases nothing).
  static StatusOr<std::unique_ptr<GgufFile>> FromParts(
      std::string path, std::vector<std::pair<std::string, Value>> metadata,
      std::vector<TensorInfo> tensors, std::shared_ptr<const void> storage);
  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  // Absolute offset of the data section: the first multiple of alignment() after the tensor
  // infos. In a file without tensors it may equal or exceed file_size().
  uint64_t data_offset() const { return data_offset_; }
  size_t file_size() const { return size_; }
  const std::string& path() const { return path_; }

  // Metadata in file order.
  const std::vector<std::pair<std::string, Value>>& metadata() const { return metadata_; }
  const Value* Find(std::string_view key) const;  // nullptr if absent
  bool Has(std::string_view key) const { return Find(key) != nullptr; }

  // Typed lookups: NotFound if absent, InvalidArgument naming the key if the type is wrong.
  StatusOr<std::string> GetString(std::string_view key) const;
  StatusOr<int64_t> GetInt(std::string_view key) const;
  StatusOr<double> GetFloat(std::string_view key) const;  // accepts integer values too
  StatusOr<bool> GetBool(std::string_view key) const;
  StatusOr<const Array*> GetArray(std::string_view key) const;
  // With a default when the key is absent (a wrong type is still an error).
  StatusOr<std::string> GetStringOr(std::string_view key, std::string def) const;
  StatusOr<int64_t> GetIntOr(std::string_view key, int64_t def) const;
  StatusOr<double> GetFloatOr(std::string_view key, double def) const;
  StatusOr<bool> GetBoolOr(std::string_view key, bool def) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* FindTensor(std::string_view name) const;  // nullptr if absent

  // Whether the bytes are a file mapping made by Open() (not a FromBuffer image).
  bool is_mapped() const { return owns_mapping_; }
  // Drops the pages wholly inside [begin, begin + bytes) from the process's resident set
  // (madvise MADV_DONTNEED; the partial pages at either end stay). The bytes stay readable and
  // unchanged: the mapping is a read-only file mapping, so a later read faults them back in
  // from the file (the page cache). For data that was copied elsewhere (repacked weights) and
  // is read rarely or never again. Returns the bytes released: 0 for a FromBuffer image (the
  // caller's memory is never touched), an empty or out-of-mapping range, or a failed madvise.
  // Safe from any thread (the file stays logically immutable).
  size_t ReleasePages(const void* begin, size_t bytes) const;
  // Copies the n bytes at `at` (a pointer into the file's bytes) to `out` without touching the
  // mapping's pages: for a mapping made by Open(), read from the file (pread; the page cache
  // serves it), so a released range stays out of the resident set; memcpy for a FromBuffer
  // image. InvalidArgument for a range outside the bytes, IoError for a failed read. Safe from
  // any thread.
  Status ReadBytes(const void* at, size_t n, void* out) const;

 private:
  GgufFile() = default;
  Status Parse();

  std::string path_;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  bool owns_mapping_ = false;
  int fd_ = -1;                          // Open(): the mapped file, kept open for ReadBytes
  std::shared_ptr<const void> storage_;  // FromParts: what the tensors point into
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, Value>> metadata_;
  std::map<std::string, size_t, std::less<>> metadata_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace radixlm::gguf
