#include "engine/tokenizer_codec.h"

namespace radixlm {
namespace {

class StreamingDecoder : public TokenTextDecoder {
 public:
  StreamingDecoder(const tokenizer::Tokenizer& tok, bool skip_special)
      : detok_(tok, skip_special) {}
  std::string Append(int32_t token) override { return detok_.Feed(token); }
  std::string Flush() override { return detok_.Flush(); }

 private:
  tokenizer::StreamingDetokenizer detok_;
};

}  // namespace

StatusOr<std::vector<int32_t>> TokenizerCodec::Encode(std::string_view text) const {
  return tokenizer_->Encode(text, /*add_special=*/true, /*parse_special=*/true);
}

StatusOr<std::vector<int32_t>> TokenizerCodec::EncodeContinuation(std::string_view text) const {
  return tokenizer_->EncodeContinuation(text);
}

std::unique_ptr<TokenTextDecoder> TokenizerCodec::NewDecoder(const SamplingParams& params) const {
  return std::make_unique<StreamingDecoder>(*tokenizer_, params.skip_special_tokens);
}

std::string TokenizerCodec::TokenText(int32_t token) const {
  return std::string(tokenizer_->DecodePiece(token, /*first=*/false, /*skip_special=*/false));
}

}  // namespace radixlm
