// UTF-8 helpers for the grammar compilers: codepoint range sets and their byte-level encoding.
//
// Every automaton in src/grammar/ runs over bytes, while regex classes and EBNF character
// classes speak about codepoints. Utf8Sequences() bridges the two: it turns a set of codepoint
// ranges into a list of byte-range sequences whose union matches exactly the UTF-8 encodings of
// those codepoints (the construction of Rust's regex-syntax utf8 module). Surrogates
// (U+D800..U+DFFF) are never encoded, so a negated class cannot produce invalid UTF-8.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace radixlm::grammar {

constexpr uint32_t kMaxCodepoint = 0x10FFFF;

struct ByteRange {
  uint8_t lo;
  uint8_t hi;  // inclusive
};
// One byte range per byte position: the sequence matches lo[i] <= byte[i] <= hi[i] for all i.
using ByteSeq = std::vector<ByteRange>;

struct CodepointRange {
  uint32_t lo;
  uint32_t hi;  // inclusive
};

// Sorted, non-overlapping, non-adjacent ranges covering the same codepoints.
std::vector<CodepointRange> NormalizeRanges(std::vector<CodepointRange> ranges);

// All scalar values in [0, kMaxCodepoint] not in `ranges` (surrogates excluded).
std::vector<CodepointRange> ComplementRanges(const std::vector<CodepointRange>& ranges);

// Byte-range sequences matching exactly the UTF-8 encodings of the codepoints in `ranges`.
std::vector<ByteSeq> Utf8Sequences(const std::vector<CodepointRange>& ranges);

// Decodes the codepoint at text[*pos] and advances *pos. Returns false (leaving *pos) on a
// malformed sequence.
bool DecodeUtf8(std::string_view text, size_t* pos, uint32_t* codepoint);

void AppendUtf8(uint32_t codepoint, std::string* out);

// Reads the `digits` hex digits of an escape (\xHH, \uHHHH, \UHHHHHHHH) at text[*pos] and
// advances *pos past them. Returns null and sets *codepoint, or the error message (bad digit,
// value beyond U+10FFFF).
const char* ReadHexEscape(std::string_view text, size_t* pos, int digits, uint32_t* codepoint);

}  // namespace radixlm::grammar
