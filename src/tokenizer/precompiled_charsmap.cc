#include "tokenizer/precompiled_charsmap.h"

#include <algorithm>
#include <cstring>

#include "tokenizer/grapheme.h"
#include "tokenizer/unicode.h"

namespace radixlm::tokenizer {
namespace {

// A darts-clone unit: a node's label (bit 31 set on value units, so that no byte matches
// one), whether the node ends a key (its value unit sits at its children's base), its
// children's base as an offset to xor with the node's position, and a value unit's value.
bool HasLeaf(uint32_t unit) { return ((unit >> 8) & 1) != 0; }
uint32_t Value(uint32_t unit) { return unit & 0x7FFFFFFFu; }
uint32_t Label(uint32_t unit) { return unit & 0x800000FFu; }
size_t Offset(uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }

bool IsUtf8Boundary(const std::string& s, size_t pos) {
  return pos >= s.size() || (static_cast<uint8_t>(s[pos]) & 0xC0) != 0x80;
}

}  // namespace

StatusOr<PrecompiledCharsmap> PrecompiledCharsmap::Parse(std::string_view blob) {
  const std::string what = "precompiled_charsmap";
  if (blob.size() < 4) {
    return InvalidArgument(what + ": " + std::to_string(blob.size()) +
                           " bytes, shorter than its 4-byte trie size");
  }
  uint32_t trie_bytes = 0;
  for (int i = 3; i >= 0; --i) trie_bytes = (trie_bytes << 8) | static_cast<uint8_t>(blob[i]);
  if (trie_bytes == 0 || trie_bytes % 4 != 0 || trie_bytes > blob.size() - 4) {
    return InvalidArgument(what + ": its trie size " + std::to_string(trie_bytes) +
                           " is not a positive multiple of 4 within the blob's " +
                           std::to_string(blob.size() - 4) + " bytes");
  }
  PrecompiledCharsmap out;
  out.units_.resize(trie_bytes / 4);
  for (size_t i = 0; i < out.units_.size(); ++i) {
    const auto* b = reinterpret_cast<const uint8_t*>(blob.data() + 4 + 4 * i);
    out.units_[i] = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  }
  out.strings_.assign(blob.substr(4 + trie_bytes));
  std::string sanitized;
  if (SanitizeUtf8(out.strings_, &sanitized)) {
    return InvalidArgument(what + ": its replacement strings are not valid UTF-8");
  }
  // Every node a search can reach, each once (a malformed array may loop): a value unit in the
  // array for each key, with an offset at a character boundary of the strings.
  const size_t n = out.units_.size();
  std::vector<bool> seen(n, false);
  std::vector<size_t> stack = {0};
  seen[0] = true;
  while (!stack.empty()) {
    const size_t node = stack.back();
    stack.pop_back();
    const size_t base = node ^ Offset(out.units_[node]);
    for (uint32_t c = 1; c < 256; ++c) {
      const size_t child = base ^ c;
      if (child >= n || Label(out.units_[child]) != c || seen[child]) continue;
      seen[child] = true;
      stack.push_back(child);
      if (!HasLeaf(out.units_[child])) continue;
      const size_t leaf = child ^ Offset(out.units_[child]);
      if (leaf >= n) {
        return InvalidArgument(what + ": a key's value unit " + std::to_string(leaf) +
                               " is past the trie's " + std::to_string(n) + " units");
      }
      const uint32_t value = Value(out.units_[leaf]);
      if (value > out.strings_.size() || !IsUtf8Boundary(out.strings_, value)) {
        return InvalidArgument(what + ": a key's replacement offset " + std::to_string(value) +
                               " is not the start of a character in its " +
                               std::to_string(out.strings_.size()) + " bytes of strings");
      }
    }
  }
  return out;
}

std::optional<std::string_view> PrecompiledCharsmap::Transform(std::string_view text) const {
  const size_t n = units_.size();
  size_t node = Offset(units_[0]);
  for (const char ch : text) {
    const auto c = static_cast<uint8_t>(ch);
    if (c == 0) break;
    node ^= c;
    // Parse checked every reachable value; a child slot past the array (which the `tokenizers`
    // crate would index out of bounds) is no match.
    if (node >= n || Label(units_[node]) != c) return std::nullopt;
    const bool leaf = HasLeaf(units_[node]);
    node ^= Offset(units_[node]);
    if (leaf) {  // the shortest key: the first hit, as the crate takes results[0]
      if (node >= n) return std::nullopt;  // ruled out by Parse
      const size_t begin = Value(units_[node]);
      const size_t end = strings_.find('\0', begin);
      return std::string_view(strings_).substr(
          begin, end == std::string::npos ? std::string::npos : end - begin);
    }
  }
  return std::nullopt;
}

std::string PrecompiledCharsmap::Normalize(std::string_view text) const {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = GraphemeEnd(text, pos);
    const std::string_view cluster = text.substr(pos, end - pos);
    std::optional<std::string_view> whole;
    if (cluster.size() < 6) whole = Transform(cluster);
    if (whole.has_value()) {
      out.append(*whole);
    } else {
      for (size_t c = pos; c < end;) {
        size_t next = c;
        DecodeUtf8(text, &next);
        const std::string_view part = text.substr(c, next - c);
        const std::optional<std::string_view> replaced = Transform(part);
        out.append(replaced.has_value() ? *replaced : part);
        c = next;
      }
    }
    pos = end;
  }
  return out;
}

bool DecodeBase64(std::string_view text, std::string* out) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  int8_t digit[256];
  std::memset(digit, -1, sizeof(digit));
  for (int i = 0; i < 64; ++i) digit[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  size_t len = text.size();
  if (len % 4 == 0) {
    for (int pad = 0; pad < 2 && len > 0 && text[len - 1] == '='; ++pad) --len;
  }
  if (len % 4 == 1) return false;
  out->clear();
  out->reserve(len / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < len; ++i) {
    const int8_t d = digit[static_cast<uint8_t>(text[i])];
    if (d < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(d);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  // The bits past the last whole byte must be zero (canonical encoding).
  return (acc & ((1u << bits) - 1)) == 0;
}

std::string EncodeBase64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t acc = 0;
    for (size_t k = 0; k < 3; ++k) {
      acc = (acc << 8) | (k < n ? static_cast<uint8_t>(bytes[i + k]) : 0u);
    }
    for (size_t k = 0; k < 4; ++k) {
      out.push_back(k <= n ? kAlphabet[(acc >> (18 - 6 * k)) & 63] : '=');
    }
  }
  return out;
}

}  // namespace radixlm::tokenizer
