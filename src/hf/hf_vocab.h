// The vocabulary half of a Hugging Face tokenizer as the tokenizer.ggml.* metadata llama.cpp's
// convert_hf_to_gguf.py writes: one function per tokenizer model kind (ReadHfTokenizer picks
// one, hf_tokenizer.cc), and the table of tokens they share. The other half (special token ids,
// add_bos / add_eos, the chat template) is the same for every kind and stays in
// hf_tokenizer.cc.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gguf/gguf_value.h"
#include "util/status.h"

namespace radixlm::hf {

// llama.cpp's token types (and SentencePiece's piece types: the same numbers).
enum TokenType : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct HfVocab {
  // tokenizer.ggml.{model, pre, tokens, token_type, scores or merges, add_space_prefix}.
  std::vector<std::pair<std::string, gguf::Value>> metadata;
  std::vector<std::string> tokens;  // the texts written, by id (padded)
  int64_t n_real_tokens = 0;        // before padding
  std::string kind;                 // for the start-up log
  std::vector<std::string> notes;   // accepted but not applied
  // The last fallback for the special token ids: trainer_spec's (tokenizer.model), a Unigram
  // model's unk_id, or the ids of the post-processor template's first and last special tokens
  // (Unigram: "<s> $A </s>").
  std::vector<std::pair<std::string, int32_t>> default_ids;
  // Unigram: add_eos_token from the template's last item too (as add_bos_token from its first).
  bool eos_from_template = false;
};

// tokenizer.json's model.vocab and added_tokens by id, padded to `vocab_size` (config.json's,
// 0: none) with "[PAD<i>]" UNUSED tokens. Added tokens are CONTROL when special (or when their
// text looks it: <|...|>, <unused..>), USER_DEFINED otherwise; the rest NORMAL.
struct TokenTable {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  std::vector<bool> added;
  int64_t n_real = 0;
};
StatusOr<TokenTable> ReadTokenTable(const nlohmann::json& tok, int64_t vocab_size,
                                    const std::string& path);

// The converter's does_token_look_special.
bool LooksSpecial(const std::string& text);
// "<0xXX>" (upper-case hex): a byte-fallback piece.
bool IsByteToken(const std::string& text);
// `j` as JSON text, cut at 200 characters, for error messages.
std::string Describe(const nlohmann::json& j);

// The step name (tokenizer/normal_form.h; written into tokenizer.hf.normalizers) of a
// tokenizer.json Unicode normal form normaliser ({"type": "NFC"}, "NFD", "NFKC", "NFKD"); ""
// for any other normaliser.
std::string NormalFormStep(const nlohmann::json& j);
// A tokenizer.json normaliser as the list of its members: a Sequence's normalizers, nothing
// for null, else `j` alone.
std::vector<nlohmann::json> NormalizerMembers(const nlohmann::json& j);

// tokenizer.json with a byte-level BPE model (hf_tokenizer.cc).
StatusOr<HfVocab> ByteLevelBpeVocab(const nlohmann::json& tok, int64_t vocab_size,
                                    const std::string& path);
// tokenizer.json with a SentencePiece-style BPE model (sentencepiece_vocab.cc).
StatusOr<HfVocab> SentencePieceBpeVocab(const nlohmann::json& tok, int64_t vocab_size,
                                        const std::string& path);
// tokenizer.json with a Unigram model (hf_unigram.cc).
StatusOr<HfVocab> UnigramVocab(const nlohmann::json& tok, int64_t vocab_size,
                               const std::string& path);
// tokenizer.model, with the folder's added_tokens.json and tokenizer_config.json's
// added_tokens_decoder (`tokenizer_config`; an empty object when there is none).
StatusOr<HfVocab> SentencePieceModelVocab(const std::string& dir,
                                          const nlohmann::json& tokenizer_config,
                                          int64_t vocab_size);

}  // namespace radixlm::hf
