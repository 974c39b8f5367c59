// Vocab: the tokenizer description exactly as a GGUF file states it (tokenizer.ggml.* keys),
// before any defaults are applied. Tests build one by hand; LoadVocab() reads one from a file.
//
// Absent optional keys stay empty/nullopt here: the per-model defaults (llama.cpp's) are applied
// later by ResolveVocab() (resolved_vocab.h), so this struct is a faithful, plain copy of the
// metadata and nothing else.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace radixlm::gguf {
class GgufFile;
}

namespace radixlm::tokenizer {

// tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct Vocab {
  std::string model;  // tokenizer.ggml.model: "llama" (SPM), "gpt2" (BPE), "bert", "t5", ...
  std::string pre;    // tokenizer.ggml.pre: BPE pre-tokenizer name ("" when absent)

  std::vector<std::string> tokens;   // tokenizer.ggml.tokens, indexed by id
  std::vector<float> scores;         // tokenizer.ggml.scores: empty or tokens.size()
  std::vector<int32_t> token_types;  // tokenizer.ggml.token_type: empty or tokens.size()
  std::vector<std::string> merges;   // tokenizer.ggml.merges: "left right", rank = index

  // Special token ids as stated in the metadata (nullopt: key absent).
  std::optional<int64_t> bos_id, eos_id, eot_id, eom_id, unk_id, sep_id, pad_id, mask_id;
  std::optional<int64_t> fim_pre_id, fim_suf_id, fim_mid_id, fim_pad_id, fim_rep_id, fim_sep_id;

  // Flags as stated in the metadata (nullopt: key absent, the model type's default applies).
  std::optional<bool> add_bos, add_eos, add_space_prefix;
  // tokenizer.hf.metaspace_prepend_scheme: "first" or "always" when the prefix space follows a
  // Hugging Face Metaspace pre-tokenizer rather than llama.cpp (src/hf writes it; "" absent).
  std::string metaspace_prepend_scheme;
  // A Hugging Face Unigram tokenizer.json (src/hf writes tokenizer.ggml.model "t5" with
  // tokenizer.hf.unigram true): its normaliser and pre-tokenizer steps (hf_text_steps.h) and
  // tokenizer.hf.byte_fallback; tokenizer.hf.unigram_tokens: how many ids (from 0) are the
  // Unigram model's own pieces (the rest: added tokens and padding). A "t5" vocabulary without
  // it is llama.cpp's UGM (convert_hf_to_gguf.py's XLM-RoBERTa / T5 vocabularies): its
  // normalisation from tokenizer.ggml.precompiled_charsmap (a SentencePiece charsmap, int8 or
  // uint8 array), tokenizer.ggml.remove_extra_whitespaces and add_space_prefix, run as the same
  // steps (resolved_vocab.cc).
  // tokenizer.hf.unigram_scores: the pieces' scores in double (empty: tokenizer.ggml.scores').
  // tokenizer.hf.normalizers on the other kinds (src/hf writes them for BPE, SentencePiece-style
  // BPE and WordPiece tokenizer.json files): the Unicode normal forms alone ("NFC", ...).
  bool hf_unigram = false;
  int64_t hf_unigram_tokens = 0;
  std::vector<double> hf_unigram_scores;
  std::vector<std::string> hf_normalizers, hf_pre_tokenizers;
  bool hf_byte_fallback = false;
  std::string precompiled_charsmap;  // its bytes ("" when absent)
  std::optional<bool> remove_extra_whitespaces;
  // WordPiece ("bert") normalisation: tokenizer.ggml.normalizer.lowercase and .strip_accents.
  std::optional<bool> normalizer_lowercase, normalizer_strip_accents;

  // general.name / general.architecture: llama.cpp keys a few per-token attribute quirks on
  // them (e.g. Phi-3's special tokens strip whitespace to their right).
  std::string general_name;
  std::string architecture;
  std::string chat_template;  // tokenizer.chat_template ("" when absent)
};

// Reads the tokenizer.* metadata of a GGUF file. Fails (InvalidArgument naming the key) when a
// key has the wrong type or an array has the wrong length; a missing tokenizer.ggml.model or
// tokenizer.ggml.tokens is NotFound. Does not judge whether the model type is supported.
StatusOr<Vocab> LoadVocab(const gguf::GgufFile& file);

}  // namespace radixlm::tokenizer
