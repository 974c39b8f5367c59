// Test harness: a Scheduler over the FakeModelRunner and FakeTokenTextCodec, collecting every
// request's outputs and checking the scheduler's invariants after each step.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "grammar/token_vocab.h"
#include "scheduler/scheduler.h"
#include "testing/fake_model_runner.h"
#include "testing/fake_token_text.h"

namespace radixlm::testing {

// Everything the sink received for one request, concatenated.
struct Collected {
  std::vector<int32_t> ids;
  std::string text;
  std::vector<LogprobEntry> output_logprobs;
  std::vector<LogprobEntry> input_logprobs;
  std::optional<FinishReason> finish;
  int64_t outputs = 0;
  int64_t prompt_tokens = 0, completion_tokens = 0, cached_tokens = 0;
  int64_t jump_forward_tokens = 0, forward_passes_saved = 0, forward_passes = 0;
  int64_t spec_verify_ct = 0, spec_drafted_tokens = 0, spec_accepted_tokens = 0;
};

struct HarnessOptions {
  SchedulerConfig config;
  int32_t vocab_size = FakeTokenTextCodec::kVocabSize;
  int64_t context_length = 4096;
  int64_t max_batch_tokens = 1 << 20;
  bool with_codec = true;
  // With config.speculative_draft_model: the draft model, a second fake runner over the same
  // vocabulary (the same model when the salt is 0; see FakeModelConfig::logits_salt).
  uint64_t draft_logits_salt = 0;
  // With config.speculative_ngram: Step() first waits for the n-gram trie's background filler
  // (Scheduler::FlushNgramFills), so drafts — and the draft counts tests assert — do not depend
  // on thread timing. false: the filler runs freely, as when serving (outputs must not change).
  bool sync_ngram_fills = true;
};

inline SchedulerConfig SmallConfig() {
  SchedulerConfig c;
  c.max_total_tokens = 4096;
  c.max_running_requests = 16;
  c.chunked_prefill_size = 256;
  c.max_prefill_tokens = 512;
  return c;
}

class SchedulerHarness {
 public:
  explicit SchedulerHarness(HarnessOptions options = {.config = SmallConfig()}) {
    FakeModelConfig fm;
    fm.vocab_size = options.vocab_size;
    fm.context_length = options.context_length;
    fm.max_batch_tokens = options.max_batch_tokens;
    fm.kv_slots =
        (options.config.max_total_tokens / options.config.page_size + 1) * options.config.page_size;
    if (options.config.swa_max_total_tokens > 0) {
      fm.swa_kv_slots = (options.config.swa_max_total_tokens / options.config.page_size + 1) *
                        options.config.page_size;
      fm.sliding_window = options.config.sliding_window;
    }
    runner_ = std::make_unique<FakeModelRunner>(fm);
    if (options.config.speculative_draft_model) {
      fm.logits_salt = options.draft_logits_salt;
      draft_runner_ = std::make_unique<FakeModelRunner>(fm);
    }
    auto sched = Scheduler::Create(
        options.config, runner_.get(), options.with_codec ? &codec_ : nullptr,
        [this](RequestOutput&& out) { OnOutput(std::move(out)); }, draft_runner_.get());
    EXPECT_TRUE(sched.ok()) << sched.status().ToString();
    scheduler_ = std::move(sched).value();
    sync_ngram_fills_ = options.sync_ngram_fills;
  }

  Scheduler& scheduler() { return *scheduler_; }
  FakeModelRunner& runner() { return *runner_; }
  FakeModelRunner* draft_runner() { return draft_runner_.get(); }
  const FakeTokenTextCodec& codec() const { return codec_; }
  std::map<uint64_t, Collected>& results() { return results_; }
  Collected& result(uint64_t id) { return results_[id]; }
  bool finished(uint64_t id) const {
    auto it = results_.find(id);
    return it != results_.end() && it->second.finish.has_value();
  }

  // A greedy request with the given prompt.
  static RequestInput Greedy(uint64_t id, std::vector<int32_t> prompt, int32_t max_new_tokens,
                             bool ignore_eos = true) {
    RequestInput in;
    in.id = id;
    in.input_ids = std::move(prompt);
    in.params.temperature = 0.0f;
    in.params.max_new_tokens = max_new_tokens;
    in.params.ignore_eos = ignore_eos;
    return in;
  }

