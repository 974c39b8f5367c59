#include "tokenizer/tokenizer_codec.h"

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

StatusOr<std::vector<int32_t>> TokenizerCodec::EncodeVerbatim(std::string_view text) const {
  return tokenizer_->Encode(text, /*add_special=*/false, /*parse_special=*/true);
}

StatusOr<std::vector<int32_t>> TokenizerCodec::EncodeContinuation(std::string_view text) const {
  return tokenizer_->EncodeContinuation(text);
}

std::unique_ptr<TokenTextDecoder> TokenizerCodec::NewDecoder(bool skip_special_tokens) const {
  return std::make_unique<StreamingDecoder>(*tokenizer_, skip_special_tokens);
}

std::string TokenizerCodec::TokenText(int32_t token) const {
  return std::string(tokenizer_->DecodePiece(token, /*first=*/false, /*skip_special=*/false));
}

std::optional<int32_t> TokenizerCodec::TokenWithText(std::string_view text) const {
  for (int32_t id = 0; id < tokenizer_->vocab_size(); ++id) {
    if (tokenizer_->TokenPiece(id) == text) return id;
  }
  return std::nullopt;
}

std::string TokenizerCodec::TokenBytes(int32_t token) const {
  // As grammar::TokenVocab::FromTokenizer: control and unknown tokens add no output text.
  if (token < 0 || token >= tokenizer_->vocab_size() || tokenizer_->IsSpecial(token)) return "";
  return std::string(tokenizer_->TokenPiece(token));
}

std::string TokenizerCodec::bos_text() const {
  return tokenizer_->bos_id() >= 0 ? tokenizer_->TokenText(tokenizer_->bos_id()) : "";
}

std::string TokenizerCodec::eos_text() const {
  return tokenizer_->eos_id() >= 0 ? tokenizer_->TokenText(tokenizer_->eos_id()) : "";
}

}  // namespace radixlm
