#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <array>

#include "gguf/gguf_file.h"
#include "tokenizer/bpe.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/hf_text_steps.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/spm.h"
#include "tokenizer/token_index.h"
#include "tokenizer/unicode.h"
#include "tokenizer/unigram.h"
#include "tokenizer/wordpiece.h"

namespace radixlm::tokenizer {
namespace {

constexpr std::string_view kEscapedSpace = "\xE2\x96\x81";  // U+2581

// SPM byte fallback: "<0xXX>", else the byte itself as a token, else unknown.
std::array<int32_t, 256> SpmByteTokens(const TokenIndex& index, int32_t unk) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::array<int32_t, 256> out;
  for (int b = 0; b < 256; ++b) {
    const char name[6] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
    int32_t id = index.Find(std::string_view(name, 6));
    if (id < 0) {
      const char c = static_cast<char>(b);
      id = index.Find(std::string_view(&c, 1));
    }
    out[b] = id >= 0 ? id : unk;
  }
  return out;
}

// ' ' -> U+2581, in place.
void EscapeSpaces(std::string* text) {
  if (text->find(' ') == std::string::npos) return;
  std::string escaped;
  escaped.reserve(text->size() + text->size() / 2);
  for (char c : *text) {
    if (c == ' ') {
      escaped.append(kEscapedSpace);
    } else {
      escaped.push_back(c);
    }
  }
  text->swap(escaped);
}

}  // namespace

Tokenizer::~Tokenizer() = default;

StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromGguf(const gguf::GgufFile& file) {
  RADIXLM_ASSIGN_OR_RETURN(Vocab vocab, LoadVocab(file));
  return FromVocab(std::move(vocab));
}

StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromVocab(Vocab vocab) {
  RADIXLM_ASSIGN_OR_RETURN(ResolvedVocab resolved, ResolveVocab(std::move(vocab)));
  std::unique_ptr<Tokenizer> tokenizer(new Tokenizer());
  RADIXLM_RETURN_IF_ERROR(tokenizer->Init(std::move(resolved)));
  return tokenizer;
}

Status Tokenizer::Init(ResolvedVocab vocab) {
  vocab_ = std::move(vocab);
  // Every structure below points into vocab_.tokens, which never changes from here on.
  index_ = std::make_unique<TokenIndex>();
  int32_t duplicate = -1;
  index_->Build(&vocab_.tokens, &duplicate);
  if (duplicate >= 0) {
    return InvalidArgument("duplicate token in vocabulary: '" + vocab_.tokens[duplicate] +
                           "' has ids " + std::to_string(index_->Find(vocab_.tokens[duplicate])) +
                           " and " + std::to_string(duplicate));
  }

  std::vector<SpecialTokenSplitter::Entry> entries;
  entries.reserve(vocab_.special_order.size());
  for (int32_t id : vocab_.special_order) {
    const uint32_t a = vocab_.attrs[id];
    entries.push_back(SpecialTokenSplitter::Entry{
        id, vocab_.tokens[id], (a & (attr::kControl | attr::kUnknown)) == 0,
        (a & attr::kLstrip) != 0, (a & attr::kRstrip) != 0});
  }
  splitter_ = std::make_unique<SpecialTokenSplitter>();
  splitter_->Build(entries);

  if (vocab_.kind == ModelKind::kSpm) {
    spm_ = std::make_unique<SpmEncoder>(index_.get(), &vocab_.scores,
                                        SpmByteTokens(*index_, vocab_.ids.unk));
  } else if (vocab_.kind == ModelKind::kUgm) {
    RADIXLM_ASSIGN_OR_RETURN(HfTextSteps steps,
                             HfTextSteps::Parse(vocab_.hf_normalizers, vocab_.hf_pre_tokenizers));
    hf_steps_ = std::make_unique<HfTextSteps>(std::move(steps));
    ugm_ = std::make_unique<UnigramEncoder>(
        index_.get(), &vocab_.tokens, &vocab_.hf_unigram_scores,
        UnigramEncoder::Options{.unk_id = vocab_.ids.unk,
                                .byte_fallback = vocab_.hf_byte_fallback,
                                .n_pieces = static_cast<int32_t>(vocab_.hf_unigram_tokens)});
  } else if (vocab_.kind == ModelKind::kWpm) {
    size_t longest = 0;
    for (const std::string& t : vocab_.tokens) longest = std::max(longest, t.size());
    wpm_ = std::make_unique<WordPieceEncoder>(
        index_.get(), WordPieceEncoder::Options{.lowercase = vocab_.wpm_lowercase,
                                                .strip_accents = vocab_.wpm_strip_accents,
                                                .unk_id = vocab_.ids.unk,
                                                .max_token_bytes = longest});
  } else {
    RADIXLM_ASSIGN_OR_RETURN(pretokenizer_, PreTokenizer::Create(vocab_.pre));
    bpe_ =
        std::make_unique<BpeEncoder>(index_.get(), vocab_.merges,
                                     BpeEncoder::Options{.ignore_merges = vocab_.pre.ignore_merges,
                                                         .spm_style = vocab_.pre.spm_style});
    vocab_.merges.clear();
    vocab_.merges.shrink_to_fit();
  }
  if (vocab_.kind != ModelKind::kUgm &&
      (!vocab_.hf_normalizers.empty() || !vocab_.hf_pre_tokenizers.empty())) {
    RADIXLM_ASSIGN_OR_RETURN(HfTextSteps steps,
                             HfTextSteps::Parse(vocab_.hf_normalizers, vocab_.hf_pre_tokenizers));
    if (!steps.OnlyNormalForms()) {
      return InvalidArgument(std::string("tokenizer.hf.normalizers: a ") + kind_name() +
                             " vocabulary takes only the Unicode normal forms (NFC, NFD, NFKC, "
                             "NFKD), and no tokenizer.hf.pre_tokenizers");
    }
    normal_forms_ = std::make_unique<HfTextSteps>(std::move(steps));
  }
  pieces_.Build(vocab_);
  return Status::Ok();
}

