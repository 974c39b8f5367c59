// The disk KV block: one page-aligned run of tokens' KV (every layer), as the disk tier
// (disk_store.h) writes it to one file.
//
// A block is keyed by (model identity, hash of the whole token prefix up to the block's end):
// the same tokens after a different prefix have different KV, so the key covers the prefix,
// and the tokens of the block itself are stored too and compared on load. KV computed under a
// LoRA adapter differs from the base model's for the same tokens: its prefix hash is seeded
// with the adapter's content identity (PrefixHasher's domain; 0, the base model, is the
// unseeded hash), so a block is found only for the adapter that computed it.
//
// File layout (little-endian, fixed 48-byte header):
//   [0, 8)    magic "RLXKVBLK"
//   [8, 12)   u32 format version (kKvBlockVersion)
//   [12, 16)  u32 n_tokens
//   [16, 24)  u64 model identity
//   [24, 40)  u64 prefix hash hi, u64 prefix hash lo (BlockKey)
//   [40, 48)  u64 payload size in bytes
//   then n_tokens i32 token ids, the payload, and a u32 CRC-32C of every byte before it.
// Decoding checks all of it: a truncated, corrupt or foreign file is an error, never a payload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "util/status.h"

namespace radixlm {

inline constexpr uint32_t kKvBlockVersion = 1;
inline constexpr size_t kKvBlockHeaderBytes = 48;

// 128-bit hash of a token prefix (two independent 64-bit lanes).
struct BlockKey {
  uint64_t hi = 0;
  uint64_t lo = 0;
  bool operator==(const BlockKey&) const = default;
  std::string Hex() const;  // 32 lowercase hex digits
};

struct BlockKeyHash {
  size_t operator()(const BlockKey& k) const { return static_cast<size_t>(k.hi ^ (k.lo * 31)); }
};

// Rolling hash of a token sequence: Update(a); Update(b) equals Update(a + b), so the key at
// each block end of a prefix costs one pass over its tokens. `domain` seeds it: hashers of
// different domains give unrelated keys for the same tokens (a LoRA adapter's identity; 0,
// the base model, leaves the hash as it was before domains existed, so stored blocks stay
// valid).
class PrefixHasher {
 public:
  explicit PrefixHasher(uint64_t domain = 0);
  void Update(std::span<const int32_t> tokens);
  BlockKey key() const { return {hi_, lo_}; }

 private:
  uint64_t hi_ = 0x6a09e667f3bcc908ull;
  uint64_t lo_ = 0xbb67ae8584caa73bull;
};

// The key of a hybrid model's state snapshot after the prefix whose key is `prefix` (the
// linear layers' state there, stored in a file of its own beside the prefix's last block,
// holding that block's tokens): unrelated to every prefix key, so the two files never collide.
BlockKey StateSnapshotKey(const BlockKey& prefix);

// What the header says (DecodeKvBlockHeader).
struct KvBlockHeader {
  uint32_t version = 0;
  uint32_t n_tokens = 0;
  uint64_t model_id = 0;
  BlockKey key;
  uint64_t payload_size = 0;
  // Bytes of the whole file this header describes.
  uint64_t file_size() const {
    return kKvBlockHeaderBytes + 4ull * n_tokens + payload_size + sizeof(uint32_t);
  }
};

// The file bytes of one block.
std::vector<uint8_t> EncodeKvBlock(uint64_t model_id, const BlockKey& key,
                                   std::span<const int32_t> tokens,
                                   std::span<const uint8_t> payload);

// Parses the fixed header (the first kKvBlockHeaderBytes of a file); InvalidArgument when the
// bytes are too few, the magic or version is wrong.
StatusOr<KvBlockHeader> DecodeKvBlockHeader(std::span<const uint8_t> head);

// Checks a whole file against what the caller expects (model, key, the block's tokens and
// payload size) and returns its payload (a view into `file`). InvalidArgument naming the
// first thing that is wrong: length, magic, version, model, key, tokens, size or checksum.
StatusOr<std::span<const uint8_t>> DecodeKvBlock(std::span<const uint8_t> file, uint64_t model_id,
                                                 const BlockKey& key,
                                                 std::span<const int32_t> tokens,
                                                 uint64_t payload_size);

}  // namespace radixlm
