#include "tokenizer/hf_text_steps.h"

#include "tokenizer/unicode.h"
#include "tokenizer/unicode_classes.h"

namespace radixlm::tokenizer {
namespace {

std::vector<std::string> Fields(const std::string& step) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t tab = step.find('\t', start);
    out.push_back(step.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return out;
    start = tab + 1;
  }
}

void ReplaceAll(std::string* s, const std::string& from, const std::string& to) {
  if (from.empty() || s->find(from) == std::string::npos) return;
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = s->find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(*s, pos, hit - pos);
    out.append(to);
  }
  out.append(*s, pos, std::string::npos);
  s->swap(out);
}

// Unicode white space (Rust's char::is_whitespace: the White_Space property).
bool IsSpaceAt(std::string_view s, size_t pos, size_t* len) {
  size_t next = pos;
  const uint32_t cp = DecodeUtf8(s, &next);
  *len = next - pos;
  return IsUnicodeWhitespace(cp);
}

void Strip(std::string* s, bool left, bool right) {
  size_t begin = 0, end = s->size(), len = 0;
  if (left) {
    while (begin < end && IsSpaceAt(*s, begin, &len)) begin += len;
  }
  if (right) {
    size_t last_kept = begin;  // end of the last non-space character
    for (size_t pos = begin; pos < end; pos += len) {
      if (!IsSpaceAt(*s, pos, &len)) last_kept = pos + len;
    }
    end = last_kept;
  }
  *s = s->substr(begin, end - begin);
}

// Every run of two or more spaces (U+0020) replaced by `to`, left to right.
void ReplaceSpaceRuns(std::string* s, const std::string& to) {
  if (s->find("  ") == std::string::npos) return;
  std::string out;
  for (size_t pos = 0; pos < s->size();) {
    if ((*s)[pos] != ' ') {
      out.push_back((*s)[pos++]);
      continue;
    }
    size_t end = pos;
    while (end < s->size() && (*s)[end] == ' ') ++end;
    if (end - pos >= 2) {
      out.append(to);
    } else {
      out.push_back(' ');
    }
    pos = end;
  }
  s->swap(out);
}

void Lowercase(std::string* s) {
  std::string out;
  out.reserve(s->size());
  for (size_t pos = 0; pos < s->size();) {
    const uint32_t cp = DecodeUtf8(*s, &pos);
    if (cp == 0x130) {  // the one character whose full lowercase is two: i + U+0307
      out.append("i\xCC\x87");
    } else {
      AppendUtf8(SimpleLowercase(cp), &out);
    }
  }
  s->swap(out);
}

}  // namespace

StatusOr<HfTextSteps> HfTextSteps::Parse(const std::vector<std::string>& normalizers,
                                         const std::vector<std::string>& pre_tokenizers) {
  HfTextSteps out;
  for (const std::string& text : normalizers) {
    const std::vector<std::string> f = Fields(text);
    Step s;
    if (f[0] == "Replace" && f.size() == 3 && !f[1].empty()) {
      s.kind = Step::kReplace;
      s.a = f[1];
      s.b = f[2];
    } else if (f[0] == "Prepend" && f.size() == 2) {
      s.kind = Step::kPrepend;
      s.a = f[1];
    } else if (f[0] == "Strip" && f.size() == 3) {
      s.kind = Step::kStrip;
      s.left = f[1] == "1";
      s.right = f[2] == "1";
    } else if (f[0] == "Lowercase" && f.size() == 1) {
      s.kind = Step::kLowercase;
    } else if (f[0] == "ReplaceSpaceRuns" && f.size() == 2) {
      s.kind = Step::kReplaceSpaceRuns;
      s.a = f[1];
    } else if (NormalFormFromName(f[0]).has_value() && f.size() == 1) {
      s.kind = Step::kNormalForm;
      s.form = *NormalFormFromName(f[0]);
    } else if (f[0] == "Precompiled" && f.size() == 2) {
      s.kind = Step::kPrecompiled;
      std::string blob;
      if (!DecodeBase64(f[1], &blob)) {
        return InvalidArgument("tokenizer.hf.normalizers: Precompiled's charsmap is not base64");
      }
      auto charsmap = PrecompiledCharsmap::Parse(blob);
      if (!charsmap.ok()) {
        return InvalidArgument("tokenizer.hf.normalizers: " + charsmap.status().message());
      }
      s.charsmap = std::make_shared<const PrecompiledCharsmap>(std::move(*charsmap));
    } else {
      return InvalidArgument("tokenizer.hf.normalizers: unknown step '" + f[0] + "'");
    }
    out.normalizers_.push_back(std::move(s));
  }
  for (const std::string& text : pre_tokenizers) {
    const std::vector<std::string> f = Fields(text);
    Step s;
    if (f[0] == "WhitespaceSplit" && f.size() == 1) {
      s.kind = Step::kWhitespaceSplit;
    } else if (f[0] == "Metaspace" && f.size() == 4 && !f[1].empty() &&
               (f[2] == "always" || f[2] == "first" || f[2] == "never")) {
      s.kind = Step::kMetaspace;
      s.a = f[1];
      s.left = f[3] == "1";
      s.scheme = f[2];
      out.metaspace_scheme_ = f[2];
    } else {
      return InvalidArgument("tokenizer.hf.pre_tokenizers: unknown step '" + f[0] + "'");
    }
    out.pre_tokenizers_.push_back(std::move(s));
  }
  return out;
}

