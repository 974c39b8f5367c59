// GgufFile::Parse: header, metadata, tensor infos and data-section layout, each validated
// against the bytes actually present before it is used.
#include <algorithm>
#include <limits>
#include <numeric>

#include "gguf/gguf_file.h"
#include "gguf/gguf_parse.h"

namespace radixlm::gguf {

namespace {

using internal::ByteCursor;

// Bytes a key/value pair needs at least: key length, one key byte, value type, one value byte.
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;
// Bytes a tensor info needs at least: name length, one name byte, n_dims, type, offset.
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 4 + 8;
constexpr uint32_t kMaxDims = 4;
constexpr std::string_view kAlignmentKey = "general.alignment";

std::string Hex(uint32_t v) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) s.push_back(kDigits[(v >> shift) & 0xF]);
  return s;
}

Status CheckVersion(uint32_t version) {
  if (version == 2 || version == 3) return Status::Ok();
  if (version == 1) {
    return InvalidArgument(
        "unsupported GGUF version 1 (obsolete 32-bit format); only versions "
        "2 and 3 are supported");
  }
  const uint32_t swapped = __builtin_bswap32(version);
  if (swapped == 2 || swapped == 3) {
    return InvalidArgument("unsupported GGUF version field " + Hex(version) +
                           ": this is a big-endian GGUF file; only little-endian is supported");
  }
  return InvalidArgument("unsupported GGUF version " + std::to_string(version) +
                         "; only versions 2 and 3 are supported");
}

Status CheckAlignmentValue(const Value& v) {
  if (v.type != ValueType::kUint32) {
    return InvalidArgument("bad alignment: general.alignment must be a u32, got " +
                           std::string(ValueTypeName(v.type)));
  }
  const int64_t a = v.AsInt();
  if (a == 0 || (a & (a - 1)) != 0) {
    return InvalidArgument("bad alignment: general.alignment = " + std::to_string(a) +
                           " is not a nonzero power of two");
  }
  return Status::Ok();
}

// Reads one tensor info (everything but the data pointer) and checks it in isolation.
Status ReadTensorInfo(ByteCursor& cursor, uint64_t alignment, TensorInfo* t) {
  RADIXLM_RETURN_IF_ERROR(cursor.ReadString(&t->name, "tensor name"));
  const std::string who = "tensor " + internal::QuoteName(t->name);
  uint32_t n_dims = 0;
  RADIXLM_RETURN_IF_ERROR(cursor.ReadU32(&n_dims, who + " n_dims"));
  if (n_dims > kMaxDims) {
    return InvalidArgument(who + ": bad n_dims " + std::to_string(n_dims) + " (at most " +
                           std::to_string(kMaxDims) + " dimensions)");
  }
  t->shape.resize(n_dims);
  int64_t elements = 1;
  for (uint32_t i = 0; i < n_dims; ++i) {
    uint64_t raw = 0;
    RADIXLM_RETURN_IF_ERROR(cursor.ReadU64(&raw, who + " shape"));
    const auto dim = static_cast<int64_t>(raw);
    if (dim <= 0) {
      return InvalidArgument(who + ": bad dimension " + std::to_string(i) + " = " +
                             std::to_string(dim) + " (must be positive)");
    }
    if (__builtin_mul_overflow(elements, dim, &elements)) {
      return InvalidArgument(who + ": element count overflows int64");
    }
    t->shape[i] = dim;
  }
  uint32_t type_id = 0;
  RADIXLM_RETURN_IF_ERROR(cursor.ReadU32(&type_id, who + " type"));
  std::optional<GgmlTypeTraits> traits = GetTypeTraits(type_id);
  if (!traits) {
    return InvalidArgument(who + ": unknown ggml type " + std::to_string(type_id));
  }
  t->type = static_cast<GgmlType>(type_id);
  if (t->row_size() % traits->block_size != 0) {
    return InvalidArgument(who + ": row size " + std::to_string(t->row_size()) +
                           " is not a multiple of the " + std::string(traits->name) +
                           " block size " + std::to_string(traits->block_size));
  }
  const int64_t row_bytes = RowSizeBytes(t->type, t->row_size());
  int64_t total = 0;
  if (row_bytes < 0 || __builtin_mul_overflow(row_bytes, elements / t->row_size(), &total)) {
    return InvalidArgument(who + ": byte size overflows int64");
  }
  t->size_bytes = static_cast<uint64_t>(total);
  RADIXLM_RETURN_IF_ERROR(cursor.ReadU64(&t->offset, who + " offset"));
  if (t->offset % alignment != 0) {
    return InvalidArgument(who + ": data offset " + std::to_string(t->offset) +
                           " is not aligned to " + std::to_string(alignment) + " bytes");
  }
  return Status::Ok();
}

}  // namespace

