// TokenizerCodec: the TokenTextCodec of the real tokenizer (SPM / BPE from the GGUF).
//
// Encode adds BOS as the model wants and parses special tokens in the text (as SGLang's HF
// tokenizer does, so chat-formatted prompts work). Decoders are StreamingDetokenizers.
#pragma once

#include <memory>

#include "tokenizer/text_codec.h"
#include "tokenizer/tokenizer.h"

namespace radixlm {

class TokenizerCodec : public TokenTextCodec {
 public:
  explicit TokenizerCodec(std::unique_ptr<tokenizer::Tokenizer> tokenizer)
      : tokenizer_(std::move(tokenizer)) {}

  StatusOr<std::vector<int32_t>> Encode(std::string_view text) const override;
  StatusOr<std::vector<int32_t>> EncodeVerbatim(std::string_view text) const override;
  std::unique_ptr<TokenTextDecoder> NewDecoder(bool skip_special_tokens) const override;
  std::vector<int32_t> eog_token_ids() const override { return tokenizer_->eog_ids(); }
  std::string TokenText(int32_t token) const override;
  bool IsControlToken(int32_t token) const override { return tokenizer_->IsSpecial(token); }
  std::string TokenBytes(int32_t token) const override;
  // Scans the vocabulary's pieces (Tokenizer::TokenPiece), as mtmd's lookup_token does.
  std::optional<int32_t> TokenWithText(std::string_view text) const override;
  std::string bos_text() const override;
  std::string eos_text() const override;
  // Tokenizer::EncodeContinuation: no BOS, no special tokens, no SPM prefix space.
  StatusOr<std::vector<int32_t>> EncodeContinuation(std::string_view text) const override;

 private:
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
};

}  // namespace radixlm
