// Utf8Sequences must match exactly the encodings of the codepoints in the ranges: checked by
// brute force over every scalar value against a few tricky range sets.
#include "grammar/utf8_ranges.h"

#include <gtest/gtest.h>

#include <string>

namespace radixlm::grammar {
namespace {

bool SequencesMatch(const std::vector<ByteSeq>& seqs, const std::string& bytes) {
  for (const ByteSeq& seq : seqs) {
    if (seq.size() != bytes.size()) continue;
    bool ok = true;
    for (size_t i = 0; i < seq.size() && ok; ++i) {
      const auto b = static_cast<uint8_t>(bytes[i]);
      ok = seq[i].lo <= b && b <= seq[i].hi;
    }
    if (ok) return true;
  }
  return false;
}

TEST(Utf8RangesTest, SequencesMatchExactlyTheRangeBruteForce) {
  const std::vector<std::vector<CodepointRange>> cases = {
      {{0, kMaxCodepoint}},
      {{'a', 'z'}, {0xE9, 0xEB}},
      {{0x7F, 0x800}},
      {{0xD7FF, 0xE000}},  // spans the surrogates, which must be left out
      {{0xFFFF, 0x10000}},
      {{0x1F600, 0x1F64F}, {0x10FFFF, 0x10FFFF}},
      ComplementRanges({{'\n', '\n'}}),
  };
  for (const auto& ranges : cases) {
    const std::vector<ByteSeq> seqs = Utf8Sequences(ranges);
    for (uint32_t cp = 0; cp <= kMaxCodepoint; cp += (cp < 0x11000 ? 1 : 97)) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      bool in_range = false;
      for (const CodepointRange& r : ranges) in_range = in_range || (r.lo <= cp && cp <= r.hi);
      std::string bytes;
      AppendUtf8(cp, &bytes);
      ASSERT_EQ(SequencesMatch(seqs, bytes), in_range) << "U+" << std::hex << cp;
    }
    // No sequence may match an encoded surrogate.
    EXPECT_FALSE(SequencesMatch(seqs, "\xED\xA0\x80"));
    EXPECT_FALSE(SequencesMatch(seqs, "\xED\xBF\xBF"));
  }
}

TEST(Utf8RangesTest, DecodeRejectsMalformed) {
  for (const std::string bad : {"\xC3", "\xC0\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\x80"}) {
    size_t pos = 0;
    uint32_t cp;
    EXPECT_FALSE(DecodeUtf8(bad, &pos, &cp));
    EXPECT_EQ(pos, 0u);
  }
  size_t pos = 0;
  uint32_t cp = 0;
  ASSERT_TRUE(DecodeUtf8("😀", &pos, &cp));
  EXPECT_EQ(cp, 0x1F600u);
  EXPECT_EQ(pos, 4u);
}

}  // namespace
}  // namespace radixlm::grammar
