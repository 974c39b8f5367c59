// Jump-forward (constrained decoding) in the scheduler, over the fake model and vocabulary.
//
// The fake runner checks every prefix slot it is given against the token sequence (position
// and rolling hash), so a request whose KV were not fixed up after a retokenization fails its
// next forward; its logits are a function of the whole sequence, so what the model samples
// after a jump is what a plain prefill of the same tokens gives.
#include <gtest/gtest.h>

#include <future>
#include <regex>
#include <string>
#include <vector>

#include "scheduler_harness.h"

namespace radixlm::testing {
namespace {

std::shared_ptr<const grammar::CompiledGrammar> CompileRegex(const std::string& regex) {
  return CompileForFakeVocab(grammar::GrammarKind::kRegex, regex);
}

SchedulerConfig JumpConfig(bool enable) {
  SchedulerConfig c = SmallConfig();
  c.enable_jump_forward = enable;
  return c;
}

RequestInput Constrained(uint64_t id, std::vector<int32_t> prompt, int32_t max_new_tokens,
                         std::shared_ptr<const grammar::CompiledGrammar> grammar) {
  RequestInput in = SchedulerHarness::Greedy(id, std::move(prompt), max_new_tokens,
                                             /*ignore_eos=*/false);
  in.grammar = std::move(grammar);
  return in;
}

// One choice, a long forced run, one free digit: "(a|c)b the end[0-9]".
constexpr const char* kForcedRegex = "(a|c)b the end[0-9]";

TEST(JumpForwardTest, ForcedTextCostsNoForwardPassesAndIsRetokenized) {
  const auto grammar = CompileRegex(kForcedRegex);
  for (bool enable : {true, false}) {
    SchedulerHarness h({.config = JumpConfig(enable)});
    PromptGen gen(7);
    constexpr int kRequests = 24;
    for (int i = 0; i < kRequests; ++i) h.Add(Constrained(i, gen.Tokens(6 + i % 5), 64, grammar));
    h.RunUntilIdle();
    for (int i = 0; i < kRequests; ++i) {
      const Collected& c = h.result(i);
      SCOPED_TRACE("request " + std::to_string(i) + (enable ? " (jump-forward)" : " (mask only)"));
      ASSERT_TRUE(c.finish.has_value());
      EXPECT_EQ(c.finish->kind, FinishReason::Kind::kStopToken);
      EXPECT_TRUE(std::regex_match(c.text, std::regex(kForcedRegex))) << c.text;
      ASSERT_GE(c.ids.size(), 3u);
      EXPECT_EQ(c.ids.back(), FakeTokenTextCodec::kEos);
      if (enable) {
        // The model samples the first token and the digit; the rest, EOS included, is placed
        // without a pass: two passes whatever the text. (No token longer than "d" starts with
        // it, so the last forced token is not left to the model.)
        EXPECT_EQ(c.forward_passes, 2);
        EXPECT_EQ(c.forward_passes_saved, c.completion_tokens - 2);
        EXPECT_GT(c.jump_forward_tokens, 0);
        // The tokens before the digit are the tokenizer's own for that text (the sampled 'a'
        // fuses with the forced 'b' into "ab").
        const std::string head = c.text.substr(0, c.text.size() - 1);
        auto expected = h.codec().EncodeContinuation(head);
        ASSERT_TRUE(expected.ok());
        EXPECT_EQ(std::vector<int32_t>(c.ids.begin(), c.ids.end() - 2), *expected) << c.text;
      } else {
        EXPECT_EQ(c.forward_passes, c.completion_tokens);
        EXPECT_EQ(c.forward_passes_saved, 0);
        EXPECT_EQ(c.jump_forward_tokens, 0);
      }
    }
    const SchedulerStats stats = h.scheduler().GetStats();
    if (enable) {
      EXPECT_GE(stats.jump_forwards, kRequests);
      EXPECT_GT(stats.jump_forward_tokens, 0);
    } else {
      EXPECT_EQ(stats.jump_forwards, 0);
    }
    EXPECT_GT(stats.grammar_masks, 0);
  }
}

TEST(JumpForwardTest, FewerForwardPassesThanMaskOnly) {
  const auto grammar = CompileRegex("[0-9], the thing is (on|off), the ring is (up|down)\\.");
  int64_t passes[2] = {0, 0};
  for (bool enable : {true, false}) {
    SchedulerHarness h({.config = JumpConfig(enable)});
    PromptGen gen(11);
    for (int i = 0; i < 8; ++i) h.Add(Constrained(i, gen.Tokens(5), 80, grammar));
    h.RunUntilIdle();
    for (int i = 0; i < 8; ++i) {
      EXPECT_TRUE(
          std::regex_match(h.result(i).text, std::regex("[0-9], the thing is (on|off), the ring is "
                                                        "(up|down)\\.")))
          << h.result(i).text;
      passes[enable ? 0 : 1] += h.result(i).forward_passes;
    }
  }
  EXPECT_LT(passes[0] * 3, passes[1]) << passes[0] << " vs " << passes[1];
}

// The tree keeps the KV from before a jump, and the final tokens: a later request whose prompt
// is a finished request's prompt + output finds almost all of it cached, and its first sampled
// token is what a fresh computation gives (the runner checks every prefix slot).
TEST(JumpForwardTest, CacheStaysConsistentForLaterRequests) {
  const auto grammar = CompileRegex(kForcedRegex);
  SchedulerHarness h({.config = JumpConfig(true)});
  PromptGen gen(3);
  const std::vector<int32_t> prompt = gen.Tokens(12);
  h.Add(Constrained(1, prompt, 64, grammar));
  h.RunUntilIdle();
  const Collected& first = h.result(1);
  ASSERT_TRUE(first.finish.has_value());
  std::vector<int32_t> full = prompt;
  full.insert(full.end(), first.ids.begin(), first.ids.end() - 1);  // without EOS
  h.Add(SchedulerHarness::Greedy(2, full, 4));
  h.RunUntilIdle();
  const Collected& second = h.result(2);
  // Everything but the last two tokens (the digit had no KV at finish; the last prompt token's
  // logits are computed anyway).
  EXPECT_GE(second.cached_tokens, static_cast<int64_t>(full.size()) - 2);
  EXPECT_EQ(second.ids, h.runner().ReferenceGreedy(full, 4));
}

TEST(JumpForwardTest, MaxNewTokensCutsTheForcedText) {
  const auto grammar = CompileRegex(kForcedRegex);
  for (int32_t budget : {2, 3, 4, 5}) {
    SchedulerHarness h({.config = JumpConfig(true)});
    h.Add(Constrained(1, {5, 6, 7, 8}, budget, grammar));
    h.RunUntilIdle();
    const Collected& c = h.result(1);
    ASSERT_TRUE(c.finish.has_value());
    EXPECT_EQ(c.finish->kind, FinishReason::Kind::kLength) << budget;
    EXPECT_EQ(c.completion_tokens, budget);
    const std::string full_a = "ab the end", full_c = "cb the end";
    EXPECT_TRUE(full_a.starts_with(c.text) || full_c.starts_with(c.text)) << c.text;
  }
}

TEST(JumpForwardTest, StopStringInsideForcedText) {
  const auto grammar = CompileRegex(kForcedRegex);
  SchedulerHarness h({.config = JumpConfig(true)});
  RequestInput in = Constrained(1, {5, 6, 7, 8}, 64, grammar);
  in.params.stop = {"the"};
  h.Add(std::move(in));
  h.RunUntilIdle();
  const Collected& c = h.result(1);
  ASSERT_TRUE(c.finish.has_value());
  EXPECT_EQ(c.finish->kind, FinishReason::Kind::kStopString);
  EXPECT_EQ(c.finish->matched_text, "the");
  EXPECT_TRUE(c.text == "ab " || c.text == "cb ") << c.text;
}

TEST(JumpForwardTest, ForcedTokensHaveNoLogprob) {
  const auto grammar = CompileRegex(kForcedRegex);
  SchedulerHarness h({.config = JumpConfig(true)});
  RequestInput in = Constrained(1, {5, 6, 7, 8}, 64, grammar);
  in.return_logprob = true;
  h.Add(std::move(in));
  h.RunUntilIdle();
  const Collected& c = h.result(1);
  ASSERT_EQ(c.output_logprobs.size(), c.ids.size());
  int64_t without = 0;
  for (size_t i = 0; i < c.ids.size(); ++i) {
    EXPECT_EQ(c.output_logprobs[i].token, c.ids[i]);
    if (!c.output_logprobs[i].logprob.has_value()) ++without;
  }
  // Placed tokens include a sampled token that retokenization replaced ('a' → "ab").
  EXPECT_EQ(without, c.jump_forward_tokens);
  EXPECT_GE(without, c.completion_tokens - 2);
}

// Text forced before the first token is appended on arrival; the first prefill covers it. A
// grammar with one string finishes without any forward pass.
TEST(JumpForwardTest, ForcedTextAtTheStart) {
  SchedulerHarness h({.config = JumpConfig(true)});
  h.Add(Constrained(1, {5, 6, 7}, 32, CompileRegex("the end is (a|b)")));
  h.Add(Constrained(2, {5, 6, 7}, 32, CompileRegex("the fixed text\\.")));
  h.RunUntilIdle();
  const Collected& one = h.result(1);
  EXPECT_TRUE(one.text == "the end is a" || one.text == "the end is b") << one.text;
  EXPECT_EQ(one.forward_passes, 1);
  EXPECT_EQ(one.finish->kind, FinishReason::Kind::kStopToken);
  auto expected = h.codec().EncodeContinuation("the end is ");
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(std::vector<int32_t>(one.ids.begin(), one.ids.begin() + expected->size()), *expected);
  const Collected& two = h.result(2);
  EXPECT_EQ(two.text, "the fixed text.");
  EXPECT_EQ(two.forward_passes, 0);
  EXPECT_EQ(two.finish->kind, FinishReason::Kind::kStopToken);
  EXPECT_EQ(two.ids.back(), FakeTokenTextCodec::kEos);
}

// A forced token that a longer allowed token starts with is left to the model: "t" before a
// free "he" / "ag" could be the vocabulary's "the".
TEST(JumpForwardTest, LastForcedTokenThatMayFuseIsSampled) {
  const auto grammar = CompileRegex("(a|c)b, t(he|ag)");
  SchedulerHarness h({.config = JumpConfig(true)});
  PromptGen gen(9);
  for (int i = 0; i < 16; ++i) {
    RequestInput in = Constrained(i, gen.Tokens(6), 32, grammar);
    in.return_logprob = true;
    h.Add(std::move(in));
  }
  h.RunUntilIdle();
  for (int i = 0; i < 16; ++i) {
    const Collected& c = h.result(i);
    EXPECT_TRUE(std::regex_match(c.text, std::regex("(a|c)b, t(he|ag)"))) << c.text;
    ASSERT_EQ(c.output_logprobs.size(), c.ids.size());
    bool seen_t = false;
    for (const LogprobEntry& e : c.output_logprobs) {
      if (h.codec().TokenText(e.token).starts_with("t")) {
        seen_t = true;
        EXPECT_TRUE(e.logprob.has_value()) << c.text << ": the 't' was placed, not sampled";
        break;
      }
    }
    EXPECT_TRUE(seen_t) << c.text;
    EXPECT_GT(c.jump_forward_tokens, 0) << c.text;
  }
}

// Streamed token ids are never taken back: the deltas concatenate to the final ids (the
// harness checks completion_tokens against them after every output) and the text deltas to the
// final text, for n concurrent requests sharing a prompt.
TEST(JumpForwardTest, SharedPromptsAndSamplingStayConsistent) {
  const auto grammar = CompileRegex("(yes|no), the (cat|dog) is (a|b)[0-9]{1,3}ing\\.");
  SchedulerHarness h({.config = JumpConfig(true)});
  PromptGen gen(5);
  const std::vector<int32_t> shared = gen.Tokens(20);
  for (int i = 0; i < 12; ++i) {
    RequestInput in = Constrained(i, Concat(shared, gen.Tokens(i % 3)), 64, grammar);
    in.params.temperature = 0.9f;
    in.seed = 100 + i;
    h.Add(std::move(in));
  }
  h.RunUntilIdle();
  for (int i = 0; i < 12; ++i) {
    const Collected& c = h.result(i);
    ASSERT_TRUE(c.finish.has_value());
    EXPECT_EQ(c.finish->kind, FinishReason::Kind::kStopToken) << c.text;
    EXPECT_TRUE(std::regex_match(c.text, std::regex("(yes|no), the (cat|dog) is (a|b)[0-9]{1,3}"
                                                    "ing\\.")))
        << c.text;
    EXPECT_EQ(h.codec().Decode(c.ids), c.text);
  }
}

// Grammar queue: a request whose grammar is still compiling waits outside waiting_ while the
// others decode; it joins them once its future is ready.
TEST(GrammarQueueTest, CompilingGrammarDoesNotBlockOthers) {
  const auto grammar = CompileRegex(kForcedRegex);
  SchedulerHarness h({.config = JumpConfig(true)});
  std::promise<RequestInput::GrammarResult> compile;
  RequestInput pending = Constrained(1, {5, 6, 7, 8}, 64, nullptr);
  pending.pending_grammar = compile.get_future().share();
  h.Add(std::move(pending));
  h.Add(SchedulerHarness::Greedy(2, {9, 10, 11}, 6));
  EXPECT_EQ(h.scheduler().grammar_queue_size(), 1u);
  EXPECT_FALSE(h.scheduler().HasReadyGrammar());
  EXPECT_EQ(h.scheduler().GetStats().grammar_queue_requests, 1);
  for (int i = 0; i < 20 && !h.finished(2); ++i) h.Step();
  ASSERT_TRUE(h.finished(2));
  EXPECT_EQ(h.result(2).ids.size(), 6u);
  EXPECT_FALSE(h.finished(1));
  EXPECT_EQ(h.result(1).outputs, 0);
  // Nothing runnable but the queued request: Step does nothing and returns at once.
  EXPECT_TRUE(h.scheduler().HasWork());
  EXPECT_FALSE(h.scheduler().HasRunnableWork());
  const int64_t passes = h.scheduler().GetStats().forward_passes;
  h.Step();
  EXPECT_EQ(h.scheduler().GetStats().forward_passes, passes);

  compile.set_value(grammar);
  EXPECT_TRUE(h.scheduler().HasReadyGrammar());
  h.RunUntilIdle();
  ASSERT_TRUE(h.finished(1));
  EXPECT_FALSE(h.result(1).finish->is_abort()) << h.result(1).finish->matched_text;
  EXPECT_TRUE(std::regex_match(h.result(1).text, std::regex(kForcedRegex))) << h.result(1).text;
  EXPECT_EQ(h.scheduler().grammar_queue_size(), 0u);
}

TEST(GrammarQueueTest, CompileFailureFinishesWithTheError) {
  SchedulerHarness h({.config = JumpConfig(true)});
  std::promise<RequestInput::GrammarResult> compile;
  RequestInput pending = Constrained(1, {5, 6, 7, 8}, 64, nullptr);
  pending.pending_grammar = compile.get_future().share();
  pending.grammar_kind = grammar::GrammarKind::kJsonSchema;
  h.Add(std::move(pending));
  h.Step();
  EXPECT_FALSE(h.finished(1));
  compile.set_value(ResourceExhausted("the DFA has more than 20000 states"));
  h.RunUntilIdle();
  ASSERT_TRUE(h.finished(1));
  EXPECT_TRUE(h.result(1).finish->is_abort());
  EXPECT_EQ(h.result(1).finish->matched_text,
            "grammar compilation failed (json_schema): the DFA has more than 20000 states");
  EXPECT_EQ(h.result(1).finish->status_code, 400);  // the request's own grammar: bad input
  EXPECT_TRUE(h.result(1).ids.empty());
  EXPECT_EQ(h.scheduler().GetStats().aborted_requests, 1);
}

TEST(GrammarQueueTest, AbortWhileCompiling) {
  SchedulerHarness h({.config = JumpConfig(true)});
  std::promise<RequestInput::GrammarResult> compile;
  RequestInput pending = Constrained(1, {5, 6, 7, 8}, 64, nullptr);
  pending.pending_grammar = compile.get_future().share();
  h.Add(std::move(pending));
  h.Step();
  EXPECT_TRUE(h.scheduler().Abort(1));
  ASSERT_TRUE(h.finished(1));
  EXPECT_TRUE(h.result(1).finish->is_abort());
  EXPECT_EQ(h.scheduler().grammar_queue_size(), 0u);
  EXPECT_FALSE(h.scheduler().HasWork());
  compile.set_value(CompileRegex(kForcedRegex));  // finishing later changes nothing
  h.RunUntilIdle();
  EXPECT_EQ(h.result(1).outputs, 1);
}

TEST(GrammarQueueTest, ReadyFutureSkipsTheQueue) {
  std::promise<RequestInput::GrammarResult> compile;
  compile.set_value(CompileRegex(kForcedRegex));
  SchedulerHarness h({.config = JumpConfig(true)});
  RequestInput in = Constrained(1, {5, 6, 7, 8}, 64, nullptr);
  in.pending_grammar = compile.get_future().share();
  h.Add(std::move(in));
  EXPECT_EQ(h.scheduler().grammar_queue_size(), 0u);
  EXPECT_TRUE(h.scheduler().HasRunnableWork());
  h.RunUntilIdle();
  EXPECT_TRUE(std::regex_match(h.result(1).text, std::regex(kForcedRegex))) << h.result(1).text;
}

}  // namespace
}  // namespace radixlm::testing
