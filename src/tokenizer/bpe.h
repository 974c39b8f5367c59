// Byte-level BPE (tokenizer.ggml.model = "gpt2") encoding of one pre-tokenized word, as
// llama.cpp's llm_tokenizer_bpe_session: map the word's bytes through the GPT-2 byte->unicode
// table, start from one symbol per byte, repeatedly apply the adjacent merge of lowest rank
// (ties: leftmost), and emit each final symbol as its token (or, if it is none, its single-byte
// tokens when the vocabulary has them). Immutable after construction; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/token_index.h"

namespace radixlm::tokenizer {

class BpeEncoder {
 public:
  // `index` must outlive the encoder. merges[i] is "left right" with rank i (the first of
  // duplicate pairs wins). With ignore_merges, a word that is itself a token is emitted whole.
  BpeEncoder(const TokenIndex* index, const std::vector<std::string>& merges, bool ignore_merges);

  // Appends the ids of each word (raw bytes, one pre-tokenizer piece each) to *out.
  void EncodeWords(const std::vector<std::string_view>& words, std::vector<int32_t>* out) const;

  size_t num_merges() const { return merge_count_; }

 private:
  struct Merge {
    int32_t rank;
    int32_t result;  // token id of left+right, or -1
  };
  static uint64_t PairKey(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }
  struct Scratch;
  void EncodeWord(std::string_view word, Scratch* scratch, std::vector<int32_t>* out) const;
  // Rank of merging the symbols with these texts/ids, or -1.
  int32_t FindRank(std::string_view left_text, int32_t left_id, std::string_view right_text,
                   int32_t right_id, int32_t* result) const;

  const TokenIndex* index_;
  bool ignore_merges_;
  size_t merge_count_ = 0;
  std::array<int32_t, 256> byte_symbol_ids_{};       // token of each byte's unicode form, or -1
  std::unordered_map<uint64_t, Merge> pair_merges_;  // both halves are tokens
  // Merges with a half that is not a token (rare; malformed vocabularies): "left right".
  std::unordered_map<std::string, int32_t> text_merges_;
};

}  // namespace radixlm::tokenizer
