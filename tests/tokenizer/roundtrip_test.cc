// Decode(Encode(s)) == s on random multilingual text (multi-byte, emoji with ZWJ sequences,
// CJK, combining marks, white-space runs) for every supported vocabulary, streaming equals
// Decode with every chunk whole UTF-8, and concurrent use gives the same results.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gguf/gguf_file.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace radixlm::tokenizer {
namespace {

using testutil::Escape;
using testutil::IdsToString;

bool IsValidUtf8(const std::string& s) {
  std::string clean;
  return !SanitizeUtf8(s, &clean);
}

// Random text from a mix of scripts; never U+2581, which SPM cannot distinguish from space.
std::string RandomText(std::mt19937& rng) {
  struct Range {
    uint32_t lo, hi;
  };
  static const Range kRanges[] = {
      {0x20, 0x7E},     {0x20, 0x7E},     {0x61, 0x7A},       {0xA0, 0xFF},
      {0x391, 0x3C9},   {0x410, 0x44F},   {0x5D0, 0x5EA},     {0x621, 0x64A},
      {0x900, 0x97F},   {0xE01, 0xE3A},   {0x300, 0x36F},     {0x3040, 0x30FF},
      {0x4E00, 0x9FFF}, {0xAC00, 0xD7A3}, {0x1F300, 0x1F64F}, {0x1F900, 0x1F9FF},
      {0x2000, 0x206F}, {0xFF01, 0xFF5E}, {0x10400, 0x1044F},
  };
  std::string s;
  const int n = std::uniform_int_distribution<int>(0, 60)(rng);
  for (int i = 0; i < n; ++i) {
    const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
    if (kind == 0) {  // white-space run
      static const char* kSpace[] = {" ", "  ", "   ", "\n", "\n\n", "\t", "\r\n", " \n "};
      s += kSpace[std::uniform_int_distribution<int>(0, 7)(rng)];
    } else if (kind == 1) {  // emoji ZWJ sequence / variation selector
      AppendUtf8(std::uniform_int_distribution<uint32_t>(0x1F466, 0x1F469)(rng), &s);
      AppendUtf8(0x200D, &s);
      AppendUtf8(std::uniform_int_distribution<uint32_t>(0x1F466, 0x1F469)(rng), &s);
      if (rng() % 2) AppendUtf8(0xFE0F, &s);
    } else {
      const Range& r =
          kRanges[std::uniform_int_distribution<size_t>(0, std::size(kRanges) - 1)(rng)];
      const uint32_t cp = std::uniform_int_distribution<uint32_t>(r.lo, r.hi)(rng);
      if (cp == 0x2581) continue;
      AppendUtf8(cp, &s);
    }
  }
  return s;
}

std::vector<std::string> RandomTexts(uint32_t seed, int count) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) out.push_back(RandomText(rng));
  out.push_back("\xF0\x9F\x98\x80\xF0\x9F\x98\x81 \xE4\xBD\xA0\xE5\xA5\xBD \xD9\x85\xD8\xB1");
  return out;
}

void CheckRoundTrips(const Tokenizer& tok, const std::string& name,
                     const std::vector<std::string>& texts) {
  int failures = 0;
  for (const std::string& text : texts) {
    const std::vector<int32_t> ids = tok.Encode(text, false, false);
    const std::string decoded = tok.Decode(ids);
    if (decoded != text && ++failures <= 5) {
      ADD_FAILURE() << name << ": \"" << Escape(text) << "\" -> " << IdsToString(ids) << " -> \""
                    << Escape(decoded) << "\"";
    }
    StreamingDetokenizer stream(tok);
    std::string joined;
    for (int32_t id : ids) {
      const std::string chunk = stream.Feed(id);
      EXPECT_TRUE(IsValidUtf8(chunk)) << name << ": chunk \"" << Escape(chunk) << "\"";
      joined += chunk;
    }
    joined += stream.Flush();
    EXPECT_EQ(joined, decoded) << name;
  }
  EXPECT_EQ(failures, 0) << name;
}

class RoundTripTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RoundTripTest, RandomTextSurvivesEncodeDecodeAndStreaming) {
  auto tok = testutil::LoadTokenizerFile(testutil::VocabPath(GetParam()));
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  CheckRoundTrips(**tok, GetParam(), RandomTexts(1234, 150));
}

INSTANTIATE_TEST_SUITE_P(Vocabs, RoundTripTest,
                         ::testing::ValuesIn(testutil::SupportedVocabNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string s;
                           for (char c : info.param) s.push_back(std::isalnum(c) ? c : '_');
                           return s;
                         });

TEST(RoundTripTest, Gemma3RandomText) {
  const char* env = std::getenv("RADIXLM_DEFAULT_MODEL");
  if (env == nullptr || !std::filesystem::is_regular_file(env)) {
    GTEST_SKIP() << "RADIXLM_DEFAULT_MODEL is unset or not a file";
  }
  auto tok = testutil::LoadTokenizerFile(env);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  CheckRoundTrips(**tok, "gemma3", RandomTexts(99, 300));
}

TEST(ConcurrencyTest, ParallelEncodeDecodeMatchesSerial) {
  for (const char* name : {"gpt-2", "llama-spm"}) {
    auto tok = testutil::LoadTokenizerFile(testutil::VocabPath(name));
    ASSERT_TRUE(tok.ok()) << tok.status().ToString();
    const std::vector<std::string> texts = RandomTexts(7, 60);
    std::vector<std::vector<int32_t>> expected;
    for (const std::string& t : texts) expected.push_back((*tok)->Encode(t, true, true));

    std::vector<int> errors(4, 0);
    std::vector<std::thread> threads;
    for (int w = 0; w < 4; ++w) {
      threads.emplace_back([&, w] {
        for (int round = 0; round < 5; ++round) {
          for (size_t i = 0; i < texts.size(); ++i) {
            const std::vector<int32_t> ids = (*tok)->Encode(texts[i], true, true);
            if (ids != expected[i] ||
                (*tok)->Decode(ids, true) != (*tok)->Decode(expected[i], true)) {
              ++errors[w];
            }
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    for (int w = 0; w < 4; ++w) EXPECT_EQ(errors[w], 0) << name << " worker " << w;
  }
}

}  // namespace
}  // namespace radixlm::tokenizer
