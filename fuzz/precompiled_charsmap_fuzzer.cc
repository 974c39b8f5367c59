// PrecompiledCharsmap::Parse on arbitrary bytes (a tokenizer.json's precompiled_charsmap, base64
// decoded). A charsmap it accepts normalises fixed texts and the input itself (invalid UTF-8
// replaced) into valid UTF-8 without reading outside the blob (which Parse promises by checking
// every reachable value). DecodeBase64 runs on the input too.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tokenizer/precompiled_charsmap.h"
#include "tokenizer/unicode.h"

namespace {

using radixlm::tokenizer::PrecompiledCharsmap;

void CheckNormalize(const PrecompiledCharsmap& map, std::string_view text) {
  const std::string out = map.Normalize(text);
  std::string sanitized;
  if (radixlm::tokenizer::SanitizeUtf8(out, &sanitized)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view blob(reinterpret_cast<const char*>(data), size);
  std::string decoded;
  (void)radixlm::tokenizer::DecodeBase64(blob, &decoded);
  auto map = PrecompiledCharsmap::Parse(blob);
  if (!map.ok()) return 0;
  // Clusters of every size around the 6-byte limit, marks, CR LF, emoji, Hangul, NUL.
  static constexpr std::string_view kTexts[] = {
      "ab a\xCC\x81 e\xCC\x81\xCC\x81\xCC\x81 \r\n x\x01y",
      "\xEF\xBC\xA6\xEF\xBD\x95\xEF\xBD\x8C\xEF\xBD\x8C \xEF\xAC\x81 \xE2\x91\xA0",
      "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD \xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8 \xEA\xB0\x80",
      std::string_view("a\0b", 3),
  };
  for (std::string_view text : kTexts) CheckNormalize(*map, text);
  std::string text;
  radixlm::tokenizer::SanitizeUtf8(blob, &text);
  CheckNormalize(*map, text);
  return 0;
}
