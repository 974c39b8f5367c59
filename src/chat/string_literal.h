// Decoding of template string literals the way jinja2 does it: Python's "unicode-escape" codec
// applied to the text between the quotes (non-ASCII characters pass through unchanged).
#pragma once

#include <string>
#include <string_view>

namespace radixlm::chat {

// Decodes `body` (the literal without its quotes) into *out. Handles \\ \' \" \a \b \f \n \r
// \t \v, octal \ooo, \xXX, \uXXXX, \UXXXXXXXX and backslash-newline; unknown escapes stay as
// written, like Python. Returns false with *error set for a truncated or out-of-range escape.
bool DecodeStringLiteral(std::string_view body, std::string* out, std::string* error);

}  // namespace radixlm::chat
