// Unigram (SentencePiece's unigram language model) segmentation as Hugging Face's `tokenizers`
// runs a tokenizer.json "Unigram" model (models/unigram/model.rs, encode_optimized): the
// best-scoring split of a piece into vocabulary tokens by Viterbi over its UTF-8 characters,
// every token found at each character as a prefix of the rest; a character that no one-character
// token covers becomes the unknown token with score min(score) - 10; adjacent unknowns are fused
// into one (fuse_unk, always on for tokenizer.json models). A fused or unknown string that is
// not a token becomes its bytes' <0xXX> tokens when byte_fallback is on and all of them exist,
// else the unknown id. Ties go to the path found first (the earlier start). Encode is const and
// thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/token_index.h"

namespace radixlm::tokenizer {

class UnigramEncoder {
 public:
  struct Options {
    int32_t unk_id = -1;  // -1: none (an uncovered character is then dropped)
    bool byte_fallback = false;
    int32_t n_pieces = 0;  // ids [0, n_pieces) are the model's pieces; others are never used
  };
  // `index` and `scores` (by id, at least n_pieces) must outlive the encoder; `tokens` is the
  // vocabulary `index` was built over. min(score) is over the model's pieces.
  UnigramEncoder(const TokenIndex* index, const std::vector<std::string>* tokens,
                 const std::vector<double>* scores, Options options);

  // `piece` is valid UTF-8, already normalised and pre-tokenised.
  void Encode(std::string_view piece, std::vector<int32_t>* out) const;

 private:
  // The model piece `text` is, or -1.
  int32_t Lookup(std::string_view text) const {
    const int32_t id = index_->Find(text);
    return id < options_.n_pieces ? id : -1;
  }

  const TokenIndex* index_;
  const std::vector<double>* scores_;  // [n_pieces]
  Options options_;
  double unk_score_ = 0.0;
  size_t max_token_bytes_ = 0;
  int32_t byte_tokens_[256];
};

}  // namespace radixlm::tokenizer
