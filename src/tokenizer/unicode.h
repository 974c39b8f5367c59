// UTF-8 helpers and the GPT-2 byte <-> unicode mapping used by byte-level BPE.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace radixlm::tokenizer {

inline constexpr uint32_t kReplacementChar = 0xFFFD;

// Length of the UTF-8 sequence a lead byte announces, judged by its high nibble only (1 for
// ASCII and for stray continuation bytes). This is llama.cpp's unicode_len_utf8, which the SPM
// and BPE symbol splitting use; it never looks at the following bytes.
inline size_t Utf8LenFromLead(uint8_t lead) {
  static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[lead >> 4];
}

// Decodes one strictly valid (RFC 3629) code point at s[*pos] and advances *pos. On an invalid
// or truncated sequence returns kReplacementChar and advances by one byte.
uint32_t DecodeUtf8(std::string_view s, size_t* pos);

void AppendUtf8(uint32_t code_point, std::string* out);

// Copy of `text` with every byte that is not part of a valid UTF-8 sequence replaced by U+FFFD
// (one per byte, as llama.cpp does). Returns true if anything was replaced.
bool SanitizeUtf8(std::string_view text, std::string* out);

// Copy of `text` with every maximal ill-formed subsequence (a lead byte and the continuation
// bytes that were valid after it, or one stray byte) replaced by one U+FFFD: Unicode's
// "substitution of maximal subparts", as Rust's String::from_utf8_lossy and Python's
// errors="replace" do (Hugging Face tokenizers' texts). Returns true if anything was replaced.
bool SanitizeUtf8Lossy(std::string_view text, std::string* out);

// Length of the longest prefix of `bytes` that does not end inside an incomplete (but so far
// well-formed) multi-byte sequence: the part a streaming decoder may emit now. Bytes that can
// never start or continue a valid sequence are not held back.
size_t CompleteUtf8PrefixLength(std::string_view bytes);

// White space as llama.cpp's unicode tables define it (ASCII \t\n\v\f\r and space, U+0085,
// U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).
bool IsUnicodeWhitespace(uint32_t code_point);

inline bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// GPT-2 byte-level mapping: every byte has a printable code point (bytes 0x21..0x7E,
// 0xA1..0xAC, 0xAE..0xFF map to themselves, the other 68 to U+0100 upwards).
// ByteToUnicode returns that code point's UTF-8; UnicodeToByte returns -1 for code points
// outside the mapping.
const std::string& ByteToUnicode(uint8_t byte);
int UnicodeToByte(uint32_t code_point);

}  // namespace radixlm::tokenizer
