// FakeTokenTextCodec: a tiny fixed vocabulary for tests of the scheduler, engine and server.
//
// 64 tokens: 0 <pad>, 1 <eos> (the EOG id), 2 <bos> (special); 3..28 'a'..'z'; 29 ' ';
// 30 '\n'; 31..40 '0'..'9'; 41 '.'; 42 ','; 43 "ab"; 44 "the"; 45 "ing"; 46 and 47 the two
// bytes of "é" (so a character can span tokens); 48..63 'A'..'P'. Encode maps each byte of the
// text to its single-character token (after a BOS) and rejects other bytes, except that "é"
// becomes tokens 46 47. Decoding is UTF-8 safe: an incomplete character is held back.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/text_codec.h"

namespace radixlm {

class FakeTokenTextCodec : public TokenTextCodec {
 public:
  static constexpr int32_t kVocabSize = 64;
  static constexpr int32_t kPad = 0;
  static constexpr int32_t kEos = 1;
  static constexpr int32_t kBos = 2;

  StatusOr<std::vector<int32_t>> Encode(std::string_view text) const override;
  std::unique_ptr<TokenTextDecoder> NewDecoder(bool skip_special_tokens) const override;
  std::vector<int32_t> eog_token_ids() const override { return {kEos}; }
  std::string TokenText(int32_t token) const override;
  bool IsControlToken(int32_t token) const override { return IsSpecial(token); }
  // The lowest id whose TokenText is `text` (as the real codec scans its vocabulary).
  std::optional<int32_t> TokenWithText(std::string_view text) const override {
    for (int32_t t = 0; t < kVocabSize; ++t) {
      if (TokenText(t) == text) return t;
    }
    return std::nullopt;
  }
  // Greedy longest match over the non-special tokens (so "ab", "the", "ing" do fuse here,
  // unlike in Encode): lets tests see jump-forward retokenization merge across a boundary.
  StatusOr<std::vector<int32_t>> EncodeContinuation(std::string_view text) const override;

  // Concatenated text of tokens (special tokens skipped), for test expectations.
  std::string Decode(const std::vector<int32_t>& tokens) const;
  static bool IsSpecial(int32_t token) { return token >= 0 && token <= 2; }
};

}  // namespace radixlm