std::string HfTextSteps::Normalize(std::string_view text) const {
  bool starts_at_origin = true;
  return NormalizeTracking(text, &starts_at_origin);
}

std::string HfTextSteps::NormalizeTracking(std::string_view text, bool* starts_at_origin) const {
  std::string normalized(text);
  for (const Step& s : normalizers_) {
    switch (s.kind) {
      case Step::kReplace:
        ReplaceAll(&normalized, s.a, s.b);
        break;
      case Step::kReplaceSpaceRuns:
        ReplaceSpaceRuns(&normalized, s.a);
        break;
      case Step::kPrecompiled:
        normalized = s.charsmap->Normalize(normalized);
        break;
      case Step::kNormalForm:
        normalized = ToNormalForm(normalized, s.form);
        break;
      case Step::kPrepend:
        if (!normalized.empty()) normalized.insert(0, s.a);
        break;
      case Step::kStrip: {
        const size_t before = normalized.size();
        Strip(&normalized, s.left, false);
        if (normalized.size() != before) *starts_at_origin = false;
        Strip(&normalized, false, s.right);
        break;
      }
      case Step::kLowercase:
        Lowercase(&normalized);
        break;
      default:
        break;
    }
  }
  return normalized;
}

bool HfTextSteps::OnlyNormalForms() const {
  for (const Step& s : normalizers_) {
    if (s.kind != Step::kNormalForm) return false;
  }
  return pre_tokenizers_.empty();
}

void HfTextSteps::Run(std::string_view text, bool at_text_start,
                      std::vector<std::string>* pieces) const {
  bool starts_at_origin = at_text_start;  // the first character is the input's first
  std::string normalized = NormalizeTracking(text, &starts_at_origin);
  // Each piece, and whether it starts at the beginning of the whole input.
  std::vector<std::pair<std::string, bool>> current = {{std::move(normalized), true}};
  std::vector<std::pair<std::string, bool>> next;
  for (const Step& s : pre_tokenizers_) {
    next.clear();
    for (auto& [p, first] : current) {
      // `first` is whether the piece starts where the text did; the whole text is one piece
      // whose start is the fragment's (tokenizers' offsets_original of an unsplit string).
      if (s.kind == Step::kWhitespaceSplit) {
        size_t len = 0, pos = 0;
        while (pos < p.size()) {
          while (pos < p.size() && IsSpaceAt(p, pos, &len)) pos += len;
          if (pos >= p.size()) break;
          const size_t begin = pos;
          while (pos < p.size() && !IsSpaceAt(p, pos, &len)) pos += len;
          next.emplace_back(p.substr(begin, pos - begin), first && begin == 0 && starts_at_origin);
        }
        continue;
      }
      std::string m = p;
      ReplaceAll(&m, " ", s.a);
      const bool at_start = at_text_start && first;
      if (!m.empty() && m.compare(0, s.a.size(), s.a) != 0 &&
          (s.scheme == "always" || (s.scheme == "first" && at_start))) {
        m.insert(0, s.a);
      }
      if (!s.left) {
        next.emplace_back(std::move(m), first);
        continue;
      }
      size_t begin = 0;
      for (size_t hit = m.find(s.a, 1); hit != std::string::npos; hit = m.find(s.a, hit + 1)) {
        if (hit > begin) next.emplace_back(m.substr(begin, hit - begin), first && begin == 0);
        begin = hit;
      }
      next.emplace_back(m.substr(begin), first && begin == 0);
    }
    current.swap(next);
  }
  for (auto& [p, first] : current) {
    if (!p.empty()) pieces->push_back(std::move(p));
  }
}

}  // namespace radixlm::tokenizer
