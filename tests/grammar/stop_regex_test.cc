// StopRegexSearch (grammar/stop_regex.h) against std::regex_search, byte by byte: the first
// prefix of the text in which a match exists, and that match's (leftmost) start.
#include "grammar/stop_regex.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>

namespace radixlm::grammar {
namespace {

struct Expected {
  size_t end;    // bytes fed when the first match completes (npos: never)
  size_t start;  // its leftmost start
};

Expected Reference(const std::string& pattern, const std::string& text) {
  const std::regex re(pattern);
  for (size_t end = 1; end <= text.size(); ++end) {
    std::smatch m;
    const std::string prefix = text.substr(0, end);
    if (std::regex_search(prefix, m, re)) return {end, static_cast<size_t>(m.position(0))};
  }
  return {std::string::npos, 0};
}

TEST(StopRegexTest, FindsTheFirstMatchLikeRegexSearch) {
  const char* patterns[] = {"ab",     "a+b",       "\\d{3}", "(cat|at)s", "x[yz]*w", "b|abc",
                            "a.{2}d", "[^ab]{2}c", "(ab)+c", "\\s\\s",    "ca?t",    "d(a|b)*d"};
  std::mt19937 rng(5);
  const std::string alphabet = "abcdstwxyz 0123\n";
  for (const char* pattern : patterns) {
    auto dfa = CompileStopRegex(pattern);
    ASSERT_TRUE(dfa.ok()) << pattern;
    for (int trial = 0; trial < 200; ++trial) {
      std::string text(1 + rng() % 40, ' ');
      for (char& c : text) c = alphabet[rng() % alphabet.size()];
      const Expected want = Reference(pattern, text);
      StopRegexSearch search(*dfa);
      size_t fed = 0;
      std::optional<size_t> got;
      // Fed in pieces of 1-4 bytes, as tokens arrive.
      while (fed < text.size() && !got.has_value()) {
        const size_t n = std::min<size_t>(1 + rng() % 4, text.size() - fed);
        got = search.Feed(std::string_view(text).substr(fed, n));
        fed += n;
        if (!got.has_value()) {
          ASSERT_TRUE(want.end == std::string::npos || want.end > fed) << pattern << " " << text;
        }
      }
      if (want.end == std::string::npos) {
        EXPECT_FALSE(got.has_value()) << pattern << " in '" << text << "'";
      } else {
        ASSERT_TRUE(got.has_value()) << pattern << " in '" << text << "'";
        EXPECT_EQ(search.size(), want.end) << pattern << " in '" << text << "'";
        EXPECT_EQ(*got, want.start) << pattern << " in '" << text << "'";
      }
    }
  }
}

TEST(StopRegexTest, EarliestLiveStartMarksWhereAMatchCouldBegin) {
  auto dfa = CompileStopRegex("Answer: \\d+\\.");
  ASSERT_TRUE(dfa.ok());
  StopRegexSearch search(*dfa);
  EXPECT_FALSE(search.Feed("So the Ans").has_value());
  EXPECT_EQ(search.EarliestLiveStart(), 7u);  // "Ans" may begin a match
  EXPECT_FALSE(search.Feed("wer is clear").has_value());
  EXPECT_EQ(search.EarliestLiveStart(), search.size());  // nothing alive
  EXPECT_FALSE(search.Feed(". Answer: 42").has_value());
  EXPECT_EQ(search.EarliestLiveStart(), 24u);
  const std::optional<size_t> m = search.Feed(". Done");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(*m, 24u);
}

TEST(StopRegexTest, EmptyMatchStopsAtTheStart) {
  auto dfa = CompileStopRegex("x*");
  ASSERT_TRUE(dfa.ok());
  StopRegexSearch search(*dfa);
  const std::optional<size_t> m = search.Feed("abc");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(*m, 0u);
}

TEST(StopRegexTest, BadPatternsAreErrors) {
  EXPECT_EQ(CompileStopRegex("(ab").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CompileStopRegex("a(?=b)").status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(CompileStopRegex("(a|b){1000}(c|d){1000}").ok());
}

}  // namespace
}  // namespace radixlm::grammar
