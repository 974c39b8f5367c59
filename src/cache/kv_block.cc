#include "cache/kv_block.h"

#include <cstdio>
#include <cstring>

#include "cache/crc32c.h"

namespace radixlm {
namespace {

constexpr char kMagic[8] = {'R', 'L', 'X', 'K', 'V', 'B', 'L', 'K'};

template <typename T>
void Put(std::vector<uint8_t>& out, size_t at, T value) {
  std::memcpy(out.data() + at, &value, sizeof(T));
}

template <typename T>
T Get(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

uint64_t Mix(uint64_t x) {  // splitmix64 finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

std::string BlockKey::Hex() const {
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(hi),
                static_cast<unsigned long long>(lo));
  return buf;
}

PrefixHasher::PrefixHasher(uint64_t domain) {
  if (domain == 0) return;
  hi_ = Mix(hi_ ^ Mix(domain));
  lo_ = Mix((lo_ + domain) * 0xff51afd7ed558ccdull + 0x94d049bb133111ebull);
}

void PrefixHasher::Update(std::span<const int32_t> tokens) {
  for (const int32_t t : tokens) {
    const auto v = static_cast<uint64_t>(static_cast<uint32_t>(t));
    hi_ = Mix(hi_ ^ (v + 0x9e3779b97f4a7c15ull));
    lo_ = Mix((lo_ + v) * 0xff51afd7ed558ccdull + 0xc4ceb9fe1a85ec53ull);
  }
}

BlockKey StateSnapshotKey(const BlockKey& prefix) {
  // A hasher of its own domain over the prefix key's four 32-bit words.
  PrefixHasher hasher(0x5354415445ull);  // "STATE"
  const int32_t words[4] = {static_cast<int32_t>(prefix.hi >> 32), static_cast<int32_t>(prefix.hi),
                            static_cast<int32_t>(prefix.lo >> 32), static_cast<int32_t>(prefix.lo)};
  hasher.Update(words);
  return hasher.key();
}

std::vector<uint8_t> EncodeKvBlock(uint64_t model_id, const BlockKey& key,
                                   std::span<const int32_t> tokens,
                                   std::span<const uint8_t> payload) {
  const size_t token_bytes = tokens.size() * sizeof(int32_t);
  std::vector<uint8_t> out(kKvBlockHeaderBytes + token_bytes + payload.size() + sizeof(uint32_t));
  std::memcpy(out.data(), kMagic, sizeof(kMagic));
  Put<uint32_t>(out, 8, kKvBlockVersion);
  Put<uint32_t>(out, 12, static_cast<uint32_t>(tokens.size()));
  Put<uint64_t>(out, 16, model_id);
  Put<uint64_t>(out, 24, key.hi);
  Put<uint64_t>(out, 32, key.lo);
  Put<uint64_t>(out, 40, payload.size());
  if (token_bytes > 0) std::memcpy(out.data() + kKvBlockHeaderBytes, tokens.data(), token_bytes);
  if (!payload.empty()) {
    std::memcpy(out.data() + kKvBlockHeaderBytes + token_bytes, payload.data(), payload.size());
  }
  const size_t body = out.size() - sizeof(uint32_t);
  Put<uint32_t>(out, body, Crc32c(out.data(), body));
  return out;
}

StatusOr<KvBlockHeader> DecodeKvBlockHeader(std::span<const uint8_t> head) {
  if (head.size() < kKvBlockHeaderBytes) {
    return InvalidArgument("KV block truncated: " + std::to_string(head.size()) +
                           " bytes, less than its header");
  }
  if (std::memcmp(head.data(), kMagic, sizeof(kMagic)) != 0) {
    return InvalidArgument("not a KV block (bad magic)");
  }
  KvBlockHeader h;
  h.version = Get<uint32_t>(head.data() + 8);
  if (h.version != kKvBlockVersion) {
    return InvalidArgument("KV block format version " + std::to_string(h.version) + ", expected " +
                           std::to_string(kKvBlockVersion));
  }
  h.n_tokens = Get<uint32_t>(head.data() + 12);
  h.model_id = Get<uint64_t>(head.data() + 16);
  h.key.hi = Get<uint64_t>(head.data() + 24);
  h.key.lo = Get<uint64_t>(head.data() + 32);
  h.payload_size = Get<uint64_t>(head.data() + 40);
  return h;
}

StatusOr<std::span<const uint8_t>> DecodeKvBlock(std::span<const uint8_t> file, uint64_t model_id,
                                                 const BlockKey& key,
                                                 std::span<const int32_t> tokens,
                                                 uint64_t payload_size) {
  RADIXLM_ASSIGN_OR_RETURN(const KvBlockHeader h, DecodeKvBlockHeader(file));
  if (h.model_id != model_id) return InvalidArgument("KV block of another model");
  if (h.key != key) return InvalidArgument("KV block of another prefix");
  if (h.n_tokens != tokens.size()) return InvalidArgument("KV block of another length");
  if (h.payload_size != payload_size) return InvalidArgument("KV block of another KV layout");
  if (file.size() != h.file_size()) {
    return InvalidArgument("KV block truncated or padded: " + std::to_string(file.size()) +
                           " bytes, expected " + std::to_string(h.file_size()));
  }
  const size_t body = file.size() - sizeof(uint32_t);
  if (Crc32c(file.data(), body) != Get<uint32_t>(file.data() + body)) {
    return InvalidArgument("KV block checksum mismatch (corrupt file)");
  }
  if (std::memcmp(file.data() + kKvBlockHeaderBytes, tokens.data(),
                  tokens.size() * sizeof(int32_t)) != 0) {
    return InvalidArgument("KV block of other tokens (prefix hash collision)");
  }
  return file.subspan(kKvBlockHeaderBytes + tokens.size() * sizeof(int32_t), h.payload_size);
}

}  // namespace radixlm
