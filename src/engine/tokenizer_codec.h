// TokenizerCodec: the scheduler's TokenTextCodec over the real tokenizer module.
//
// Encode adds BOS as the model wants and parses special tokens in the text (as SGLang's HF
// tokenizer does, so chat-formatted prompts work). Decoders are StreamingDetokenizers, skipping
// special tokens when the request says so.
#pragma once

#include <memory>

#include "scheduler/token_text.h"
#include "tokenizer/tokenizer.h"

namespace radixlm {

class TokenizerCodec : public TokenTextCodec {
 public:
  explicit TokenizerCodec(std::unique_ptr<tokenizer::Tokenizer> tokenizer)
      : tokenizer_(std::move(tokenizer)) {}

  StatusOr<std::vector<int32_t>> Encode(std::string_view text) const override;
  std::unique_ptr<TokenTextDecoder> NewDecoder(const SamplingParams& params) const override;
  std::vector<int32_t> eog_token_ids() const override { return tokenizer_->eog_ids(); }
  std::string TokenText(int32_t token) const override;
  // Tokenizer::EncodeContinuation: no BOS, no special tokens, no SPM prefix space.
  StatusOr<std::vector<int32_t>> EncodeContinuation(std::string_view text) const override;

  const tokenizer::Tokenizer& tokenizer() const { return *tokenizer_; }

 private:
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
};

}  // namespace radixlm