std::string_view Tokenizer::NormalizedFragment(std::string_view text, std::string* buffer) const {
  if (normal_forms_ == nullptr) return text;
  std::string clean;
  SanitizeUtf8Lossy(text, &clean);  // as tokenizers' texts are made from bytes
  *buffer = normal_forms_->Normalize(clean);
  return *buffer;
}

std::vector<int32_t> Tokenizer::Encode(std::string_view text, bool add_special,
                                       bool parse_special) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 2);
  if (vocab_.kind == ModelKind::kSpm) {
    EncodeSpm(text, add_special, parse_special, vocab_.add_space_prefix, &out);
  } else if (vocab_.kind == ModelKind::kWpm) {
    EncodeWpm(text, add_special, parse_special, &out);
  } else if (vocab_.kind == ModelKind::kUgm) {
    EncodeUgm(text, add_special, parse_special, &out);
  } else {
    EncodeBpe(text, add_special, parse_special, &out);
  }
  return out;
}

std::vector<int32_t> Tokenizer::EncodeContinuation(std::string_view text) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 1);
  if (vocab_.kind == ModelKind::kSpm) {
    EncodeSpm(text, /*add_special=*/false, /*parse_special=*/false, /*space_prefix=*/false, &out);
  } else if (vocab_.kind == ModelKind::kWpm) {
    EncodeWpm(text, /*add_special=*/false, /*parse_special=*/false, &out);
  } else if (vocab_.kind == ModelKind::kUgm) {
    EncodeUgm(text, /*add_special=*/false, /*parse_special=*/false, &out);
  } else {
    EncodeBpe(text, /*add_special=*/false, /*parse_special=*/false, &out);
  }
  return out;
}

