#include "gguf/gguf_writer.h"

#include <bit>
#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

namespace radixlm::gguf {

namespace {

constexpr uint64_t kDefaultAlignment = 32;
constexpr std::string_view kAlignmentKey = "general.alignment";

void PutLe(std::vector<uint8_t>& out, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void PutString(std::vector<uint8_t>& out, std::string_view s) {
  PutLe(out, s.size(), 8);
  out.insert(out.end(), s.begin(), s.end());
}

void PadTo(std::vector<uint8_t>& out, uint64_t alignment) {
  while (out.size() % alignment != 0) out.push_back(0);
}

// Writes the payload of `v` (not its type id).
void PutValue(std::vector<uint8_t>& out, const Value& v) {
  switch (v.type) {
    case ValueType::kUint8:
    case ValueType::kInt8:
      PutLe(out, static_cast<uint64_t>(v.AsInt()), 1);
      return;
    case ValueType::kUint16:
    case ValueType::kInt16:
      PutLe(out, static_cast<uint64_t>(v.AsInt()), 2);
      return;
    case ValueType::kUint32:
    case ValueType::kInt32:
      PutLe(out, static_cast<uint64_t>(v.AsInt()), 4);
      return;
    case ValueType::kUint64:
      PutLe(out, std::get<uint64_t>(v.data), 8);
      return;
    case ValueType::kInt64:
      PutLe(out, static_cast<uint64_t>(v.AsInt()), 8);
      return;
    case ValueType::kFloat32:
      PutLe(out, std::bit_cast<uint32_t>(static_cast<float>(v.AsFloat())), 4);
      return;
    case ValueType::kFloat64:
      PutLe(out, std::bit_cast<uint64_t>(v.AsFloat()), 8);
      return;
    case ValueType::kBool:
      PutLe(out, v.AsBool() ? 1 : 0, 1);
      return;
    case ValueType::kString:
      PutString(out, v.AsString());
      return;
    case ValueType::kArray: {
      const Array& a = v.AsArray();
      PutLe(out, static_cast<uint32_t>(a.element_type), 4);
      PutLe(out, a.items.size(), 8);
      for (const Value& item : a.items) {
        assert(item.type == a.element_type && "array item type differs from element_type");
        PutValue(out, item);
      }
      return;
    }
  }
}

}  // namespace

GgufWriter::GgufWriter(uint32_t version, uint64_t alignment)
    : version_(version), alignment_(alignment) {
  assert(alignment != 0 && (alignment & (alignment - 1)) == 0);
}

void GgufWriter::AddMetadata(std::string key, Value value) {
  metadata_.emplace_back(std::move(key), std::move(value));
}

Status GgufWriter::AddTensor(std::string name, GgmlType type, std::vector<int64_t> shape,
                             std::vector<uint8_t> data) {
  const std::string who = "tensor '" + name + "'";
  std::optional<GgmlTypeTraits> traits = GetTypeTraits(type);
  if (!traits) {
    return InvalidArgument(who + ": unknown ggml type " +
                           std::to_string(static_cast<uint32_t>(type)));
  }
  if (shape.size() > 4) return InvalidArgument(who + ": more than 4 dimensions");
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (d <= 0) return InvalidArgument(who + ": dimension " + std::to_string(d) + " <= 0");
    if (__builtin_mul_overflow(elements, d, &elements)) {
      return InvalidArgument(who + ": element count overflows int64");
    }
  }
  const int64_t row = shape.empty() ? 1 : shape[0];
  const int64_t row_bytes = RowSizeBytes(type, row);
  if (row_bytes < 0) {
    return InvalidArgument(who + ": row size " + std::to_string(row) +
                           " is not a multiple of the " + std::string(traits->name) +
                           " block size " + std::to_string(traits->block_size));
  }
  int64_t expected = 0;
  if (__builtin_mul_overflow(row_bytes, elements / row, &expected) ||
      static_cast<uint64_t>(expected) != data.size()) {
    return InvalidArgument(who + ": data has " + std::to_string(data.size()) + " bytes, expected " +
                           std::to_string(expected));
  }
  for (const PendingTensor& t : tensors_) {
    if (t.name == name) return InvalidArgument("duplicate tensor name '" + name + "'");
  }
  tensors_.push_back(PendingTensor{std::move(name), type, std::move(shape), std::move(data)});
  return Status::Ok();
}

Status GgufWriter::AddF32Tensor(std::string name, std::vector<int64_t> shape,
                                const std::vector<float>& v) {
  std::vector<uint8_t> bytes;
  bytes.reserve(v.size() * 4);
  for (float f : v) PutLe(bytes, std::bit_cast<uint32_t>(f), 4);
  return AddTensor(std::move(name), GgmlType::kF32, std::move(shape), std::move(bytes));
}

std::vector<uint8_t> GgufWriter::Serialize() const { return Serialize(nullptr); }

std::vector<uint8_t> GgufWriter::Serialize(GgufLayout* layout) const {
  GgufLayout local;
  GgufLayout& lay = layout != nullptr ? *layout : local;
  lay = GgufLayout{};

  bool has_alignment_key = false;
  for (const auto& kv : metadata_) has_alignment_key |= kv.first == kAlignmentKey;
  const bool auto_alignment = alignment_ != kDefaultAlignment && !has_alignment_key;

  std::vector<uint8_t> out;
  for (char c : std::string_view("GGUF")) out.push_back(static_cast<uint8_t>(c));
  PutLe(out, version_, 4);
  PutLe(out, tensors_.size(), 8);
  PutLe(out, metadata_.size() + (auto_alignment ? 1 : 0), 8);

  auto put_kv = [&](std::string_view key, const Value& value) {
    GgufLayout::Kv pos;
    pos.key = out.size();
    PutString(out, key);
    pos.value_type = out.size();
    PutLe(out, static_cast<uint32_t>(value.type), 4);
    pos.value = out.size();
    PutValue(out, value);
    lay.kvs.push_back(pos);
  };
  for (const auto& [key, value] : metadata_) put_kv(key, value);
  if (auto_alignment) put_kv(kAlignmentKey, Value::U32(static_cast<uint32_t>(alignment_)));

  uint64_t data_offset = 0;
  for (const PendingTensor& t : tensors_) {
    GgufLayout::Tensor pos;
    pos.name = out.size();
    PutString(out, t.name);
    pos.n_dims = out.size();
    PutLe(out, t.shape.size(), 4);
    pos.dims = out.size();
    for (int64_t d : t.shape) PutLe(out, static_cast<uint64_t>(d), 8);
    pos.type = out.size();
    PutLe(out, static_cast<uint32_t>(t.type), 4);
    pos.offset = out.size();
    PutLe(out, data_offset, 8);
    pos.data_offset = data_offset;
    lay.tensors.push_back(pos);
    data_offset += (t.data.size() + alignment_ - 1) / alignment_ * alignment_;
  }
  PadTo(out, alignment_);
  lay.data_section = out.size();
  out.reserve(out.size() + data_offset);
  for (const PendingTensor& t : tensors_) {
    out.insert(out.end(), t.data.begin(), t.data.end());
    PadTo(out, alignment_);
  }
  return out;
}

Status GgufWriter::WriteToFile(const std::string& path) const {
  const std::vector<uint8_t> bytes = Serialize();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return IoError("cannot create '" + path + "': " + std::strerror(errno));
  const size_t written = std::fwrite(bytes.data(), 1, bytes.size(), f);
  const int write_errno = errno;
  if (std::fclose(f) != 0 || written != bytes.size()) {
    return IoError("cannot write '" + path + "': " + std::strerror(write_errno));
  }
  return Status::Ok();
}

void PatchU32(std::vector<uint8_t>& bytes, size_t pos, uint32_t value) {
  assert(pos + 4 <= bytes.size());
  for (size_t i = 0; i < 4; ++i) bytes[pos + i] = static_cast<uint8_t>(value >> (8 * i));
}

void PatchU64(std::vector<uint8_t>& bytes, size_t pos, uint64_t value) {
  assert(pos + 8 <= bytes.size());
  for (size_t i = 0; i < 8; ++i) bytes[pos + i] = static_cast<uint8_t>(value >> (8 * i));
}

}  // namespace radixlm::gguf
