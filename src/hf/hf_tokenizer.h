// tokenizer.json + tokenizer_config.json (+ chat_template.jinja, config.json's token ids) of a
// Hugging Face folder -> the tokenizer.* GGUF metadata radixlm's tokenizer reads, as llama.cpp's
// convert_hf_to_gguf.py writes it: the vocabulary padded to config.json's vocab_size with
// "[PAD<i>]" tokens, added tokens CONTROL when special (or when they look it: <|...|>),
// USER_DEFINED otherwise, the merges as "a b" strings, the pre-tokenizer named by what
// tokenizer.json's pre_tokenizer is.
//
// Read: byte-level BPE (GPT-2, Llama-3, Qwen2/3, SmolLM pre-tokenizers). Refused by name:
// Unigram and WordPiece models, SentencePiece-style BPE (Metaspace / byte_fallback), other
// normalisers and pre-tokenizers (NFC is accepted and, as in llama.cpp, not applied).
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
