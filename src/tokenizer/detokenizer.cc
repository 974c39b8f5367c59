#include "tokenizer/detokenizer.h"

#include <cstdlib>

#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace radixlm::tokenizer {
namespace {

constexpr std::string_view kEscapedSpace = "\xE2\x96\x81";  // U+2581

void AppendUnescapedSpaces(std::string_view text, std::string* out) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t hit = text.find(kEscapedSpace, pos);
    if (hit == std::string_view::npos) {
      out->append(text.substr(pos));
      break;
    }
    out->append(text.substr(pos, hit - pos));
    out->push_back(' ');
    pos = hit + kEscapedSpace.size();
  }
}

void AppendByteLevelAsBytes(std::string_view text, std::string* out) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    const int byte = UnicodeToByte(DecodeUtf8(text, &pos));
    if (byte >= 0) {
      out->push_back(static_cast<char>(byte));
    } else {
      out->append(text.substr(start, pos - start));
    }
  }
}

// "<0x41>" -> "A" (llama.cpp reads the two hex digits at offset 3).
void AppendByteTokenByte(const std::string& text, std::string* out) {
  if (text.size() < 5) return;
  const std::string hex = text.substr(3, 2);
  out->push_back(static_cast<char>(std::strtol(hex.c_str(), nullptr, 16)));
}

}  // namespace

void TokenPieces::Build(const ResolvedVocab& vocab) {
  data_.clear();
  offsets_.clear();
  offsets_.reserve(vocab.tokens.size() + 1);
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    offsets_.push_back(static_cast<uint32_t>(data_.size()));
    const uint32_t a = vocab.attrs[id];
    const std::string& text = vocab.tokens[id];
    const bool spm_text = vocab.kind == ModelKind::kSpm || vocab.kind == ModelKind::kWpm ||
                          vocab.kind == ModelKind::kUgm || vocab.pre.spm_style;
    if (a & (attr::kControl | attr::kUnknown)) {
      data_.append(text);
    } else if (a & attr::kUserDefined) {
      // Verbatim, but an SPM user-defined token's U+2581 is a space: llama.cpp's converter
      // writes them with spaces already; a Hugging Face tokenizer.json keeps "\u2581\u2581" and
      // its decoder turns it into spaces.
      if (vocab.kind == ModelKind::kSpm || vocab.kind == ModelKind::kUgm) {
        AppendUnescapedSpaces(text, &data_);
      } else {
        data_.append(text);
      }
    } else if (a & attr::kNormal) {
      if (spm_text) {
        AppendUnescapedSpaces(text, &data_);
      } else {
        AppendByteLevelAsBytes(text, &data_);
      }
    } else if (a & attr::kByte) {
      AppendByteTokenByte(text, &data_);
    }
  }
  offsets_.push_back(static_cast<uint32_t>(data_.size()));
  data_.shrink_to_fit();
}

std::string_view Tokenizer::DecodePiece(int32_t id, bool first, bool skip_special) const {
  const uint32_t a = Attributes(id);
  if (id < 0 || id >= vocab_size()) return {};
  if (skip_special && (a & attr::kSkippedWhenSkippingSpecial)) return {};
  std::string_view piece = pieces_.Get(id);
  if (first && vocab_.add_space_prefix && !piece.empty() && piece.front() == ' ') {
    piece.remove_prefix(1);
  }
  return piece;
}

std::string_view Tokenizer::TokenPiece(int32_t id) const {
  return id >= 0 && id < vocab_size() ? pieces_.Get(id) : std::string_view();
}

std::string Tokenizer::Decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string out;
  bool first = true;
  for (int32_t id : ids) {
    out.append(DecodePiece(id, first, skip_special));
    first = first && StillFirstAfter(id, skip_special);
  }
  return out;
}

std::string StreamingDetokenizer::Feed(int32_t id) {
  pending_.append(tokenizer_->DecodePiece(id, first_, skip_special_));
  first_ = first_ && tokenizer_->StillFirstAfter(id, skip_special_);
  const size_t ready = CompleteUtf8PrefixLength(pending_);
  std::string out = pending_.substr(0, ready);
  pending_.erase(0, ready);
  return out;
}

std::string StreamingDetokenizer::Flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

void StreamingDetokenizer::Reset() {
  first_ = true;
  pending_.clear();
}

}  // namespace radixlm::tokenizer
