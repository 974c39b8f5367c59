// UTF-8 and Python-str helpers for the template engine.
//
// Template values keep strings as UTF-8 bytes, but Python (and therefore jinja2) measures,
// indexes, slices, strips and case-maps strings by code point. These helpers give the engine
// those semantics. Invalid UTF-8 bytes are treated as one code point each (their byte value),
// so no input makes them fail.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace radixlm::chat {

// Decodes the code point starting at s[*pos] and advances *pos past it.
char32_t NextCodePoint(std::string_view s, size_t* pos);
void AppendUtf8(char32_t cp, std::string* out);

bool IsAscii(std::string_view s);
// Number of code points (Python len()).
size_t CodePointCount(std::string_view s);
// Byte offsets of every code point start, plus s.size() at the end.
std::vector<size_t> CodePointOffsets(std::string_view s);
std::vector<char32_t> DecodeUtf8(std::string_view s);
std::string EncodeUtf8(const std::vector<char32_t>& cps);

// Python str.isspace() for one code point.
bool IsPySpace(char32_t cp);
// Python str.isprintable() for one code point (close approximation without the full UCD:
// controls, separators other than ' ', format characters and private use are unprintable).
bool IsPyPrintable(char32_t cp);

// Python str.upper()/lower() for ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic; other
// code points are returned unchanged. ToUpper appends (it can expand: 'ß' -> "SS").
void AppendUpper(char32_t cp, std::string* out);
char32_t ToLower(char32_t cp);
std::string PyUpper(std::string_view s);
std::string PyLower(std::string_view s);

// Python str.strip()/lstrip()/rstrip(); `chars` null means whitespace.
std::string PyStrip(std::string_view s, const std::string* chars, bool left, bool right);
// Python str.split(sep=None, maxsplit=-1).
std::vector<std::string> PySplit(std::string_view s, const std::string* sep, int64_t maxsplit);
// Python str.rsplit(sep=None, maxsplit=-1).
std::vector<std::string> PyRSplit(std::string_view s, const std::string* sep, int64_t maxsplit);
// Python str.splitlines() (keepends=False).
std::vector<std::string> PySplitLines(std::string_view s);
// Python str.replace(old, new, count).
std::string PyReplace(std::string_view s, std::string_view from, std::string_view to,
                      int64_t count);

}  // namespace radixlm::chat
