// ResolvedVocab: a Vocab with llama.cpp's per-model defaults and fix-ups applied, ready to
// build a Tokenizer from: per-token attributes, special token ids, add_bos / add_eos /
// add_space_prefix, end-of-generation tokens, and the special-token matching order.
//
// Mirrors llama_vocab::impl::load: defaults by model type ("llama" = SPM, "gpt2" = BPE,
// "gemma4" = BPE with Gemma 4's pre-tokenizer, no default ids, BOS always added) and
// pre-tokenizer, metadata overrides, control-looking tokens (<|eot_id|>, <end_of_turn>, FIM
// tokens, ...) promoted to control, "unused" control tokens marked unused, and the Phi-3 /
// Jina / ModernBERT strip attributes keyed on the model name. radixlm adds one bit llama.cpp
// does not have: kSpecialMarker on user-defined tokens shaped like special markers (see
// LooksLikeSpecialMarker and src/tokenizer/README.md), which skip_special_tokens omits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/pretokenizer.h"
#include "tokenizer/vocab.h"
#include "util/status.h"

namespace radixlm::tokenizer {

// Token attribute bits (llama.cpp's llama_token_attr).
namespace attr {
inline constexpr uint32_t kUndefined = 0;
inline constexpr uint32_t kUnknown = 1u << 0;
inline constexpr uint32_t kUnused = 1u << 1;
inline constexpr uint32_t kNormal = 1u << 2;
inline constexpr uint32_t kControl = 1u << 3;
inline constexpr uint32_t kUserDefined = 1u << 4;
inline constexpr uint32_t kByte = 1u << 5;
inline constexpr uint32_t kLstrip = 1u << 7;
inline constexpr uint32_t kRstrip = 1u << 8;
// radixlm's: a user-defined token that is a special marker (<start_of_image>, <|...|>), which
// the model's Hugging Face tokenizer registers as special; no output text when skipping
// special tokens.
inline constexpr uint32_t kSpecialMarker = 1u << 9;
// What skip_special_tokens omits from decoded text.
inline constexpr uint32_t kSkippedWhenSkippingSpecial = kControl | kUnknown | kSpecialMarker;
}  // namespace attr

// A user-defined token's text is a special marker when it is `<...>` without white space, the
// inside has a letter, digit, '_' or non-ASCII character (Gemma 4's string quote `<|"|>` is
// tool-call text), and the inside is `|...|` (`<|image|>`), `｜...｜` (DeepSeek's full-width bars),
// or starts with "start_of_", "end_of_" or "unused" (Gemma's `<start_of_image>`, `<end_of_image>`,
// `<unused12>`). Tags such as `<table>` or `<think>` are text, as their tokenizers say.
bool LooksLikeSpecialMarker(std::string_view text);

// kWpm: WordPiece (tokenizer.ggml.model "bert"; BERT-family encoders), wordpiece.h.
// kUgm: a Hugging Face Unigram tokenizer.json ("t5" with tokenizer.hf.unigram), or llama.cpp's
// UGM ("t5" without it: its charsmap and whitespace flags as the same steps), unigram.h.
enum class ModelKind { kSpm, kBpe, kWpm, kUgm };

// Special token ids; -1 = the model has none.
struct SpecialIds {
  int32_t bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, sep = -1, pad = -1, mask = -1;
  int32_t fim_pre = -1, fim_suf = -1, fim_mid = -1, fim_pad = -1, fim_rep = -1, fim_sep = -1;
};

struct ResolvedVocab {
  ModelKind kind = ModelKind::kSpm;
  std::string model;                // tokenizer.ggml.model as given
  PreTokenizerSpec pre;             // BPE only
  std::vector<std::string> tokens;  // empty texts replaced by "[EMPTY_<id>]", as llama.cpp
  std::vector<float> scores;        // tokens.size() (zeros when the file has none)
  std::vector<uint32_t> attrs;      // tokens.size(), attr:: bits
  std::vector<std::string> merges;  // BPE only
  SpecialIds ids;
  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = false;
  // How the SPM prefix space is added. kLlamaCpp: to every raw piece at the start or after a
  // special token. Hugging Face's Metaspace: only to a piece that does not already start with a
  // space, and with kMetaspaceFirst only to a piece at the very start of the text.
  enum class SpacePrefix { kLlamaCpp, kMetaspaceAlways, kMetaspaceFirst };
  SpacePrefix space_prefix = SpacePrefix::kLlamaCpp;
  // WordPiece only: lowercase (default true) and strip accents (default: as lowercase).
  bool wpm_lowercase = true;
  bool wpm_strip_accents = true;
  // The tokenizer.json's normaliser and pre-tokenizer steps (hf_text_steps.h; for the other
  // kinds than Unigram, only Unicode normal forms) and, Unigram only, byte fallback.
  std::vector<std::string> hf_normalizers, hf_pre_tokenizers;
  bool hf_byte_fallback = false;
  int64_t hf_unigram_tokens = 0;          // ids below this are the model's pieces
  std::vector<double> hf_unigram_scores;  // [hf_unigram_tokens]: their scores
  std::vector<int32_t> eog_ids;           // sorted, unique
  std::vector<int32_t> special_order;     // control / user-defined / unknown ids, longest first
  std::string chat_template;
};

// Unimplemented "unsupported tokenizer type '<model>'" for RWKV, no vocabulary and other
// models (InvalidArgument for a malformed precompiled charsmap); InvalidArgument for an unknown
// pre-tokenizer, an empty token list, a merges-less BPE vocabulary, or add_bos/add_eos without the
// token's id.
StatusOr<ResolvedVocab> ResolveVocab(Vocab vocab);

}  // namespace radixlm::tokenizer
