#include "disagg/kv_transfer_record.h"

#include <cstring>
#include <type_traits>

namespace radixlm::disagg {
namespace {

constexpr uint32_t kMagic = 0x564b4c52;  // "RLKV"
constexpr uint32_t kVersion = 3;         // 2: the LoRA adapter's identity and name; 3: linear state
constexpr uint32_t kFirstVersion = 1;
constexpr uint64_t kMaxCount = uint64_t{1} << 32;

class Writer {
 public:
  template <typename T>
  void Put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const uint8_t*>(&value);
    out_.insert(out_.end(), p, p + sizeof(T));
  }
  void PutBytes(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    out_.insert(out_.end(), p, p + n);
  }
  std::vector<uint8_t> Take() { return std::move(out_); }

 private:
  std::vector<uint8_t> out_;
};

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> in) : in_(in) {}
  template <typename T>
  bool Get(T* value) {
    if (in_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(value, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool GetBytes(void* out, uint64_t n) {
    if (in_.size() - pos_ < n) return false;
    if (n > 0) std::memcpy(out, in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  uint64_t remaining() const { return in_.size() - pos_; }

 private:
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
};

}  // namespace

uint64_t KvValueBytes(uint32_t dtype) {
  switch (dtype) {
    case 0:  // f16
    case 1:  // bf16
      return 2;
    case 2:  // fp8_e5m2
      return 1;
    default:
      return 0;
  }
}

uint64_t KvTransferRecord::MaxKvBytes() const {
  uint64_t rows = 0;
  for (uint32_t from : rows_from) {
    if (from < prompt_ids.size()) rows += prompt_ids.size() - from;
  }
  return rows * 2 /* K and V */ * row_elems * KvValueBytes(dtype);
}

uint64_t KvTransferRecord::ExpectedStateBytes() const {
  if (prompt_ids.empty()) return 0;
  return uint64_t{state_layers} * (state_conv_floats + state_delta_floats) * sizeof(float);
}

std::vector<uint8_t> SerializeKvTransferRecord(const KvTransferRecord& record) {
  Writer w;
  w.Put(kMagic);
  w.Put(kVersion);
  w.Put(record.room);
  w.Put(static_cast<uint64_t>(record.error.size()));
  w.PutBytes(record.error.data(), record.error.size());
  w.Put(static_cast<uint64_t>(record.prompt_ids.size()));
  w.PutBytes(record.prompt_ids.data(), record.prompt_ids.size() * sizeof(int32_t));
  w.Put(record.row_elems);
  w.Put(record.dtype);
  w.Put(record.lora_identity);
  w.Put(static_cast<uint64_t>(record.lora_name.size()));
  w.PutBytes(record.lora_name.data(), record.lora_name.size());
  w.Put(static_cast<uint64_t>(record.rows_from.size()));
  w.PutBytes(record.rows_from.data(), record.rows_from.size() * sizeof(uint32_t));
  w.Put(static_cast<uint64_t>(record.kv.size()));
  w.PutBytes(record.kv.data(), record.kv.size());
  w.Put(record.state_layers);
  w.Put(record.state_conv_floats);
  w.Put(record.state_delta_floats);
  w.Put(static_cast<uint64_t>(record.state.size()));
  w.PutBytes(record.state.data(), record.state.size());
  return w.Take();
}

StatusOr<KvTransferRecord> ParseKvTransferRecord(std::span<const uint8_t> bytes) {
  Reader r(bytes);
  uint32_t magic = 0, version = 0;
  if (!r.Get(&magic) || magic != kMagic) {
    return InvalidArgument("KV transfer record: not a radixlm KV record (bad magic)");
  }
  if (!r.Get(&version) || version < kFirstVersion || version > kVersion) {
    return InvalidArgument("KV transfer record: version " + std::to_string(version) +
                           ", expected " + std::to_string(kFirstVersion) + " to " +
                           std::to_string(kVersion));
  }
  KvTransferRecord record;
  const auto truncated = [](const char* field) {
    return InvalidArgument(std::string("KV transfer record: truncated or oversized ") + field);
  };
  uint64_t n = 0;
  if (!r.Get(&record.room)) return truncated("room");
  if (!r.Get(&n) || n > r.remaining()) return truncated("error");
  record.error.resize(n);
  if (!r.GetBytes(record.error.data(), n)) return truncated("error");
  if (!r.Get(&n) || n >= kMaxCount || n * sizeof(int32_t) > r.remaining()) {
    return truncated("prompt_ids");
  }
  record.prompt_ids.resize(n);
  if (!r.GetBytes(record.prompt_ids.data(), n * sizeof(int32_t))) return truncated("prompt_ids");
  if (!r.Get(&record.row_elems) || !r.Get(&record.dtype)) {
    return truncated("header");
  }
  if (KvValueBytes(record.dtype) == 0) {
    return InvalidArgument("KV transfer record: unknown KV dtype " + std::to_string(record.dtype));
  }
  if (version >= 2) {
    if (!r.Get(&record.lora_identity)) return truncated("lora_identity");
    if (!r.Get(&n) || n > r.remaining()) return truncated("lora_name");
    record.lora_name.resize(n);
    if (!r.GetBytes(record.lora_name.data(), n)) return truncated("lora_name");
  }
  if (!r.Get(&n) || n >= kMaxCount || n * sizeof(uint32_t) > r.remaining()) {
    return truncated("rows_from");
  }
  record.rows_from.resize(n);
  if (!r.GetBytes(record.rows_from.data(), n * sizeof(uint32_t))) return truncated("rows_from");
  if (!r.Get(&n) || n > r.remaining()) return truncated("kv");
  record.kv.resize(n);
  if (!r.GetBytes(record.kv.data(), n)) return truncated("kv");
  if (version >= 3) {
    if (!r.Get(&record.state_layers) || !r.Get(&record.state_conv_floats) ||
        !r.Get(&record.state_delta_floats)) {
      return truncated("state shape");
    }
    if (record.state_conv_floats >= kMaxCount || record.state_delta_floats >= kMaxCount) {
      return InvalidArgument("KV transfer record: a linear-layer state of " +
                             std::to_string(record.state_conv_floats) + " + " +
                             std::to_string(record.state_delta_floats) + " values per layer");
    }
    if (!r.Get(&n) || n > r.remaining()) return truncated("state");
    record.state.resize(n);
    if (!r.GetBytes(record.state.data(), n)) return truncated("state");
  }
  if (r.remaining() != 0) return InvalidArgument("KV transfer record: trailing bytes");
  if (record.error.empty() && record.kv.size() > record.MaxKvBytes()) {
    return InvalidArgument("KV transfer record: " + std::to_string(record.kv.size()) +
                           " KV bytes for a layout of at most " +
                           std::to_string(record.MaxKvBytes()));
  }
  if (record.error.empty() && record.state.size() != record.ExpectedStateBytes()) {
    return InvalidArgument("KV transfer record: " + std::to_string(record.state.size()) +
                           " bytes of linear-layer state for a shape that needs " +
                           std::to_string(record.ExpectedStateBytes()));
  }
  return record;
}

}  // namespace radixlm::disagg
