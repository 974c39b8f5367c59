// The normalisers and pre-tokenizers of a Hugging Face tokenizer.json that a Unigram model
// runs behind, as src/hf writes them into GGUF metadata (tokenizer.hf.normalizers,
// tokenizer.hf.pre_tokenizers: one step a string, its fields split by '\t'), applied as the
// `tokenizers` package applies them to each piece of text between added tokens:
//   normalisers, in order:  "Replace\t<from>\t<to>" (every occurrence, left to right),
//     "Prepend\t<text>" (to a non-empty text), "Strip\t<left 0|1>\t<right 0|1>" (Unicode white
//     space), "Lowercase" (each character's full lowercase mapping), "ReplaceSpaceRuns\t<to>"
//     (every run of two or more U+0020, tokenizers' Replace of the regex " {2,}"),
//     "Precompiled\t<base64 charsmap>" (a SentencePiece charsmap, precompiled_charsmap.h),
//     "NFC" / "NFD" / "NFKC" / "NFKD" (a Unicode normal form of the whole text, normal_form.h);
//   pre-tokenizers, in order, each over the pieces the previous one made:
//     "WhitespaceSplit" (the runs between white space), "Metaspace\t<replacement>\t<always|
//     first|never>\t<split 0|1>" (spaces become the replacement; it is prepended to a
//     non-empty piece that does not start with it, with "first" only to a piece that starts
//     at the beginning of the whole text; with split, a piece is cut before every
//     replacement character).
// Parse refuses any other step by name, and a malformed charsmap (InvalidArgument). Immutable
// after Parse.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/normal_form.h"
#include "tokenizer/precompiled_charsmap.h"
#include "util/status.h"

namespace radixlm::tokenizer {

class HfTextSteps {
 public:
  static StatusOr<HfTextSteps> Parse(const std::vector<std::string>& normalizers,
                                     const std::vector<std::string>& pre_tokenizers);

  // Normalises `text` (valid UTF-8) and appends its pieces to *pieces. `at_text_start`: the
  // text starts the whole input (Metaspace's "first").
  void Run(std::string_view text, bool at_text_start, std::vector<std::string>* pieces) const;

  // `text` (valid UTF-8) through the normalisers alone: what BPE and WordPiece vocabularies with
  // a tokenizer.json normaliser tokenize (their own steps follow, tokenizer.h).
  std::string Normalize(std::string_view text) const;

  // Whether every normaliser is a Unicode normal form (NFC, NFD, NFKC, NFKD) and there is no
  // pre-tokenizer: the steps the BPE and WordPiece vocabularies take.
  bool OnlyNormalForms() const;

  // The Metaspace step's prepend scheme ("" without one): whether decoding drops a leading space.
  const std::string& metaspace_scheme() const { return metaspace_scheme_; }

 private:
  struct Step {
    enum Kind {
      kReplace,
      kReplaceSpaceRuns,
      kPrepend,
      kStrip,
      kLowercase,
      kPrecompiled,
      kNormalForm,
      kWhitespaceSplit,
      kMetaspace
    };
    Kind kind = kReplace;
    std::string a, b;    // Replace: from, to; ReplaceSpaceRuns / Prepend / Metaspace: the text in a
    bool left = false;   // Strip: left; Metaspace: split
    bool right = false;  // Strip: right
    std::string scheme;  // Metaspace: always | first | never
    NormalForm form = NormalForm::kNfc;                   // NormalForm
    std::shared_ptr<const PrecompiledCharsmap> charsmap;  // Precompiled
  };
  // The normalised text; *starts_at_origin is cleared when a Strip removed its start.
  std::string NormalizeTracking(std::string_view text, bool* starts_at_origin) const;

  std::vector<Step> normalizers_;
  std::vector<Step> pre_tokenizers_;
  std::string metaspace_scheme_;
};

}  // namespace radixlm::tokenizer
