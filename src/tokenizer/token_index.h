// TokenIndex: text -> token id over a vocabulary that outlives it, as an open-addressing hash
// table of ids (4 bytes a slot, keys compared against the vocabulary's own strings). Built once
// in O(vocab); Find is O(length of the text). Immutable after Build, so safe to share.
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
  const std::vector<std::string>* texts_ = nullptr;
  std::vector<int32_t> slots_;  // -1 = empty; size is a power of two
  uint64_t mask_ = 0;
};

}  // namespace radixlm::tokenizer
