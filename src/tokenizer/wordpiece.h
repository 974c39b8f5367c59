// WordPiece encoding (tokenizer.ggml.model = "bert"), as llama.cpp's llm_tokenizer_wpm_session.
//
// The GGUF's vocabulary is in "phantom space" form (convert_hf_to_gguf.py): a word-initial
// piece "foo" is stored as "▁foo" (U+2581), a continuation "##oo" as "oo", control tokens as
// they are. Encoding one raw text fragment:
//   1. Split into words, code point by code point: white space ends a word; NUL, U+FFFD,
//      invalid UTF-8 and control characters are dropped; with strip_accents each code point
//      is first replaced by the first code point of its NFD decomposition and marks are
//      dropped; with lowercase each is lowercased (simple mapping); punctuation, ASCII
//      symbols and CJK ideographs are words of their own.
//   2. Each word, prefixed with U+2581, is cut greedily from the left into the longest
//      vocabulary tokens (at most the longest token's bytes each); a word with any part
//      that matches no token becomes one [UNK].
// Immutable after construction; Encode is const and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/token_index.h"

namespace radixlm::tokenizer {

class WordPieceEncoder {
 public:
  struct Options {
    bool lowercase = true;
    bool strip_accents = true;
    int32_t unk_id = -1;
    size_t max_token_bytes = 0;  // the longest token's length in bytes
  };
  // `index` must outlive the encoder.
  WordPieceEncoder(const TokenIndex* index, Options options) : index_(index), options_(options) {}

  // Appends the ids of `text` (no [CLS] / [SEP]; the caller adds those).
  void Encode(std::string_view text, std::vector<int32_t>* out) const;

  // Step 1 alone: the words of `text`, normalised (for tests).
  std::vector<std::string> SplitWords(std::string_view text) const;

 private:
  void EncodeWord(std::string_view word, std::string* scratch, std::vector<int32_t>* out) const;

  const TokenIndex* index_;
  Options options_;
};

}  // namespace radixlm::tokenizer