  void Add(RequestInput in) {
    Status s = scheduler_->AddRequest(std::move(in));
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // Runs one step and checks invariants.
  void Step() {
    if (sync_ngram_fills_) scheduler_->FlushNgramFills();
    Status s = scheduler_->Step();
    ASSERT_TRUE(s.ok()) << s.ToString();
    ++steps_;
    Status inv = scheduler_->CheckInvariants();
    ASSERT_TRUE(inv.ok()) << inv.ToString() << " after step " << steps_;
  }

  // Steps until no work is left (bounded), then checks the idle invariant: every slot is free
  // or in the tree, and nothing in the tree is locked.
  void RunUntilIdle(int64_t max_steps = 100000) {
    for (int64_t i = 0; i < max_steps && scheduler_->HasWork(); ++i) {
      Step();
      if (::testing::Test::HasFatalFailure()) return;
    }
    ASSERT_FALSE(scheduler_->HasWork()) << "did not finish in " << max_steps << " steps";
    CheckIdle();
  }

  void CheckIdle() {
    const RadixCache& cache = scheduler_->cache();
    Status inv = cache.CheckInvariants(scheduler_->pool(), 0);
    ASSERT_TRUE(inv.ok()) << inv.ToString();
    EXPECT_EQ(cache.protected_size(), 0);
    EXPECT_EQ(scheduler_->pool().available() + cache.TotalSize(), scheduler_->pool().size());
  }

  int64_t steps() const { return steps_; }

 private:
  void OnOutput(RequestOutput&& out) {
    Collected& c = results_[out.id];
    GenerateOutput& o = out.chunk;
    EXPECT_FALSE(c.finish.has_value()) << "output after the final one for " << out.id;
    c.ids.insert(c.ids.end(), o.output_ids.begin(), o.output_ids.end());
    c.text += o.text;
    for (auto& e : o.output_token_logprobs) c.output_logprobs.push_back(std::move(e));
    for (auto& e : o.input_token_logprobs) c.input_logprobs.push_back(std::move(e));
    c.finish = o.finish_reason;
    ++c.outputs;
    c.prompt_tokens = o.meta.prompt_tokens;
    c.completion_tokens = o.meta.completion_tokens;
    c.cached_tokens = o.meta.cached_tokens;
    c.jump_forward_tokens = o.meta.jump_forward_tokens;
    c.forward_passes_saved = o.meta.forward_passes_saved;
    c.forward_passes = o.meta.forward_passes;
    c.spec_verify_ct = o.meta.spec_verify_ct;
    c.spec_drafted_tokens = o.meta.spec_drafted_tokens;
    c.spec_accepted_tokens = o.meta.spec_accepted_tokens;
    EXPECT_EQ(c.completion_tokens, static_cast<int64_t>(c.ids.size()));
  }

  FakeTokenTextCodec codec_;
  std::unique_ptr<FakeModelRunner> runner_;
  std::unique_ptr<FakeModelRunner> draft_runner_;
  std::unique_ptr<Scheduler> scheduler_;
  std::map<uint64_t, Collected> results_;
  int64_t steps_ = 0;
  bool sync_ngram_fills_ = true;
};

// Deterministic pseudo-random prompts over tokens [3, 64) (no specials).
class PromptGen {
 public:
  explicit PromptGen(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ULL + 1) {}
  uint64_t Next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }
  int64_t Uniform(int64_t lo, int64_t hi) {  // [lo, hi]
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  std::vector<int32_t> Tokens(int64_t n) {
    std::vector<int32_t> t(n);
    for (auto& x : t) x = static_cast<int32_t>(Uniform(3, 63));
    return t;
  }

 private:
  uint64_t state_;
};

// A grammar compiled against the fake codec's vocabulary (asserts it compiles).
inline std::shared_ptr<const grammar::CompiledGrammar> CompileForFakeVocab(
    grammar::GrammarKind kind, const std::string& text) {
  FakeTokenTextCodec codec;
  std::vector<std::string> bytes(FakeTokenTextCodec::kVocabSize);
  for (int32_t t = 0; t < FakeTokenTextCodec::kVocabSize; ++t) {
    if (!codec.IsControlToken(t)) bytes[t] = codec.TokenText(t);
  }
  auto vocab = grammar::TokenVocab::Create(std::move(bytes), codec.eog_token_ids());
  auto compiled = grammar::CompiledGrammar::Compile(kind, text, vocab);
  EXPECT_TRUE(compiled.ok()) << compiled.status().ToString();
  return compiled.ok() ? *compiled : nullptr;
}

inline std::vector<int32_t> Concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace radixlm::testing
