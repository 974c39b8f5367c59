// TokenIndex: text -> token id over a vocabulary that outlives it, as an open-addressing hash
// table of (id, hash tag) slots; keys are compared against the vocabulary's own strings only
// when the tags agree. Built once in O(vocab); Find is O(length of the text). Immutable after
// Build, so safe to share between threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace radixlm::tokenizer {

class TokenIndex {
 public:
  // Indexes `texts` (which must outlive this index and not change). With duplicate texts the
  // lowest id wins; Build reports the first duplicate's later id in *duplicate_id (else -1).
  void Build(const std::vector<std::string>* texts, int32_t* duplicate_id = nullptr);

  // The id whose text equals `text`, or -1.
  int32_t Find(std::string_view text) const;

  static uint64_t Hash(std::string_view text);

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  // Slot: hash tag (high 32 bits of the hash) << 32 | id; kEmpty if free. Power-of-two size.
  static uint64_t Slot(uint64_t hash, int32_t id) {
    return (hash & 0xFFFFFFFF00000000ULL) | static_cast<uint32_t>(id);
  }

  const std::vector<std::string>* texts_ = nullptr;
  std::vector<uint64_t> slots_;
  uint64_t mask_ = 0;
};

}  // namespace radixlm::tokenizer
