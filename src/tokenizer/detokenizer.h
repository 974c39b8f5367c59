// Token pieces: the bytes each token decodes to, built once per vocabulary. The Decode side of
// Tokenizer and StreamingDetokenizer (declared in tokenizer.h) are defined in detokenizer.cc.
#pragma once

#include <string>
#include <vector>

#include "tokenizer/resolved_vocab.h"

namespace radixlm::tokenizer {

// Per id, llama.cpp's token_to_piece with special = true: control, unknown and user-defined
// tokens are their text; normal SPM tokens have U+2581 turned into spaces; normal BPE tokens
// are mapped back through the GPT-2 byte table (a code point outside it is kept as is); byte
// tokens (<0xXX>) are that byte; unused and undefined tokens are empty.
std::vector<std::string> BuildTokenPieces(const ResolvedVocab& vocab);

}  // namespace radixlm::tokenizer
