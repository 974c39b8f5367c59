#include "tokenizer/detokenizer.h"

#include <cstdlib>

#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace radixlm::tokenizer {
namespace {

constexpr std::string_view kEscapedSpace = "\xE2\x96\x81";  // U+2581

std::string UnescapeSpaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t hit = text.find(kEscapedSpace, pos);
    if (hit == std::string_view::npos) {
      out.append(text.substr(pos));
      break;
    }
    out.append(text.substr(pos, hit - pos));
    out.push_back(' ');
    pos = hit + kEscapedSpace.size();
  }
  return out;
}

std::string ByteLevelToBytes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    const int byte = UnicodeToByte(DecodeUtf8(text, &pos));
    if (byte >= 0) {
      out.push_back(static_cast<char>(byte));
    } else {
      out.append(text.substr(start, pos - start));
    }
  }
  return out;
}

// "<0x41>" -> "A" (llama.cpp reads the two hex digits at offset 3).
std::string ByteTokenToByte(const std::string& text) {
  if (text.size() < 5) return std::string();
  const std::string hex = text.substr(3, 2);
  return std::string(1, static_cast<char>(std::strtol(hex.c_str(), nullptr, 16)));
}

}  // namespace

std::vector<std::string> BuildTokenPieces(const ResolvedVocab& vocab) {
  std::vector<std::string> pieces(vocab.tokens.size());
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    const uint32_t a = vocab.attrs[id];
    const std::string& text = vocab.tokens[id];
    if (a & (attr::kControl | attr::kUnknown | attr::kUserDefined)) {
      pieces[id] = text;
    } else if (a & attr::kNormal) {
      pieces[id] = vocab.kind == ModelKind::kSpm ? UnescapeSpaces(text) : ByteLevelToBytes(text);
    } else if (a & attr::kByte) {
      pieces[id] = ByteTokenToByte(text);
    }
  }
  return pieces;
}

std::string_view Tokenizer::DecodePiece(int32_t id, bool first, bool skip_special) const {
  const uint32_t a = Attributes(id);
  if (id < 0 || id >= vocab_size()) return {};
  if (skip_special && (a & (attr::kControl | attr::kUnknown))) return {};
  std::string_view piece = pieces_[id];
  if (first && vocab_.add_space_prefix && !piece.empty() && piece.front() == ' ') {
    piece.remove_prefix(1);
  }
  return piece;
}

const std::string& Tokenizer::TokenPiece(int32_t id) const {
  static const std::string kEmpty;
  return id >= 0 && id < vocab_size() ? pieces_[id] : kEmpty;
}

std::string Tokenizer::Decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out.append(DecodePiece(ids[i], i == 0, skip_special));
  return out;
}

std::string StreamingDetokenizer::Feed(int32_t id) {
  pending_.append(tokenizer_->DecodePiece(id, first_, skip_special_));
  first_ = false;
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
