#include "grammar/token_vocab.h"

#include <algorithm>

#include "tokenizer/tokenizer.h"

namespace radixlm::grammar {

std::shared_ptr<const TokenVocab> TokenVocab::Create(std::vector<std::string> token_bytes,
                                                     std::vector<int32_t> eos_ids) {
  std::shared_ptr<TokenVocab> vocab(new TokenVocab());
  for (int32_t id : eos_ids) {
    if (id >= 0 && id < static_cast<int32_t>(token_bytes.size())) token_bytes[id].clear();
  }
  std::sort(eos_ids.begin(), eos_ids.end());
  eos_ids.erase(std::unique(eos_ids.begin(), eos_ids.end()), eos_ids.end());
  vocab->token_bytes_ = std::move(token_bytes);
  vocab->eos_ids_ = std::move(eos_ids);
  const auto& bytes = vocab->token_bytes_;
  for (int32_t id = 0; id < vocab->size(); ++id) {
    if (!bytes[id].empty()) vocab->sorted_ids_.push_back(id);
    vocab->max_token_bytes_ = std::max(vocab->max_token_bytes_, bytes[id].size());
  }
  std::sort(vocab->sorted_ids_.begin(), vocab->sorted_ids_.end(), [&](int32_t a, int32_t b) {
    return bytes[a] < bytes[b] || (bytes[a] == bytes[b] && a < b);
  });
  vocab->lcp_.resize(vocab->sorted_ids_.size(), 0);
  for (size_t i = 1; i < vocab->sorted_ids_.size(); ++i) {
    const std::string& a = bytes[vocab->sorted_ids_[i - 1]];
    const std::string& b = bytes[vocab->sorted_ids_[i]];
    const size_t n = std::min(a.size(), b.size());
    size_t k = 0;
    while (k < n && a[k] == b[k]) ++k;
    vocab->lcp_[i] = static_cast<int32_t>(k);
  }
  return vocab;
}

std::shared_ptr<const TokenVocab> TokenVocab::FromTokenizer(const tokenizer::Tokenizer& tokenizer,
                                                            std::vector<int32_t> eos_ids) {
  std::vector<std::string> bytes(tokenizer.vocab_size());
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    if (tokenizer.IsSpecial(id)) continue;  // control / unknown: no output text
    bytes[id] = std::string(tokenizer.TokenPiece(id));
  }
  return Create(std::move(bytes), std::move(eos_ids));
}

bool TokenVocab::IsEos(int32_t id) const {
  return std::binary_search(eos_ids_.begin(), eos_ids_.end(), id);
}

}  // namespace radixlm::grammar
