// TokenVocab: the vocabulary as the grammar code sees it — token id → output bytes — plus a
// sorted view that lets mask computation walk the vocabulary as a byte trie.
//
// Tokens with no bytes (control/special tokens, unknown) can never be produced under a grammar;
// the end-of-sequence ids are handled separately (allowed only where the grammar may end), so
// their bytes are cleared here whatever the tokenizer renders for them.
//
// Immutable after Create; shared by every compiled grammar of one model (shared_ptr).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace radixlm::tokenizer {
class Tokenizer;
}

namespace radixlm::grammar {

class TokenVocab {
 public:
  // token_bytes[id]: what token `id` appends to the output ("" = never allowed).
  static std::shared_ptr<const TokenVocab> Create(std::vector<std::string> token_bytes,
                                                  std::vector<int32_t> eos_ids);
  // Bytes from Tokenizer::TokenPiece (SPM "▁" → space, <0xXX> → the byte); control and
  // unknown tokens get none. eos_ids: the ids that end generation (e.g. tokenizer.eog_ids()).
  static std::shared_ptr<const TokenVocab> FromTokenizer(const tokenizer::Tokenizer& tokenizer,
                                                         std::vector<int32_t> eos_ids);

  int32_t size() const { return static_cast<int32_t>(token_bytes_.size()); }
  const std::string& bytes(int32_t id) const { return token_bytes_[id]; }
  const std::vector<int32_t>& eos_ids() const { return eos_ids_; }
  bool IsEos(int32_t id) const;

  // The trie view: ids of the tokens with bytes, sorted by their bytes, and lcp[i] = length of
  // the common prefix of sorted_ids[i-1] and sorted_ids[i] (lcp[0] = 0). Walking this order
  // keeps a stack of automaton states per byte depth and reuses the shared prefix, and a
  // rejected prefix skips all following tokens that share it.
  const std::vector<int32_t>& sorted_ids() const { return sorted_ids_; }
  const std::vector<int32_t>& lcp() const { return lcp_; }
  size_t max_token_bytes() const { return max_token_bytes_; }

 private:
  TokenVocab() = default;

  std::vector<std::string> token_bytes_;
  std::vector<int32_t> eos_ids_;
  std::vector<int32_t> sorted_ids_;
  std::vector<int32_t> lcp_;
  size_t max_token_bytes_ = 0;
};

}  // namespace radixlm::grammar
