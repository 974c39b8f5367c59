// SPM (SentencePiece BPE, tokenizer.ggml.model = "llama") encoding of one raw text fragment,
// as llama.cpp's llm_tokenizer_spm_session: start from UTF-8 characters, repeatedly merge the
// adjacent pair whose concatenation is the vocabulary token with the highest score (ties: the
// leftmost pair), and emit each final symbol as its token or, failing that, as byte tokens
// (<0xXX>). Stateless between calls; Encode is const and thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/token_index.h"

namespace radixlm::tokenizer {

class SpmEncoder {
 public:
  // `index` and `scores` must outlive the encoder. byte_tokens[b] is the id emitted for byte b
  // when a symbol is not a token (-1: emit nothing).
  SpmEncoder(const TokenIndex* index, const std::vector<float>* scores,
             const std::array<int32_t, 256>& byte_tokens)
      : index_(index), scores_(scores), byte_tokens_(byte_tokens) {}

  // `text` has already had spaces escaped to U+2581 (and the prefix space added if any).
  void Encode(std::string_view text, std::vector<int32_t>* out) const;

 private:
  const TokenIndex* index_;
  const std::vector<float>* scores_;
  std::array<int32_t, 256> byte_tokens_;
};

}  // namespace radixlm::tokenizer
