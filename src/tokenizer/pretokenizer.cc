#include "tokenizer/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cstdint>

#include "tokenizer/unicode.h"

namespace radixlm::tokenizer {

struct PreTokenizer::Pattern {
  pcre2_code* code = nullptr;
  // llama.cpp runs patterns that use \p{..} on a per-code-point category image of the text and
  // the others on the code points with non-ASCII white space replaced by U+000B; PCRE2 with
  // Unicode properties matches the former directly, the latter need the substituted text.
  bool sees_ascii_whitespace_only = false;

  ~Pattern() {
    if (code != nullptr) pcre2_code_free(code);
  }
};

namespace {

bool UsesUnicodeCategories(const std::string& regex) {
  for (const char* cat : {"\\p{N}", "\\p{L}", "\\p{P}", "\\p{M}", "\\p{S}", "\\p{Lu}", "\\p{Ll}",
                          "\\p{Lt}", "\\p{Lm}", "\\p{Lo}"}) {
    if (regex.find(cat) != std::string::npos) return true;
  }
  return false;
}

// The text a pattern matches against, with maps between its byte offsets and the original's
// (identity when nothing was substituted).
struct Subject {
  std::string_view text;
  std::string storage;
  std::vector<uint32_t> to_original;  // subject offset -> original offset (code point starts)
  std::vector<uint32_t> from_original;
  bool identity = true;

  size_t ToOriginal(size_t offset) const { return identity ? offset : to_original[offset]; }
  size_t FromOriginal(size_t offset) const { return identity ? offset : from_original[offset]; }
};

// Builds the whitespace-substituted subject, or leaves it the identity if `text` has no
// non-ASCII white space.
void BuildWhitespaceSubject(std::string_view text, Subject* s) {
  s->text = text;
  bool any = false;
  for (size_t pos = 0; pos < text.size() && !any;) {
    if (static_cast<uint8_t>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    any = IsUnicodeWhitespace(DecodeUtf8(text, &pos));
  }
  if (!any) return;
  s->identity = false;
  s->from_original.assign(text.size() + 1, 0);
  s->to_original.reserve(text.size() + 1);
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    const uint32_t cp = DecodeUtf8(text, &pos);
    s->from_original[start] = static_cast<uint32_t>(s->storage.size());
    const size_t sub_start = s->storage.size();
    if (cp >= 0x80 && IsUnicodeWhitespace(cp)) {
      s->storage.push_back('\v');
    } else {
      s->storage.append(text.substr(start, pos - start));
    }
    s->to_original.resize(s->storage.size(), 0);
    s->to_original[sub_start] = static_cast<uint32_t>(start);
  }
  s->from_original[text.size()] = static_cast<uint32_t>(s->storage.size());
  s->to_original.push_back(static_cast<uint32_t>(text.size()));
  s->text = s->storage;
}

struct MatchDataDeleter {
  void operator()(pcre2_match_data* md) const { pcre2_match_data_free(md); }
};

// Splits [begin, end) of `subject` by `code`, appending piece ends (subject offsets) to *ends.
void SplitPiece(const pcre2_code* code, pcre2_match_data* md, std::string_view subject,
                size_t begin, size_t end, std::vector<size_t>* ends) {
  const auto* base = reinterpret_cast<PCRE2_SPTR>(subject.data() + begin);
  const size_t length = end - begin;
  size_t last_end = 0;
  size_t pos = 0;
  while (pos <= length) {
    int rc = pcre2_match(code, base, length, pos, PCRE2_NO_UTF_CHECK, md, nullptr);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      rc = pcre2_match(code, base, length, pos, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md, nullptr);
    }
    if (rc < 0) break;  // no further match (or a resource limit: keep the rest whole)
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    const size_t ms = ov[0];
    const size_t me = ov[1];
    if (me == ms) {  // empty match: step over one code point, emit nothing
      if (pos >= length) break;
      pos += Utf8LenFromLead(static_cast<uint8_t>(subject[begin + pos]));
      continue;
    }
    if (ms > last_end) ends->push_back(begin + ms);
    ends->push_back(begin + me);
    last_end = me;
    pos = me;
  }
  if (last_end < length) ends->push_back(end);
}

}  // namespace

PreTokenizer::~PreTokenizer() = default;

StatusOr<std::unique_ptr<PreTokenizer>> PreTokenizer::Create(const PreTokenizerSpec& spec) {
  std::unique_ptr<PreTokenizer> pt(new PreTokenizer());
  for (const std::string& regex : spec.regexes) {
    auto pattern = std::make_unique<Pattern>();
    pattern->sees_ascii_whitespace_only = !UsesUnicodeCategories(regex);
    int error_code = 0;
    PCRE2_SIZE error_offset = 0;
    pattern->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(regex.data()), regex.size(),
                                  PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &error_code,
                                  &error_offset, nullptr);
    if (pattern->code == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error_code, message, sizeof(message));
      return Internal("pre-tokenizer '" + spec.family + "': regex does not compile at offset " +
                      std::to_string(error_offset) + ": " + reinterpret_cast<const char*>(message));
    }
    // JIT is an optimization only; without it pcre2_match interprets the pattern.
    (void)pcre2_jit_compile(pattern->code, PCRE2_JIT_COMPLETE);
    pt->patterns_.push_back(std::move(pattern));
  }
  return pt;
}

void PreTokenizer::Split(std::string_view text, std::vector<std::string_view>* words) const {
  if (text.empty()) return;
  Subject original;
  original.text = text;
  Subject substituted;
  bool substituted_built = false;

  // Piece ends in original offsets; the first piece starts at 0.
  std::vector<size_t> ends = {text.size()};
  std::vector<size_t> next;
  for (const std::unique_ptr<Pattern>& pattern : patterns_) {
    const Subject* subject = &original;
    if (pattern->sees_ascii_whitespace_only) {
      if (!substituted_built) {
        BuildWhitespaceSubject(text, &substituted);
        substituted_built = true;
      }
      subject = &substituted;
    }
    std::unique_ptr<pcre2_match_data, MatchDataDeleter> md(
        pcre2_match_data_create_from_pattern(pattern->code, nullptr));
    next.clear();
    size_t begin = 0;
    for (size_t end : ends) {
      const size_t sub_begin_index = next.size();
      SplitPiece(pattern->code, md.get(), subject->text, subject->FromOriginal(begin),
                 subject->FromOriginal(end), &next);
      for (size_t i = sub_begin_index; i < next.size(); ++i) next[i] = subject->ToOriginal(next[i]);
      begin = end;
    }
    ends.swap(next);
  }
  size_t begin = 0;
  for (size_t end : ends) {
    words->push_back(text.substr(begin, end - begin));
    begin = end;
  }
}

}  // namespace radixlm::tokenizer
