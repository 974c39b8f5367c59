#include "tokenizer/wordpiece.h"

#include <algorithm>

#include "tokenizer/unicode.h"
#include "tokenizer/unicode_classes.h"

namespace radixlm::tokenizer {
namespace {

constexpr std::string_view kPhantomSpace = "\xE2\x96\x81";  // U+2581

// The CJK ideograph blocks BERT's BasicTokenizer splits on (the same ranges as llama.cpp and
// Hugging Face's tokenizers, including their 0x2B920 start of the fifth extension block).
bool IsCjkIdeograph(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

}  // namespace

std::vector<std::string> WordPieceEncoder::SplitWords(std::string_view text) const {
  std::vector<std::string> words(1);
  size_t pos = 0;
  while (pos < text.size()) {
    uint32_t cp = DecodeUtf8(text, &pos);  // invalid bytes come back as U+FFFD: dropped below
    if (options_.strip_accents) cp = NfdFirstCodePoint(cp);
    if (IsUnicodeWhitespace(cp)) {
      if (!words.back().empty()) words.emplace_back();
      continue;
    }
    const UnicodeClass klass = ClassOfCodePoint(cp);
    if (cp == 0 || cp == kReplacementChar || klass == UnicodeClass::kControl) continue;
    if (options_.strip_accents && klass == UnicodeClass::kMark) continue;
    const uint32_t normalised = options_.lowercase ? SimpleLowercase(cp) : cp;
    if (klass == UnicodeClass::kPunctuation || (cp < 0x7F && klass == UnicodeClass::kSymbol) ||
        IsCjkIdeograph(cp)) {
      if (!words.back().empty()) words.emplace_back();
      AppendUtf8(normalised, &words.back());
      words.emplace_back();
    } else {
      AppendUtf8(normalised, &words.back());
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

void WordPieceEncoder::EncodeWord(std::string_view word, std::string* scratch,
                                  std::vector<int32_t>* out) const {
  scratch->assign(kPhantomSpace);
  scratch->append(word);
  const std::string_view text = *scratch;
  const size_t first = out->size();
  // Longest match first, byte offsets as llama.cpp steps them (a cut inside a character matches
  // no token of a valid UTF-8 vocabulary).
  for (size_t begin = 0; begin < text.size();) {
    size_t end = std::min(text.size(), begin + options_.max_token_bytes);
    int32_t id = -1;
    for (; end > begin; --end) {
      id = index_->Find(text.substr(begin, end - begin));
      if (id >= 0) break;
    }
    if (id < 0) {
      out->resize(first);
      break;
    }
    out->push_back(id);
    begin = end;
  }
  if (out->size() == first) out->push_back(options_.unk_id);
}

void WordPieceEncoder::Encode(std::string_view text, std::vector<int32_t>* out) const {
  std::string scratch;
  for (const std::string& word : SplitWords(text)) EncodeWord(word, &scratch, out);
}

}  // namespace radixlm::tokenizer
