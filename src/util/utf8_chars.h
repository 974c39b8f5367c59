// Whole-character cuts of UTF-8 byte strings, for code that appends or streams text in pieces
// (jump-forward's forced bytes, fake decoders in tests). Lenient: a byte that cannot start a
// sequence counts as one character, so nothing is held back forever. (The tokenizer's
// CompleteUtf8PrefixLength is the strict, streaming-decoder version.)
#pragma once

#include <cstddef>
#include <string_view>

namespace radixlm {

inline bool IsUtf8ContinuationByte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// Length of the longest prefix of s made of complete UTF-8 characters.
size_t WholeUtf8CharsPrefix(std::string_view s);

}  // namespace radixlm
