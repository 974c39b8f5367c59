// tokenizer.json with a WordPiece model (BERT-family encoders: bge, MiniLM) -> the
// tokenizer.ggml.* metadata of a "bert" vocabulary, as llama.cpp's convert_hf_to_gguf.py writes
// it (conversion/bert.py, BertModel.set_vocab): the token table of hf_vocab.h in "phantom
// space" form (a CONTROL token as it is, "##piece" as "piece", any other token as "▁token"),
// tokenizer.ggml.model "bert", and the [SEP] id (tokenizer.ggml.seperator_token_id) where the
// vocabulary has "[SEP]". One addition the converter does not make: a BertNormalizer with
// lowercase false (a cased model) or an explicit strip_accents is written as
// tokenizer.ggml.normalizer.lowercase / .strip_accents (which llama.cpp reads), since the
// defaults (lowercase, strip accents) would tokenize a cased model wrongly. Unicode normal
// forms before the BertNormalizer (a Sequence of NFC, NFD, NFKC or NFKD, then BertNormalizer,
// or the forms alone: no lowercasing or accent stripping) are written as
// tokenizer.hf.normalizers, which the tokenizer applies before WordPiece's own steps.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "hf/hf_vocab.h"
#include "util/status.h"

namespace radixlm::hf {

StatusOr<HfVocab> WordPieceVocab(const nlohmann::json& tok, int64_t vocab_size,
                                 const std::string& path);

}  // namespace radixlm::hf
