// Tokenizer: text <-> token ids for the SPM ("llama"), byte-level BPE ("gpt2"), SPM-style
// BPE ("gemma4": " " -> U+2581, merges over UTF-8 characters, <0xXX> byte fallback) and
// WordPiece ("bert": wordpiece.h; add_special gives [CLS] ... [SEP]) vocabularies of GGUF
// models, producing the same ids as llama.cpp's llama_tokenize for the same file; and Unigram
// models of Hugging Face tokenizer.json files ("t5" with tokenizer.hf.unigram, written by
// src/hf: hf_text_steps.h normalises and splits each piece between special tokens, unigram.h
// segments it; add_special adds BOS / EOS as the post-processor's template does), producing
// the `tokenizers` package's ids; and llama.cpp's UGM vocabularies ("t5" without
// tokenizer.hf.unigram, as convert_hf_to_gguf.py writes XLM-RoBERTa's: its charsmap and
// whitespace flags run as the same steps; add_special: </s> at the end unless the metadata
// says otherwise).
//
//   auto tok = Tokenizer::FromGguf(*file);            // or FromVocab(vocab) in tests
//   std::vector<int32_t> ids = (*tok)->Encode("Hello", /*add_special=*/true,
//                                             /*parse_special=*/false);
//   std::string text = (*tok)->Decode(ids, /*skip_special=*/true);
//
// Encode: special tokens are cut out first (user-defined ones always, control ones only with
// parse_special), then each raw piece goes through SPM merging (with " " -> U+2581 and, if
// add_space_prefix, a leading space on a piece at the start or after a special token; under a
// Hugging Face Metaspace's rule, tokenizer.hf.metaspace_prepend_scheme, not on a piece that
// starts with a space, and with "first" only at the start of the text) or
// through the BPE pre-tokenizer regexes and byte-level merges. add_special adds BOS / EOS as
// the model's add_bos / add_eos say. Invalid UTF-8 input never fails: SPM falls back to byte
// tokens; BPE replaces invalid bytes by U+FFFD first. A vocabulary that src/hf read from a
// tokenizer.json with Unicode normal forms (tokenizer.hf.normalizers "NFC" ...: Qwen2's NFC)
// runs each raw piece through them first, after making it valid UTF-8 as the `tokenizers`
// package receives text, as that package does; GGUF files from llama.cpp's converter have no
// such key and llama.cpp applies no normal form (nor does radixlm on them).
//
// Decode: concatenates token pieces (U+2581 -> space, <0xXX> -> the byte, GPT-2 unicode ->
// bytes); with add_space_prefix the first token's leading space is dropped, as llama.cpp
// does (Unigram: the first token left after skipping special ones, as tokenizers does).
// skip_special omits control and unknown tokens and user-defined special markers. The output is raw
// bytes and may be invalid UTF-8 when the ids split a character; StreamingDetokenizer handles
// streams.
//
// Immutable after creation: every method is const and safe to call from many threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/detokenizer.h"
#include "tokenizer/resolved_vocab.h"
#include "tokenizer/vocab.h"
#include "util/status.h"

namespace radixlm::gguf {
class GgufFile;
}

namespace radixlm::tokenizer {

class BpeEncoder;
class HfTextSteps;
class PreTokenizer;
class SpecialTokenSplitter;
class SpmEncoder;
class TokenIndex;
class UnigramEncoder;
class WordPieceEncoder;

class Tokenizer {
 public:
  // Reads the tokenizer.* metadata (LoadVocab) and builds the tokenizer. Errors: see
  // LoadVocab and ResolveVocab (e.g. Unimplemented "unsupported tokenizer type 'bert' ...").
  static StatusOr<std::unique_ptr<Tokenizer>> FromGguf(const gguf::GgufFile& file);
  static StatusOr<std::unique_ptr<Tokenizer>> FromVocab(Vocab vocab);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  std::vector<int32_t> Encode(std::string_view text, bool add_special, bool parse_special) const;
  // The ids of `text` as a continuation of earlier text: no BOS / EOS, special tokens not
  // parsed, and no SPM prefix space (with add_space_prefix, Encode would give "a" a leading
  // space). Used to retokenize generated text in place (jump-forward).
  std::vector<int32_t> EncodeContinuation(std::string_view text) const;
  std::string Decode(std::span<const int32_t> ids, bool skip_special = false) const;

  // The bytes token `id` contributes to Decode at position `first` (true: the first id of the
  // sequence) — what Decode and StreamingDetokenizer concatenate. Empty for ids out of range.
  std::string_view DecodePiece(int32_t id, bool first, bool skip_special) const;
  // Whether the token after `id` is still the first one for DecodePiece: for Unigram models
  // (whose Metaspace decoder sees only the tokens left after skipping special ones) when `id`
  // is skipped; never for the others (llama.cpp strips the space of the first id only).
  bool StillFirstAfter(int32_t id, bool skip_special) const {
    return vocab_.kind == ModelKind::kUgm && skip_special && IsSpecial(id);
  }
  // The piece of `id` with special tokens rendered and no leading-space stripping.
  std::string_view TokenPiece(int32_t id) const;
  // The vocabulary text of `id` (e.g. "▁Hello", "Ġworld", "<0x0A>"); empty if out of range.
  const std::string& TokenText(int32_t id) const;
  std::optional<int32_t> FindToken(std::string_view text) const;