void Tokenizer::EncodeSpm(std::string_view text, bool add_special, bool parse_special,
                          bool space_prefix, std::vector<int32_t>* out) const {
  if (add_special && vocab_.add_bos) out->push_back(vocab_.ids.bos);
  std::vector<Fragment> fragments;
  splitter_->Split(text, parse_special, &fragments);
  bool prev_special = true;  // a piece at the start gets the prefix space too
  bool at_start = true;
  std::string escaped, normalized;
  using SpacePrefix = ResolvedVocab::SpacePrefix;
  for (const Fragment& f : fragments) {
    if (f.token >= 0) {
      out->push_back(f.token);
      prev_special = true;
      at_start = false;
      continue;
    }
    const std::string_view piece = NormalizedFragment(f.text, &normalized);
    escaped.clear();
    bool prefix = space_prefix && prev_special;
    if (vocab_.space_prefix != SpacePrefix::kLlamaCpp) {
      // Metaspace prepends U+2581 unless the piece, its spaces replaced, starts with one.
      const bool starts_with_space = (!piece.empty() && piece.front() == ' ') ||
                                     piece.substr(0, kEscapedSpace.size()) == kEscapedSpace;
      prefix = prefix && !starts_with_space &&
               (at_start || vocab_.space_prefix == SpacePrefix::kMetaspaceAlways);
    }
    at_start = false;
    if (prefix) escaped.append(kEscapedSpace);
    for (char c : piece) {
      if (c == ' ') {
        escaped.append(kEscapedSpace);
      } else {
        escaped.push_back(c);
      }
    }
    spm_->Encode(escaped, out);
    prev_special = false;
  }
  if (add_special && vocab_.add_eos) out->push_back(vocab_.ids.eos);
}

void Tokenizer::EncodeBpe(std::string_view text, bool add_special, bool parse_special,
                          std::vector<int32_t>* out) const {
  if (add_special && vocab_.add_bos) out->push_back(vocab_.ids.bos);
  std::vector<Fragment> fragments;
  splitter_->Split(text, parse_special, &fragments);
  std::string clean, normalized;
  std::vector<std::string_view> words;
  for (const Fragment& f : fragments) {
    if (f.token >= 0) {
      out->push_back(f.token);
      continue;
    }
    SanitizeUtf8(NormalizedFragment(f.text, &normalized), &clean);  // the regexes need UTF-8
    if (vocab_.pre.spm_style) EscapeSpaces(&clean);
    words.clear();
    pretokenizer_->Split(clean, &words);
    bpe_->EncodeWords(words, out);
  }
  if (add_special && vocab_.add_eos) out->push_back(vocab_.ids.eos);
}

void Tokenizer::EncodeWpm(std::string_view text, bool add_special, bool parse_special,
                          std::vector<int32_t>* out) const {
  if (add_special) out->push_back(vocab_.ids.bos);  // [CLS]
  std::vector<Fragment> fragments;
  splitter_->Split(text, parse_special, &fragments);
  std::string normalized;
  for (const Fragment& f : fragments) {
    if (f.token >= 0) {
      out->push_back(f.token);
    } else {
      wpm_->Encode(NormalizedFragment(f.text, &normalized), out);
    }
  }
  if (add_special) out->push_back(vocab_.ids.sep);  // [SEP]
}

void Tokenizer::EncodeUgm(std::string_view text, bool add_special, bool parse_special,
                          std::vector<int32_t>* out) const {
  if (add_special && vocab_.add_bos && vocab_.ids.bos >= 0) out->push_back(vocab_.ids.bos);
  std::vector<Fragment> fragments;
  splitter_->Split(text, parse_special, &fragments);
  std::string clean;
  std::vector<std::string> pieces;
  bool at_start = true;
  for (const Fragment& f : fragments) {
    if (f.token >= 0) {
      out->push_back(f.token);
    } else {
      SanitizeUtf8Lossy(f.text, &clean);  // as tokenizers' texts are made from bytes
      pieces.clear();
      hf_steps_->Run(clean, at_start, &pieces);
      for (const std::string& p : pieces) ugm_->Encode(p, out);
    }
    at_start = false;
  }
  if (add_special && vocab_.add_eos && vocab_.ids.eos >= 0) out->push_back(vocab_.ids.eos);
}

const std::string& Tokenizer::TokenText(int32_t id) const {
  static const std::string kEmpty;
  return id >= 0 && id < vocab_size() ? vocab_.tokens[id] : kEmpty;
}

std::optional<int32_t> Tokenizer::FindToken(std::string_view text) const {
  const int32_t id = index_->Find(text);
  if (id < 0) return std::nullopt;
  return id;
}

uint32_t Tokenizer::Attributes(int32_t id) const {
  return id >= 0 && id < vocab_size() ? vocab_.attrs[id] : 0;
}

bool Tokenizer::IsEog(int32_t id) const {
  return std::binary_search(vocab_.eog_ids.begin(), vocab_.eog_ids.end(), id);
}

}  // namespace radixlm::tokenizer
