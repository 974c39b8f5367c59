// Token pieces: the bytes each token decodes to, built once per vocabulary. The Decode side of
// Tokenizer and StreamingDetokenizer (declared in tokenizer.h) are defined in detokenizer.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/resolved_vocab.h"

namespace radixlm::tokenizer {

// Per id, llama.cpp's token_to_piece with special = true: control, unknown and user-defined
// tokens are their text; normal SPM and SPM-style BPE (gemma4) tokens have U+2581 turned into
// spaces; other normal BPE tokens
// are mapped back through the GPT-2 byte table (a code point outside it is kept as is); byte
// tokens (<0xXX>) are that byte; unused and undefined tokens are empty.
// All pieces live in one buffer (a 262k vocabulary would otherwise cost 262k allocations).
class TokenPieces {
 public:
  void Build(const ResolvedVocab& vocab);
  std::string_view Get(int32_t id) const {
    return std::string_view(data_).substr(offsets_[id], offsets_[id + 1] - offsets_[id]);
  }

 private:
  std::string data_;
  std::vector<uint32_t> offsets_;  // vocab size + 1
};

}  // namespace radixlm::tokenizer
