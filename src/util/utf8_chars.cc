#include "util/utf8_chars.h"

namespace radixlm {

size_t WholeUtf8CharsPrefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t len = c < 0x80           ? 1
                       : (c >> 5) == 0x6  ? 2
                       : (c >> 4) == 0xE  ? 3
                       : (c >> 3) == 0x1E ? 4
                                          : 1;
    if (i + len > s.size()) break;
    i += len;
  }
  return i;
}

}  // namespace radixlm
