#include "tokenizer/token_index.h"

#include <cstring>

namespace radixlm::tokenizer {

uint64_t TokenIndex::Hash(std::string_view text) {
  // FNV-1a over 8-byte words, then a final avalanche: fast on short keys, well spread.
  uint64_t h = 0xcbf29ce484222325ULL ^ text.size();
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, text.data() + i, 8);
    h = (h ^ word) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  for (; i < text.size(); ++i) h = (h ^ static_cast<uint8_t>(text[i])) * 0x100000001b3ULL;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

void TokenIndex::Build(const std::vector<std::string>* texts, int32_t* duplicate_id) {
  texts_ = texts;
  if (duplicate_id != nullptr) *duplicate_id = -1;
  size_t capacity = 16;
  while (capacity < texts->size() * 2) capacity <<= 1;
  slots_.assign(capacity, kEmpty);
  mask_ = capacity - 1;
  for (size_t id = 0; id < texts->size(); ++id) {
    const std::string& text = (*texts)[id];
    const uint64_t hash = Hash(text);
    const uint64_t tag = hash >> 32;
    uint64_t slot = hash & mask_;
    bool duplicate = false;
    for (; slots_[slot] != kEmpty; slot = (slot + 1) & mask_) {
      if ((slots_[slot] >> 32) == tag && (*texts)[slots_[slot] & 0xFFFFFFFF] == text) {
        duplicate = true;
        break;
      }
    }
    if (duplicate) {
      if (duplicate_id != nullptr && *duplicate_id < 0) *duplicate_id = static_cast<int32_t>(id);
      continue;
    }
    slots_[slot] = Slot(hash, static_cast<int32_t>(id));
  }
}

int32_t TokenIndex::Find(std::string_view text) const {
  if (slots_.empty()) return -1;
  const uint64_t hash = Hash(text);
  const uint64_t tag = hash >> 32;
  for (uint64_t slot = hash & mask_; slots_[slot] != kEmpty; slot = (slot + 1) & mask_) {
    const uint64_t entry = slots_[slot];
    if ((entry >> 32) != tag) continue;
    const auto id = static_cast<int32_t>(entry & 0xFFFFFFFF);
    if ((*texts_)[id] == text) return id;
  }
  return -1;
}

}  // namespace radixlm::tokenizer
