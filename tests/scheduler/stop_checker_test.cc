#include "scheduler/stop_checker.h"

#include <gtest/gtest.h>

#include "testing/fake_token_text.h"

namespace radixlm {
namespace {

// Token ids of the fake vocabulary.
constexpr int32_t kA = 3, kB = 4, kC = 5, kSpace = 29, kAb = 43, kThe = 44, kE1 = 46, kE2 = 47;

class StopCheckerTest : public ::testing::Test {
 protected:
  StopChecker Make(const SamplingParams& p, int64_t max_new = 100) {
    return StopChecker(p, max_new, codec_.eog_token_ids(),
                       codec_.NewDecoder(p.skip_special_tokens));
  }
  // Feeds tokens; returns the finish reason (if any) and the concatenated TakeText output.
  std::optional<FinishReason> Feed(StopChecker& s, const std::vector<int32_t>& tokens,
                                   std::string* text) {
    int64_t n = 0;
    for (int32_t t : tokens) {
      auto f = s.OnToken(t, ++n);
      *text += s.TakeText();
      if (f.has_value()) return f;
    }
    return std::nullopt;
  }
  FakeTokenTextCodec codec_;
};

TEST_F(StopCheckerTest, LengthAndEos) {
  SamplingParams p;
  StopChecker s = Make(p, 3);
  std::string text;
  auto f = Feed(s, {kA, kB, kC, kA}, &text);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(*f, FinishReason::Length(3));
  EXPECT_EQ(text, "abc");

  StopChecker e = Make(p);
  text.clear();
  f = Feed(e, {kA, FakeTokenTextCodec::kEos, kB}, &text);
  EXPECT_EQ(*f, FinishReason::StopToken(FakeTokenTextCodec::kEos));
  EXPECT_EQ(text, "a");
}

TEST_F(StopCheckerTest, IgnoreEosAndStopTokenIdsAndMinNewTokens) {
  SamplingParams p;
  p.ignore_eos = true;
  p.stop_token_ids = {kC};
  p.min_new_tokens = 3;
  StopChecker s = Make(p);
  std::string text;
  // EOS ignored; kC at output 2 is below min_new_tokens; kC at 4 stops (trimmed).
  auto f = Feed(s, {FakeTokenTextCodec::kEos, kC, kA, kC, kB}, &text);
  EXPECT_EQ(*f, FinishReason::StopToken(kC));
  EXPECT_EQ(text, "ca");
  p.no_stop_trim = true;
  StopChecker k = Make(p);
  text.clear();
  Feed(k, {kA, kA, kA, kC}, &text);
  EXPECT_EQ(text, "aaac");
}

TEST_F(StopCheckerTest, StopStringAcrossTokensIsTrimmedAndHeldBack) {
  SamplingParams p;
  p.stop = {"bthe"};
  StopChecker s = Make(p);
  std::string text;
  // "a" "ab" "the": "bthe" spans two tokens, starting inside "ab".
  int64_t n = 0;
  EXPECT_FALSE(s.OnToken(kA, ++n).has_value());
  text += s.TakeText();
  EXPECT_EQ(text, "a");
  EXPECT_FALSE(s.OnToken(kAb, ++n).has_value());
  text += s.TakeText();
  EXPECT_EQ(text, "aa");  // "b" held back: it may start "bthe"
  auto f = s.OnToken(kThe, ++n);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(*f, FinishReason::StopString("bthe"));
  text += s.TakeText();
  EXPECT_EQ(text, "aa");
}

TEST_F(StopCheckerTest, HeldBackTextIsReleasedWhenItCannotMatch) {
  SamplingParams p;
  p.stop = {"abc", "zz"};
  StopChecker s = Make(p);
  std::string text;
  auto f = Feed(s, {kA, kB, kSpace, kA}, &text);
  EXPECT_FALSE(f.has_value());
  EXPECT_EQ(text, "ab ");
  p.no_stop_trim = true;
  StopChecker k = Make(p);
  text.clear();
  f = Feed(k, {kA, kA, kB, kC, kA}, &text);
  EXPECT_EQ(*f, FinishReason::StopString("abc"));
  EXPECT_EQ(text, "aabc");
}

TEST_F(StopCheckerTest, EarliestStopStringWinsAndUtf8IsHeldWhole) {
  SamplingParams p;
  p.stop = {"c", "bc"};
  StopChecker s = Make(p);
  std::string text;
  auto f = Feed(s, {kE1, kE2, kA, kB, kC}, &text);
  EXPECT_EQ(*f, FinishReason::StopString("bc"));
  EXPECT_EQ(text,
            "\xC3\xA9"
            "a");
  // A character split over two tokens is never handed out half.
  SamplingParams q;
  StopChecker u = Make(q);
  u.OnToken(kE1, 1);
  EXPECT_EQ(u.TakeText(), "");
  u.OnToken(kE2, 2);
  EXPECT_EQ(u.TakeText(), "\xC3\xA9");
}

TEST_F(StopCheckerTest, StopRegexCutsAtTheMatchAndNeverEmitsWhatItCuts) {
  SamplingParams p;
  p.stop_regex = {"b+c", "x"};
  StopChecker s = Make(p);
  int64_t n = 0;
  EXPECT_FALSE(s.OnToken(kA, ++n).has_value());
  EXPECT_EQ(s.TakeText(), "a");
  EXPECT_FALSE(s.OnToken(kB, ++n).has_value());
  EXPECT_EQ(s.TakeText(), "");  // "b" may start a match: held back
  EXPECT_FALSE(s.OnToken(kB, ++n).has_value());
  EXPECT_EQ(s.TakeText(), "");
  auto f = s.OnToken(kC, ++n);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(*f, FinishReason::StopString("b+c"));
  EXPECT_EQ(s.TakeText(), "");
  EXPECT_EQ(s.text(), "a");

  p.no_stop_trim = true;
  StopChecker k = Make(p);
  std::string text;
  f = Feed(k, {kA, kB, kC, kA}, &text);
  EXPECT_EQ(*f, FinishReason::StopString("b+c"));
  EXPECT_EQ(text, "abc");
}

TEST_F(StopCheckerTest, StopRegexAcrossTokensAfterStopStrings) {
  SamplingParams p;
  p.stop_regex = {"t?he a"};
  StopChecker s = Make(p);
  std::string text;
  // "ab the ab": the match "the a" starts inside the token "the" and ends inside "ab".
  auto f = Feed(s, {kAb, kSpace, kThe, kSpace, kAb, kC}, &text);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(*f, FinishReason::StopString("t?he a"));
  EXPECT_EQ(text, "ab ");
  // A stop string that matches with the same token wins (strings are checked first).
  p.stop = {"he"};
  StopChecker both = Make(p);
  text.clear();
  f = Feed(both, {kAb, kSpace, kThe, kSpace, kAb}, &text);
  EXPECT_EQ(*f, FinishReason::StopString("he"));
  EXPECT_EQ(text, "ab t");
  // Without a match the whole text comes out, the held-back tail at the end.
  SamplingParams q;
  q.stop_regex = {"c+z"};
  q.max_new_tokens = 3;
  StopChecker none = Make(q, 3);
  text.clear();
  f = Feed(none, {kA, kC, kC}, &text);
  EXPECT_EQ(*f, FinishReason::Length(3));
  EXPECT_EQ(text, "acc");
}

}  // namespace
}  // namespace radixlm