Status GgufFile::Parse() {
  ByteCursor cursor(base_, size_);

  // Header.
  if (size_ < 4) {
    return InvalidArgument("truncated file: " + std::to_string(size_) +
                           " bytes is too short for the GGUF magic");
  }
  if (std::string_view(reinterpret_cast<const char*>(base_), 4) != "GGUF") {
    uint32_t got = 0;
    RADIXLM_RETURN_IF_ERROR(cursor.ReadU32(&got, "magic"));
    return InvalidArgument("bad magic " + Hex(__builtin_bswap32(got)) +
                           ": not a GGUF file (expected \"GGUF\")");
  }
  uint32_t magic = 0;
  RADIXLM_RETURN_IF_ERROR(cursor.ReadU32(&magic, "magic"));
  RADIXLM_RETURN_IF_ERROR(cursor.ReadU32(&version_, "version"));
  RADIXLM_RETURN_IF_ERROR(CheckVersion(version_));
  uint64_t tensor_count = 0;
  uint64_t kv_count = 0;
  RADIXLM_RETURN_IF_ERROR(cursor.ReadU64(&tensor_count, "tensor count"));
  RADIXLM_RETURN_IF_ERROR(cursor.ReadU64(&kv_count, "metadata key/value count"));
  const uint64_t rest = cursor.remaining();
  if (kv_count > rest / kMinKvBytes) {
    return InvalidArgument("bad metadata key/value count " + std::to_string(kv_count) + ": " +
                           std::to_string(rest) + " remaining bytes hold at most " +
                           std::to_string(rest / kMinKvBytes));
  }
  if (tensor_count > (rest - kv_count * kMinKvBytes) / kMinTensorInfoBytes) {
    return InvalidArgument("bad tensor count " + std::to_string(tensor_count) + ": " +
                           std::to_string(rest) +
                           " remaining bytes cannot hold that many "
                           "tensor infos");
  }

  // Metadata.
  internal::ValueBudget budget;
  for (uint64_t i = 0; i < kv_count; ++i) {
    std::string key;
    RADIXLM_RETURN_IF_ERROR(cursor.ReadString(&key, "metadata key"));
    if (key.empty()) {
      return InvalidArgument("empty metadata key (key/value pair " + std::to_string(i) + ")");
    }
    if (metadata_index_.count(key) != 0) {
      return InvalidArgument("duplicate metadata key " + internal::QuoteName(key));
    }
    const std::string who = "metadata key " + internal::QuoteName(key);
    uint32_t type_id = 0;
    RADIXLM_RETURN_IF_ERROR(cursor.ReadU32(&type_id, who + " value type"));
    Value value;
    Status st = internal::ReadValue(cursor, type_id, 0, budget, &value);
    if (!st.ok()) return Status(st.code(), who + ": " + st.message());
    if (key == kAlignmentKey) {
      RADIXLM_RETURN_IF_ERROR(CheckAlignmentValue(value));
      alignment_ = static_cast<uint64_t>(value.AsInt());
    }
    metadata_index_.emplace(key, metadata_.size());
    metadata_.emplace_back(std::move(key), std::move(value));
  }

  // Tensor infos.
  // Entries are appended as they parse (no reserve from the untrusted counts).
  for (uint64_t i = 0; i < tensor_count; ++i) {
    TensorInfo& t = tensors_.emplace_back();
    RADIXLM_RETURN_IF_ERROR(ReadTensorInfo(cursor, alignment_, &t));
    if (!tensor_index_.emplace(t.name, tensors_.size() - 1).second) {
      return InvalidArgument("duplicate tensor name " + internal::QuoteName(t.name));
    }
  }

  // Data section: starts at the first aligned offset after the tensor infos. alignment_ is at
  // most 2^31 and pos() at most size_, so this cannot overflow.
  data_offset_ = (cursor.pos() + alignment_ - 1) / alignment_ * alignment_;
  const uint64_t data_bytes = data_offset_ <= size_ ? size_ - data_offset_ : 0;
  for (TensorInfo& t : tensors_) {
    if (t.offset > data_bytes || t.size_bytes > data_bytes - t.offset) {
      return InvalidArgument("tensor " + internal::QuoteName(t.name) + ": data out of range: " +
                             std::to_string(t.size_bytes) + " bytes at data offset " +
                             std::to_string(t.offset) + " extend past the end of the file " +
                             "(the data section has " + std::to_string(data_bytes) + " bytes)");
    }
    t.data = base_ + data_offset_ + t.offset;
  }
  std::vector<size_t> order(tensors_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return tensors_[a].offset < tensors_[b].offset; });
  for (size_t i = 1; i < order.size(); ++i) {
    const TensorInfo& prev = tensors_[order[i - 1]];
    const TensorInfo& next = tensors_[order[i]];
    if (prev.offset + prev.size_bytes > next.offset) {
      return InvalidArgument("overlapping tensors: " + internal::QuoteName(prev.name) + " [" +
                             std::to_string(prev.offset) + ", " +
                             std::to_string(prev.offset + prev.size_bytes) + ") and " +
                             internal::QuoteName(next.name) + " starting at " +
                             std::to_string(next.offset));
    }
  }
  return Status::Ok();
}

}  // namespace radixlm::gguf
