// tokenizer.json (or, without one, tokenizer.model) + tokenizer_config.json (+ chat_template.jinja,
// config.json's token ids) of a Hugging Face folder -> the tokenizer.* GGUF metadata radixlm's
// tokenizer reads, as llama.cpp's convert_hf_to_gguf.py writes it: the vocabulary padded to
// config.json's vocab_size with "[PAD<i>]" tokens, added tokens CONTROL when special (or when
// they look it: <|...|>), USER_DEFINED otherwise.
//
// Read (hf_vocab.h, one reader per kind): byte-level BPE (GPT-2, Llama-3, Qwen2/3, SmolLM
// pre-tokenizers; merges as "a b" strings); SentencePiece-style BPE in tokenizer.json
// (byte_fallback, spaces as U+2581: Gemma, Llama 2, Mistral) and SentencePiece BPE
// tokenizer.model files, both as SPM vocabularies ("llama"); WordPiece (BERT) as a "bert"
// vocabulary (hf_wordpiece.h); Unigram tokenizer.json models as radixlm's Unigram tokenizer
// ("t5" with tokenizer.hf.* steps: hf_unigram.cc; the template's first and last special
// tokens give BOS / EOS and add_bos / add_eos). The Unicode normal form normalisers (NFC, NFD,
// NFKC, NFKD, alone or in a Sequence) of every tokenizer.json kind become
// tokenizer.hf.normalizers steps, which the tokenizer applies to the text between added tokens
// as the tokenizers package does (llama.cpp's converter drops them; llama.cpp applies none).
// Refused by name: other normalisers and pre-tokenizers, and Unigram tokenizer.model files.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gguf/gguf_value.h"
#include "util/status.h"

namespace radixlm::hf {

struct HfTokenizer {
  std::vector<std::pair<std::string, gguf::Value>> metadata;  // tokenizer.*
  std::string source;                // "tokenizer.json", "tokenizer.model (no tokenizer.json)"
  std::string kind;                  // "byte-level BPE (pre-tokenizer smollm)"
  std::string chat_template_source;  // "tokenizer_config.json", "chat_template.jinja" or "none"
  int64_t n_real_tokens = 0;         // vocabulary + added tokens (before padding)
  std::vector<std::string> notes;    // what was accepted but not applied, for the start-up log
};

// `dir` is the folder; `config` its config.json (for vocab_size and *_token_id fallbacks).
StatusOr<HfTokenizer> ReadHfTokenizer(const std::string& dir, const nlohmann::json& config);

// The tokenizer.ggml.pre name of a tokenizer.json pre_tokenizer object, or InvalidArgument
// naming it when radixlm has no matching pattern.
StatusOr<std::string> PreTokenizerName(const nlohmann::json& pre_tokenizer);

}  // namespace radixlm::hf