  int32_t vocab_size() const { return static_cast<int32_t>(vocab_.tokens.size()); }
  int32_t bos_id() const { return vocab_.ids.bos; }  // -1: none
  int32_t eos_id() const { return vocab_.ids.eos; }
  int32_t eot_id() const { return vocab_.ids.eot; }
  int32_t unk_id() const { return vocab_.ids.unk; }
  int32_t pad_id() const { return vocab_.ids.pad; }
  bool add_bos() const { return vocab_.add_bos; }
  bool add_eos() const { return vocab_.add_eos; }
  bool add_space_prefix() const { return vocab_.add_space_prefix; }
  ModelKind kind() const { return vocab_.kind; }
  const char* kind_name() const {
    return vocab_.kind == ModelKind::kSpm   ? "SPM"
           : vocab_.kind == ModelKind::kWpm ? "WPM"
           : vocab_.kind == ModelKind::kUgm ? "UGM"
                                            : "BPE";
  }
  int32_t sep_id() const { return vocab_.ids.sep; }  // WordPiece's [SEP]; -1: none
  // BPE pre-tokenizer family ("gpt2", "llama3", ...); "" for SPM.
  const std::string& pre_tokenizer() const { return vocab_.pre.family; }
  const std::string& chat_template() const { return vocab_.chat_template; }

  uint32_t Attributes(int32_t id) const;  // attr:: bits; 0 if out of range
  bool IsControl(int32_t id) const { return Attributes(id) & attr::kControl; }
  bool IsUserDefined(int32_t id) const { return Attributes(id) & attr::kUserDefined; }
  bool IsByte(int32_t id) const { return Attributes(id) & attr::kByte; }
  // Control, unknown, or a user-defined special marker (<start_of_image>): what skip_special
  // omits from Decode (see README.md).
  bool IsSpecial(int32_t id) const { return Attributes(id) & attr::kSkippedWhenSkippingSpecial; }
  // Ends generation: EOS, EOT (<end_of_turn>, <|eot_id|>, <|im_end|>, ...), EOM, FIM pad/sep.
  bool IsEog(int32_t id) const;
  const std::vector<int32_t>& eog_ids() const { return vocab_.eog_ids; }

 private:
  Tokenizer() = default;
  Status Init(ResolvedVocab vocab);
  void EncodeSpm(std::string_view text, bool add_special, bool parse_special, bool space_prefix,
                 std::vector<int32_t>* out) const;
  void EncodeBpe(std::string_view text, bool add_special, bool parse_special,
                 std::vector<int32_t>* out) const;
  void EncodeWpm(std::string_view text, bool add_special, bool parse_special,
                 std::vector<int32_t>* out) const;
  void EncodeUgm(std::string_view text, bool add_special, bool parse_special,
                 std::vector<int32_t>* out) const;
  // A piece of raw text between special tokens as the SPM, BPE and WordPiece steps take it:
  // `text` itself, or with tokenizer.json normal forms (normal_forms_) `text` made valid UTF-8
  // as tokenizers receives it (one U+FFFD per maximal ill-formed subsequence) and normalised,
  // in *buffer.
  std::string_view NormalizedFragment(std::string_view text, std::string* buffer) const;

  ResolvedVocab vocab_;
  TokenPieces pieces_;  // per id: llama.cpp token_to_piece(special = true)
  std::unique_ptr<TokenIndex> index_;
  std::unique_ptr<SpecialTokenSplitter> splitter_;
  std::unique_ptr<SpmEncoder> spm_;
  std::unique_ptr<PreTokenizer> pretokenizer_;
  std::unique_ptr<BpeEncoder> bpe_;
  std::unique_ptr<WordPieceEncoder> wpm_;
  std::unique_ptr<HfTextSteps> hf_steps_;      // Unigram: normalisers and pre-tokenizers
  std::unique_ptr<HfTextSteps> normal_forms_;  // the others: tokenizer.json's normal forms
  std::unique_ptr<UnigramEncoder> ugm_;
};

// Incremental detokenizer for one output stream. Feed ids one at a time; each call returns
// the newly completed text, never ending inside a UTF-8 character (a character split over
// several byte tokens is held back until complete). Flush() returns whatever is held back.
// The concatenation of all returned pieces equals Decode(all ids, skip_special).
// Not thread-safe (one per stream); the Tokenizer must outlive it.
class StreamingDetokenizer {
 public:
  explicit StreamingDetokenizer(const Tokenizer& tokenizer, bool skip_special = false)
      : tokenizer_(&tokenizer), skip_special_(skip_special) {}

  std::string Feed(int32_t id);
  std::string Flush();
  void Reset();
  size_t pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer* tokenizer_;
  bool skip_special_;
  bool first_ = true;
  std::string pending_;
};

}  // namespace radixlm::tokenizer
