// A SentencePiece precompiled_charsmap (the normaliser blob that tokenizer.json's "Precompiled"
// normalizer carries, base64-encoded): a little-endian uint32 trie size in bytes, a
// darts-clone double-array trie of that many bytes (uint32 units) whose keys are UTF-8 strings
// and whose values are offsets into the rest of the blob, the NUL-terminated replacement
// strings.
//
// Normalize reproduces the `tokenizers` package's Precompiled normaliser (its spm_precompiled
// crate), which differs from SentencePiece's own normaliser in two ways:
//   - a lookup takes the SHORTEST key that prefixes the text (the first common-prefix-search
//     hit), not the longest;
//   - the text is walked by extended grapheme cluster (grapheme.h): a cluster shorter than 6
//     bytes is looked up whole first, and when some key prefixes it, the cluster becomes that
//     key's replacement (the rest of the cluster is dropped: "e" U+0301 U+0301 becomes "é" when
//     "e" U+0301 is a key); otherwise each of the cluster's characters is looked up alone and
//     replaced, or copied when no key prefixes it.
// Immutable after Parse; safe to share between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace radixlm::tokenizer {

class PrecompiledCharsmap {
 public:
  // Checks the whole blob: the size field, a trie of whole units inside the blob with a root,
  // every key's value an offset inside the strings at a UTF-8 character boundary, the strings
  // valid UTF-8. InvalidArgument naming what is wrong otherwise.
  static StatusOr<PrecompiledCharsmap> Parse(std::string_view blob);

  // The replacement for the shortest key that prefixes `text` (the search stops at a NUL byte);
  // nullopt when no key does.
  std::optional<std::string_view> Transform(std::string_view text) const;

  // `text` (valid UTF-8) normalised as described above.
  std::string Normalize(std::string_view text) const;

  size_t num_units() const { return units_.size(); }

 private:
  std::vector<uint32_t> units_;  // the double array
  std::string strings_;          // the replacement strings, NUL-terminated
};

// Standard base64 (RFC 4648, with '=' padding) decoded into *out; false on any other input.
bool DecodeBase64(std::string_view text, std::string* out);
// `bytes` in standard base64 (RFC 4648, with '=' padding): DecodeBase64's inverse.
std::string EncodeBase64(std::string_view bytes);

}  // namespace radixlm::tokenizer
