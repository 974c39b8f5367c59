#include "testing/fake_token_text.h"

#include <utility>

#include "util/utf8_chars.h"

namespace radixlm {
namespace {

std::string Piece(int32_t t) {
  if (t == FakeTokenTextCodec::kPad) return "<pad>";
  if (t == FakeTokenTextCodec::kEos) return "<eos>";
  if (t == FakeTokenTextCodec::kBos) return "<bos>";
  if (t >= 3 && t <= 28) return std::string(1, static_cast<char>('a' + (t - 3)));
  if (t == 29) return " ";
  if (t == 30) return "\n";
  if (t >= 31 && t <= 40) return std::string(1, static_cast<char>('0' + (t - 31)));
  if (t == 41) return ".";
  if (t == 42) return ",";
  if (t == 43) return "ab";
  if (t == 44) return "the";
  if (t == 45) return "ing";
  if (t == 46) return "\xC3";
  if (t == 47) return "\xA9";
  if (t >= 48 && t <= 63) return std::string(1, static_cast<char>('A' + (t - 48)));
  return "";
}

class FakeDecoder : public TokenTextDecoder {
 public:
  explicit FakeDecoder(bool skip_special) : skip_special_(skip_special) {}
  std::string Append(int32_t token) override {
    if (skip_special_ && FakeTokenTextCodec::IsSpecial(token)) return {};
    pending_ += Piece(token);
    const size_t n = WholeUtf8CharsPrefix(pending_);
    std::string out = pending_.substr(0, n);
    pending_.erase(0, n);
    return out;
  }
  std::string Flush() override { return std::exchange(pending_, {}); }

 private:
  bool skip_special_;
  std::string pending_;
};

}  // namespace

StatusOr<std::vector<int32_t>> FakeTokenTextCodec::Encode(std::string_view text) const {
  std::vector<int32_t> ids = {kBos};
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i, 2) == "\xC3\xA9") {
      ids.push_back(46);
      ids.push_back(47);
      ++i;
      continue;
    }
    int32_t found = -1;
    for (int32_t t = 3; t < kVocabSize && found < 0; ++t) {
      if (t == 43 || t == 44 || t == 45 || t == 46 || t == 47) continue;
      if (Piece(t) == std::string(1, text[i])) found = t;
    }
    if (found < 0) return InvalidArgument("fake codec cannot encode byte " + std::to_string(i));
    ids.push_back(found);
  }
  return ids;
}

StatusOr<std::vector<int32_t>> FakeTokenTextCodec::EncodeContinuation(std::string_view text) const {
  std::vector<int32_t> ids;
  size_t i = 0;
  while (i < text.size()) {
    int32_t best = -1;
    size_t best_len = 0;
    for (int32_t t = 3; t < kVocabSize; ++t) {
      const std::string piece = Piece(t);
      if (piece.size() > best_len && text.substr(i, piece.size()) == piece) {
        best = t;
        best_len = piece.size();
      }
    }
    if (best < 0) return InvalidArgument("fake codec cannot encode byte " + std::to_string(i));
    ids.push_back(best);
    i += best_len;
  }
  return ids;
}

std::unique_ptr<TokenTextDecoder> FakeTokenTextCodec::NewDecoder(bool skip_special_tokens) const {
  return std::make_unique<FakeDecoder>(skip_special_tokens);
}

std::string FakeTokenTextCodec::TokenText(int32_t token) const { return Piece(token); }

std::string FakeTokenTextCodec::Decode(const std::vector<int32_t>& tokens) const {
  std::string out;
  for (int32_t t : tokens) {
    if (!IsSpecial(t)) out += Piece(t);
  }
  return out;
}

}  // namespace radixlm
