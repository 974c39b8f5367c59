// BPE pre-tokenizer: splits raw text into words with the regex list llama.cpp uses for each
// tokenizer.ggml.pre value, before byte-level BPE runs on each word.
//
// Semantics follow llama.cpp's unicode_regex_split: the regexes apply in order, each one only
// inside the pieces the previous ones produced (a match never crosses a piece boundary, and
// `$` / lookahead see the piece's end), and both the matches and the text between them are
// kept as pieces. Patterns run on PCRE2 in UTF mode with Unicode properties. Patterns without
// \p{..} classes see non-ASCII white space as U+000B, as llama.cpp's std::wregex path does.
//
// A PreTokenizer is immutable after Create() and safe to use from many threads at once.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace radixlm::tokenizer {

// What a tokenizer.ggml.pre value implies, besides its regexes.
struct PreTokenizerSpec {
  std::string family;                // canonical name, e.g. "llama3" for "llama-bpe"
  std::vector<std::string> regexes;  // applied in order
  bool ignore_merges = false;        // a word that is itself a token is not merged further
  bool default_add_bos = false;      // add_bos when tokenizer.ggml.add_bos_token is absent
  bool clear_bos = false;            // the model has no BOS token by default (chatglm)
  // SPM-style BPE (Gemma 4): ' ' becomes U+2581 before splitting, merges run on the raw UTF-8
  // characters (not GPT-2's byte-to-unicode table), a character that is no token falls back to
  // its bytes' "<0xXX>" tokens, and a word of only newlines that is a token stays whole.
  bool spm_style = false;
  bool force_add_bos = false;  // add_bos even where the metadata says false (llama.cpp's Gemma 4)
};

// The spec for a tokenizer.ggml.pre value ("" and "default" give the default regexes);
// InvalidArgument "unknown pre-tokenizer type: '<name>'" for names this build does not know.
StatusOr<PreTokenizerSpec> FindPreTokenizerSpec(std::string_view pre);

class PreTokenizer {
 public:
  static StatusOr<std::unique_ptr<PreTokenizer>> Create(const PreTokenizerSpec& spec);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Appends the words of `text` (valid UTF-8; see SanitizeUtf8) to *words, as views into
  // `text`, in order; their concatenation is `text`.
  void Split(std::string_view text, std::vector<std::string_view>* words) const;

 private:
  struct Pattern;
  PreTokenizer() = default;
  std::vector<std::unique_ptr<Pattern>> patterns_;
};

}  // namespace radixlm::tokenizer
