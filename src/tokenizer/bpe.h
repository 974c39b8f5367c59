// BPE encoding of one pre-tokenized word, as llama.cpp's llm_tokenizer_bpe_session.
// Byte-level (tokenizer.ggml.model = "gpt2"): map the word's bytes through the GPT-2
// byte->unicode table and start from one symbol per byte. SPM-style ("gemma4"): start from one
// symbol per UTF-8 character of the word as it is. Then repeatedly apply the adjacent merge of
// lowest rank (ties: leftmost), and emit each final symbol as its token; a symbol that is no
// token falls back to its single-byte tokens ("<0xXX>" when SPM-style), skipping bytes the
// vocabulary lacks. Immutable after construction; thread-safe.
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
  struct Options {
    bool ignore_merges = false;  // a word that is itself a token is emitted whole
    // Raw UTF-8 symbols and "<0xXX>" fallback (see above); a word of only newlines that is a
    // token is emitted whole.
    bool spm_style = false;
  };
  // `index` must outlive the encoder. merges[i] is "left right" with rank i (the first of
  // duplicate pairs wins).
  BpeEncoder(const TokenIndex* index, const std::vector<std::string>& merges, Options options);

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
  // The first symbols of `word` (one per byte or per character) into scratch; false when the
  // word was emitted whole instead.
  bool SplitSymbols(std::string_view word, Scratch* scratch, std::vector<int32_t>* out) const;
  // Rank of merging the symbols with these texts/ids, or -1.
  int32_t FindRank(std::string_view left_text, int32_t left_id, std::string_view right_text,
                   int32_t right_id, int32_t* result) const;

  const TokenIndex* index_;
  Options options_;
  size_t merge_count_ = 0;
  std::array<int32_t, 256> byte_symbol_ids_{};       // token of each byte's unicode form, or -1
  std::array<int32_t, 256> byte_fallback_ids_{};     // token a byte falls back to, or -1
  std::unordered_map<uint64_t, Merge> pair_merges_;  // both halves are tokens
  // Merges with a half that is not a token (rare; malformed vocabularies): "left right".
  std::unordered_map<std::string, int32_t> text_merges_;
};

}  // namespace radixlm::tokenizer
