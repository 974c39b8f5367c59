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
  slots_.assign(capacity, -1);
  mask_ = capacity - 1;
  for (size_t id = 0; id < texts->size(); ++id) {
    const std::string& text = (*texts)[id];
    uint64_t slot = Hash(text) & mask_;
    bool duplicate = false;
    while (slots_[slot] >= 0) {
      if ((*texts)[slots_[slot]] == text) {
        duplicate = true;
        break;
      }
      slot = (slot + 1) & mask_;
    }
    if (duplicate) {
      if (duplicate_id != nullptr && *duplicate_id < 0) *duplicate_id = static_cast<int32_t>(id);
      continue;
    }
    slots_[slot] = static_cast<int32_t>(id);
  }
}

int32_t TokenIndex::Find(std::string_view text) const {
  if (slots_.empty()) return -1;
  uint64_t slot = Hash(text) & mask_;
  while (true) {
    const int32_t id = slots_[slot];
    if (id < 0) return -1;
    if ((*texts_)[id] == text) return id;
    slot = (slot + 1) & mask_;
  }
}

}  // namespace radixlm::tokenizer
