// PrecompiledCharsmap on hand-made SentencePiece charsmaps: the double-array walk, the shortest
// key winning, whole grapheme clusters looked up first (the rest of a matched cluster dropped),
// and malformed blobs refused with a message naming what is wrong. The real charsmaps (nmt_nfkc
// and the grapheme probe) are checked against the `tokenizers` package in
// tests/hf/hf_precompiled_test.cc.
#include "tokenizer/precompiled_charsmap.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace radixlm::tokenizer {
namespace {

// A darts-clone double array of 1024 units holding the keys "a" -> "A" and "ab" -> "X": the
// root's children at 256 ^ byte, each node's value unit at its children's base.
constexpr uint32_t kLeaf = 1u << 8;      // the node ends a key
constexpr uint32_t kIsValue = 1u << 31;  // value units carry bit 31, so no label matches
constexpr size_t kNodeA = 256 ^ 'a';     // 353, children's base 353 ^ 512 = 865
constexpr size_t kValueA = 865;
constexpr size_t kNodeAB = kValueA ^ 'b';  // 771, children's base 771 ^ 256 = 515
constexpr size_t kValueAB = kNodeAB ^ 256;

struct Blob {
  std::vector<uint32_t> units = std::vector<uint32_t>(1024, 0);
  std::string strings = std::string("A\0X\0", 4);

  Blob() {
    units[0] = 256u << 10;
    units[kNodeA] = 'a' | kLeaf | (512u << 10);
    units[kValueA] = kIsValue | 0;
    units[kNodeAB] = 'b' | kLeaf | (256u << 10);
    units[kValueAB] = kIsValue | 2;
  }

  std::string Bytes(uint32_t trie_bytes) const {
    std::string out;
    auto put = [&out](uint32_t v) {
      for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    };
    put(trie_bytes);
    for (uint32_t u : units) put(u);
    return out + strings;
  }
  std::string Bytes() const { return Bytes(static_cast<uint32_t>(units.size() * 4)); }
};

TEST(PrecompiledCharsmapTest, ShortestKeyWins) {
  auto map = PrecompiledCharsmap::Parse(Blob().Bytes());
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(map->num_units(), 1024u);
  EXPECT_EQ(map->Transform("a").value_or("-"), "A");
  EXPECT_EQ(map->Transform("ab").value_or("-"), "A");  // "a" prefixes it and is shorter
  EXPECT_EQ(map->Transform("abc").value_or("-"), "A");
  EXPECT_FALSE(map->Transform("b").has_value());
  EXPECT_FALSE(map->Transform("").has_value());
  EXPECT_FALSE(map->Transform(std::string("\0a", 2)).has_value());  // the search stops at NUL
}

TEST(PrecompiledCharsmapTest, ClustersAreLookedUpWhole) {
  auto map = PrecompiledCharsmap::Parse(Blob().Bytes());
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(map->Normalize("ab"), "Ab");  // two clusters; "b" has no key and is copied
  EXPECT_EQ(map->Normalize("cab a"), "cAb A");
  // "a" + U+0301 is one cluster of 3 bytes: "a" prefixes it, the accent is dropped.
  EXPECT_EQ(map->Normalize("a\xCC\x81"), "A");
  // A cluster of 6 bytes or more is looked up character by character: the accents stay.
  EXPECT_EQ(map->Normalize("a\xCC\x81\xCC\x81\xCC\x81"), "A\xCC\x81\xCC\x81\xCC\x81");
  // U+0301 alone after a control character (its own cluster) has no key: copied.
  EXPECT_EQ(map->Normalize("\x01\xCC\x81"), "\x01\xCC\x81");
  EXPECT_EQ(map->Normalize(""), "");
}

TEST(PrecompiledCharsmapTest, MalformedBlobsAreRefused) {
  const std::string good = Blob().Bytes();
  struct Case {
    std::string blob;
    std::string named;
  };
  std::vector<Case> cases = {
      {"", "shorter than its 4-byte trie size"},
      {good.substr(0, 3), "shorter than its 4-byte trie size"},
      {Blob().Bytes(0), "trie size 0"},
      {Blob().Bytes(4098), "trie size 4098"},
      {Blob().Bytes(1 << 20), "trie size 1048576"},
      {good.substr(0, 4 + 1024 * 4 - 4), "trie size 4096"},
  };
  Blob bad_value;  // "ab"'s value past the strings
  bad_value.units[kValueAB] = kIsValue | 9;
  cases.push_back({bad_value.Bytes(), "replacement offset 9"});
  Blob mid_char;  // an offset inside a two-byte character
  mid_char.strings = std::string("\xC3\xA9\0X\0", 5);
  mid_char.units[kValueA] = kIsValue | 1;
  cases.push_back({mid_char.Bytes(), "replacement offset 1"});
  Blob leaf_outside;  // "ab"'s value unit past the array
  leaf_outside.units[kNodeAB] = 'b' | kLeaf | (1024u << 10);
  cases.push_back({leaf_outside.Bytes(), "value unit " + std::to_string(kNodeAB ^ 1024)});
  Blob bad_utf8;
  bad_utf8.strings = std::string("A\0\xFF\0", 4);
  cases.push_back({bad_utf8.Bytes(), "not valid UTF-8"});
  for (const Case& c : cases) {
    auto map = PrecompiledCharsmap::Parse(c.blob);
    ASSERT_FALSE(map.ok()) << c.named;
    EXPECT_NE(map.status().message().find("precompiled_charsmap"), std::string::npos);
    EXPECT_NE(map.status().message().find(c.named), std::string::npos) << map.status().message();
  }
}

// A node that loops back to an ancestor (a malformed array) ends the check instead of hanging.
TEST(PrecompiledCharsmapTest, LoopingArrayTerminates) {
  Blob loop;
  loop.units[kNodeA] = 'a' | (512u << 10);  // no value; a child 'b' that points back
  loop.units[kNodeAB] = 'b' | ((kNodeAB ^ 256u) << 10);
  auto map = PrecompiledCharsmap::Parse(loop.Bytes());
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_FALSE(map->Transform("abababab").has_value());
}

TEST(PrecompiledCharsmapTest, Base64) {
  std::string out;
  EXPECT_TRUE(DecodeBase64("", &out));
  EXPECT_EQ(out, "");
  EXPECT_TRUE(DecodeBase64("QQ==", &out));
  EXPECT_EQ(out, "A");
  EXPECT_TRUE(DecodeBase64("QUI=", &out));
  EXPECT_EQ(out, "AB");
  EXPECT_TRUE(DecodeBase64("QUJD", &out));
  EXPECT_EQ(out, "ABC");
  EXPECT_TRUE(DecodeBase64("+/8A", &out));
  EXPECT_EQ(out, std::string("\xFB\xFF\x00", 3));
  EXPECT_FALSE(DecodeBase64("Q", &out));
  EXPECT_FALSE(DecodeBase64("QQ=A", &out));
  EXPECT_FALSE(DecodeBase64("QR==", &out));  // non-zero bits past the last byte
  EXPECT_FALSE(DecodeBase64("QU I=", &out));
}

}  // namespace
}  // namespace radixlm::tokenizer
