// A hybrid (qwen35; qwen35moe and qwen3next at the end) model with the radix cache on: the tree
// keeps snapshots of the linear layers' state (RadixCache "State snapshots",
// scheduler_snapshots.cc), and a request over a cached prefix resumes from the deepest snapshot at
// or before its match. Cache identity: every request's greedy tokens and their logprobs (top 5
// included) equal, bit for bit, what the same request gives with the radix cache off, whether its
// prefix ends on a snapshot, between two, after the snapshot's node was evicted, or while the
// prefix is still being prefilled in chunks, batched, in pages, after retractions; and a multi-turn
// chat recomputes less than one snapshot interval per turn.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/model_backed_runner.h"
#include "model/model.h"
#include "model/tiny_model.h"
#include "scheduler/run_result.h"
#include "scheduler/scheduler.h"

namespace radixlm {
namespace {

using model::testing::BuildTinyModel;
using model::testing::ParseTinyModel;
using scheduler_testing::ExpectSame;
using scheduler_testing::Ids;
using scheduler_testing::Prompt;
using scheduler_testing::Result;

constexpr int32_t kRunning = 4;
constexpr int64_t kInterval = 16;

struct Options {
  bool cache = true;
  int64_t pool = 512;
  int32_t snapshots = 32;
  int64_t chunk = 64;
  int32_t page = 1;
  double new_token_ratio = 0.7;  // admission's guess of the decode tokens still to come
};

class Instance {
 public:
  Instance(const std::vector<uint8_t>& gguf, Options o) {
    model::ModelOptions mo;
    mo.n_threads = 2;
    mo.max_batch_tokens = 160;
    mo.max_context = 400;
    auto model = model::Model::FromGguf(ParseTinyModel(gguf), mo);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    auto runner =
        ModelBackedRunner::Create(std::move(*model), o.pool + o.page, 0, kernels::KvDtype::kF16,
                                  /*state_slots=*/kRunning + o.snapshots);
    EXPECT_TRUE(runner.ok()) << runner.status().ToString();
    runner_ = std::move(*runner);
    SchedulerConfig c;
    c.max_total_tokens = o.pool;
    c.page_size = o.page;
    c.init_new_token_ratio = o.new_token_ratio;
    c.max_running_requests = kRunning;
    c.chunked_prefill_size = o.chunk;
    c.max_prefill_tokens = 128;
    c.disable_radix_cache = !o.cache;
    c.state_snapshot_slots = o.snapshots;
    c.hybrid_snapshot_interval = kInterval;
    auto sched = Scheduler::Create(c, runner_.get(), nullptr, [this](RequestOutput&& out) {
      Result& r = results_[out.id];
      r.tokens.insert(r.tokens.end(), out.chunk.output_ids.begin(), out.chunk.output_ids.end());
      for (LogprobEntry& e : out.chunk.output_token_logprobs) r.logprobs.push_back(std::move(e));
      r.cached_tokens = out.chunk.meta.cached_tokens;
    });
    EXPECT_TRUE(sched.ok()) << sched.status().ToString();
    scheduler_ = std::move(*sched);
  }

  void Add(uint64_t id, const Ids& prompt, int max_new) {
    RequestInput in;
    in.id = id;
    in.input_ids = prompt;
    in.params.temperature = 0.0f;
    in.params.max_new_tokens = max_new;
    in.params.ignore_eos = true;
    in.return_logprob = true;
    in.top_logprobs_num = 5;
    ASSERT_TRUE(scheduler_->AddRequest(std::move(in)).ok());
  }

  void Drain() {
    for (int i = 0; i < 10000 && scheduler_->HasWork(); ++i) {
      const Status s = scheduler_->Step();
      ASSERT_TRUE(s.ok()) << s.ToString();
      const Status inv = scheduler_->CheckInvariants();
      ASSERT_TRUE(inv.ok()) << inv.ToString();
    }
  }

  // Runs one request to the end; returns its result.
  const Result& Run(uint64_t id, const Ids& prompt, int max_new) {
    Add(id, prompt, max_new);
    Drain();
    return results_[id];
  }

  const Result& result(uint64_t id) { return results_[id]; }
  Scheduler& scheduler() { return *scheduler_; }
  int64_t prefill_tokens() const { return scheduler_->GetStats().prefill_tokens; }

 private:
  std::unique_ptr<ModelBackedRunner> runner_;
  std::unique_ptr<Scheduler> scheduler_;
  std::map<uint64_t, Result> results_;
};

Ids Join(Ids a, const Ids& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Ids Head(const Ids& a, int64_t n) { return Ids(a.begin(), a.begin() + n); }

// What each prompt gives alone, with the radix cache off (every prompt computed whole).
std::vector<Result> Uncached(const std::vector<uint8_t>& gguf, const std::vector<Ids>& prompts,
                             int max_new) {
  std::vector<Result> out;
  Instance off(gguf, {.cache = false});
  for (size_t i = 0; i < prompts.size(); ++i) out.push_back(off.Run(i, prompts[i], max_new));
  return out;
}

class HybridCacheTest : public ::testing::Test {
 protected:
  HybridCacheTest() : gguf_(BuildTinyModel(model::testing::TinyQwen35Spec())) {}
  std::vector<uint8_t> gguf_;
};

TEST_F(HybridCacheTest, PrefixEndingOnASnapshotAndBetweenSnapshots) {
  const Ids a = Prompt(1, 48);  // snapshots at 16, 32, 48 (its prompt) and 51 (its end)
  // (a) shares a's first 32 tokens: its match ends exactly on the snapshot at 32.
  const Ids on = Join(Head(a, 32), Prompt(2, 20));
  // (b) shares 40: the match ends between the snapshots at 32 and 48, and resumes from 32.
  const Ids between = Join(Head(a, 40), Prompt(3, 20));
  // a's whole conversation so far and more: resumes from the snapshot at its end (51).
  const std::vector<Ids> prompts = {a, on, between};
  const std::vector<Result> want = Uncached(gguf_, prompts, 4);
  Ids continued = Join(a, want[0].tokens);
  continued = Join(continued, Prompt(4, 10));

  Instance on_cache(gguf_, {});
  ExpectSame(on_cache.Run(0, a, 4), want[0], "the first prompt");
  EXPECT_EQ(on_cache.result(0).cached_tokens, 0);
  int64_t before = on_cache.prefill_tokens();
  ExpectSame(on_cache.Run(1, on, 4), want[1], "(a) prefix ending on a snapshot");
  EXPECT_EQ(on_cache.result(1).cached_tokens, 32);
  EXPECT_EQ(on_cache.prefill_tokens() - before, 20);
  before = on_cache.prefill_tokens();
  ExpectSame(on_cache.Run(2, between, 4), want[2], "(b) prefix ending between snapshots");
  EXPECT_EQ(on_cache.result(2).cached_tokens, 32) << "cut back to the snapshot at 32";
  EXPECT_EQ(on_cache.prefill_tokens() - before, 28);
  before = on_cache.prefill_tokens();
  Instance off(gguf_, {.cache = false});
  const Result& continued_want = off.Run(9, continued, 4);
  ExpectSame(on_cache.Run(3, continued, 4), continued_want, "a's continuation");
  EXPECT_EQ(on_cache.result(3).cached_tokens, 51) << "a's prompt and outputs but the last";
  EXPECT_EQ(on_cache.prefill_tokens() - before, static_cast<int64_t>(continued.size()) - 51);
  const SchedulerStats s = on_cache.scheduler().GetStats();
  EXPECT_EQ(s.state_snapshot_resumes, 3);
  EXPECT_GT(s.state_snapshots, 0);
  EXPECT_EQ(s.state_snapshots_protected, 0);
}

TEST_F(HybridCacheTest, ABranchPointAndARepeatedPromptGetSnapshots) {
  // b leaves a's path at 40, between a's snapshots at 32 and 48: b resumes from 32, and its
  // first chunk ends at 40, where the tree's KV match ended, so c (also leaving at 40) resumes
  // from there. A prompt sent twice: the first copy is matched up to its last token but one
  // (a prompt's last token is always computed), which gets a snapshot, so the third copy
  // computes that one token only.
  const Ids a = Prompt(81, 48);
  const Ids b = Join(Head(a, 40), Prompt(82, 10));
  const Ids c = Join(Head(a, 40), Prompt(83, 10));
  const std::vector<Ids> prompts = {a, b, c};
  const std::vector<Result> want = Uncached(gguf_, prompts, 4);
  Instance on(gguf_, {});
  ExpectSame(on.Run(0, a, 4), want[0], "a");
  ExpectSame(on.Run(1, b, 4), want[1], "b");
  EXPECT_EQ(on.result(1).cached_tokens, 32);
  int64_t before = on.prefill_tokens();
  ExpectSame(on.Run(2, c, 4), want[2], "c");
  EXPECT_EQ(on.result(2).cached_tokens, 40);
  EXPECT_EQ(on.prefill_tokens() - before, 10);
  before = on.prefill_tokens();
  ExpectSame(on.Run(3, a, 4), want[0], "a again");
  EXPECT_EQ(on.result(3).cached_tokens, 40) << "the branch point's snapshot";
  ExpectSame(on.Run(4, a, 4), want[0], "a a third time");
  EXPECT_EQ(on.result(4).cached_tokens, 47);
  EXPECT_EQ(on.prefill_tokens() - before, (47 - 40) + 1 + 1);
}

TEST_F(HybridCacheTest, AfterTheSnapshotsNodeWasEvicted) {
  const Ids a = Prompt(11, 48);  // snapshots at 16, 32, 48 and 50
  const Ids b = Join(Head(a, 40), Prompt(12, 12));
  const Ids d = Join(Head(a, 16), Prompt(13, 20));  // keeps a's first 16 tokens recent
  std::vector<Ids> prompts = {a, b, d};
  // Unrelated prompts that take the snapshot slots (and the KV pool) in between.
  for (uint32_t i = 0; i < 6; ++i) prompts.push_back(Prompt(100 + i, 40));
  const std::vector<Result> want = Uncached(gguf_, prompts, 3);

  // Few snapshot slots: the unrelated prompts take them, a's go (least recently used first)
  // and its leaves with them: b recomputes everything.
  Instance few(gguf_, {.snapshots = 4});
  ExpectSame(few.Run(0, a, 3), want[0], "a");
  for (size_t i = 3; i < prompts.size(); ++i) {
    ExpectSame(few.Run(i, prompts[i], 3), want[i], "filler");
  }
  ExpectSame(few.Run(1, b, 3), want[1], "(c) after a's snapshots were evicted");
  EXPECT_EQ(few.result(1).cached_tokens, 0) << "fell back past the evicted snapshots";
  EXPECT_LE(few.scheduler().GetStats().state_snapshots, 4);

  // A small KV pool: the unrelated prompts' KV pushes a's deeper nodes out of the tree, least
  // recently used leaves first; d used a's first 16 tokens since, so that node and its snapshot
  // stay, and b falls back from 32 to 16.
  Instance small(gguf_, {.pool = 160});
  ExpectSame(small.Run(0, a, 3), want[0], "a");
  ExpectSame(small.Run(2, d, 3), want[2], "d");
  for (size_t i = 3; i < 6; ++i) {
    ExpectSame(small.Run(i, prompts[i], 3), want[i], "filler");
  }
  ExpectSame(small.Run(1, b, 3), want[1], "(c) after a's deeper KV was evicted");
  EXPECT_EQ(small.result(1).cached_tokens, 16);
}

TEST_F(HybridCacheTest, AcrossAChunkedPrefill) {
  // Chunks of 12 tokens (shorter than the interval), cut at its multiples: a's prefill runs
  // [0, 12), [12, 16), [16, 28), [28, 32), ..., a snapshot at each chunk's end. b and c arrive
  // with a, sharing its first 40 and 64 tokens; admitted beside a's last chunk, they resume
  // from the snapshots its chunks left at 32 and 64.
  const Ids a = Prompt(21, 70);
  const Ids b = Join(Head(a, 40), Prompt(22, 15));
  const Ids c = Join(Head(a, 64), Prompt(23, 9));
  const std::vector<Ids> prompts = {a, b, c};
  const std::vector<Result> want = Uncached(gguf_, prompts, 5);
  Instance on(gguf_, {.chunk = 12});
  for (size_t i = 0; i < prompts.size(); ++i) on.Add(i, prompts[i], 5);
  on.Drain();
  for (size_t i = 0; i < prompts.size(); ++i) {
    ExpectSame(on.result(i), want[i], "request " + std::to_string(i));
  }
  EXPECT_EQ(on.result(1).cached_tokens, 32);
  EXPECT_EQ(on.result(2).cached_tokens, 64);
  // Several at once sharing prefixes (batch invariance with the cache on): each as alone.
  const std::vector<Ids> more = {Join(Head(a, 20), Prompt(24, 30)),
                                 Join(Head(b, 50), Prompt(25, 3)), Prompt(26, 33),
                                 Join(Head(c, 70), Prompt(27, 20))};
  const std::vector<Result> more_want = Uncached(gguf_, more, 6);
  for (size_t i = 0; i < more.size(); ++i) on.Add(10 + i, more[i], 6);
  on.Drain();
  for (size_t i = 0; i < more.size(); ++i) {
    ExpectSame(on.result(10 + i), more_want[i], "together " + std::to_string(i));
  }
}

TEST_F(HybridCacheTest, MultiTurnChatRecomputesLessThanOneIntervalPerTurn) {
  Instance on(gguf_, {});
  Instance off(gguf_, {.cache = false});
  Ids conversation = Prompt(31, 30);
  for (uint64_t turn = 0; turn < 5; ++turn) {
    // Another conversation in between runs in the same request row (and so state slot): the
    // turn must resume from the tree's snapshot, not from what its slot last held.
    on.Run(100 + turn, Prompt(60 + static_cast<uint32_t>(turn), 20), 2);
    const int64_t before = on.prefill_tokens();
    const Result& got = on.Run(turn, conversation, 6);
    const Result& want = off.Run(turn, conversation, 6);
    ExpectSame(got, want, "turn " + std::to_string(turn));
    const int64_t computed = on.prefill_tokens() - before;
    if (turn > 0) {
      // The previous turn's end (its prompt and outputs but the last) was snapshotted: only its
      // last output and this turn's new message are computed.
      EXPECT_LT(computed, kInterval) << "turn " << turn;
      EXPECT_EQ(got.cached_tokens, static_cast<int64_t>(conversation.size()) - computed);
    }
    conversation = Join(conversation, got.tokens);
    conversation = Join(conversation, Prompt(40 + static_cast<uint32_t>(turn), 9));
  }
}

TEST_F(HybridCacheTest, PagesOfFourTokens) {
  // Snapshots only where a page ends: a's end (kv_len 48 + 5 - 1 = 52) is one, so its
  // continuation resumes there; b's match (a's first 30 tokens) is cut to the snapshot at 16.
  const Ids a = Prompt(51, 48);
  const Ids b = Join(Head(a, 30), Prompt(52, 14));
  const std::vector<Result> want = Uncached(gguf_, {a, b}, 5);
  Ids continued = Join(Join(a, want[0].tokens), Prompt(53, 7));
  Instance off(gguf_, {.cache = false});
  const Result& continued_want = off.Run(9, continued, 5);
  Instance on(gguf_, {.page = 4});
  ExpectSame(on.Run(0, a, 5), want[0], "a");
  ExpectSame(on.Run(1, b, 5), want[1], "b");
  EXPECT_EQ(on.result(1).cached_tokens, 16);
  ExpectSame(on.Run(2, continued, 5), continued_want, "a's continuation");
  EXPECT_EQ(on.result(2).cached_tokens, 52);
}

TEST_F(HybridCacheTest, RetractedRequestsResumeFromTheirSnapshot) {
  // A pool too small for four requests' decodes: some are retracted (their KV and state to the
  // tree), then resume from the snapshot at their end, with the outputs they give alone.
  std::vector<Ids> prompts;
  for (uint32_t i = 0; i < 4; ++i) prompts.push_back(Prompt(70 + i, 40));
  const std::vector<Result> want = Uncached(gguf_, prompts, 30);
  Instance on(gguf_, {.pool = 160, .new_token_ratio = 0.01});  // admits all four at once
  for (size_t i = 0; i < prompts.size(); ++i) on.Add(i, prompts[i], 30);
  on.Drain();
  for (size_t i = 0; i < prompts.size(); ++i) {
    ExpectSame(on.result(i), want[i], "request " + std::to_string(i));
  }
  const SchedulerStats s = on.scheduler().GetStats();
  EXPECT_GT(s.retractions, 0);
  EXPECT_GT(s.state_snapshot_resumes, 0);
}

TEST_F(HybridCacheTest, RefusesAHybridRunnerWithoutSnapshotSlots) {
  model::ModelOptions mo;
  mo.max_batch_tokens = 64;
  mo.max_context = 128;
  auto model = model::Model::FromGguf(ParseTinyModel(gguf_), mo);
  ASSERT_TRUE(model.ok());
  auto runner = ModelBackedRunner::Create(std::move(*model), 257, 0, kernels::KvDtype::kF16,
                                          /*state_slots=*/kRunning);
  ASSERT_TRUE(runner.ok());
  SchedulerConfig c;
  c.max_total_tokens = 256;
  c.max_running_requests = kRunning;
  c.state_snapshot_slots = 8;  // the runner has no room for them
  auto sched = Scheduler::Create(c, runner->get(), nullptr, nullptr);
  EXPECT_FALSE(sched.ok());
  c.state_snapshot_slots = 0;
  sched = Scheduler::Create(c, runner->get(), nullptr, nullptr);
  ASSERT_FALSE(sched.ok());
  EXPECT_NE(sched.status().message().find("--max-mamba-cache-size"), std::string::npos);
  c.disable_radix_cache = true;
  EXPECT_TRUE(Scheduler::Create(c, runner->get(), nullptr, nullptr).ok());
}

// The MoE hybrids (qwen35moe; qwen3next with its fused ssm_ba and grouped value heads): prompts
// that resume from a snapshot (on one, between two, beside a chunked prefill) give, bit for
// bit, what they give with the radix cache off.
class HybridMoeCacheTest : public ::testing::TestWithParam<const char*> {};

TEST_P(HybridMoeCacheTest, PromptsResumingFromSnapshotsAreUnchanged) {
  const std::vector<uint8_t> gguf =
      BuildTinyModel(std::string(GetParam()) == "qwen3next" ? model::testing::TinyQwen3NextSpec()
                                                            : model::testing::TinyQwen35MoeSpec());
  const Ids a = Prompt(41, 48);
  const Ids on = Join(Head(a, 32), Prompt(42, 20));
  const Ids between = Join(Head(a, 40), Prompt(43, 20));
  const Ids later = Join(a, Prompt(44, 30));
  const std::vector<Result> want = Uncached(gguf, {a, on, between, later}, 4);
  Instance cached(gguf, {.chunk = 12});
  ExpectSame(cached.Run(0, a, 4), want[0], "the first prompt");
  ExpectSame(cached.Run(1, on, 4), want[1], "a prefix ending on a snapshot");
  EXPECT_EQ(cached.result(1).cached_tokens, 32);
  ExpectSame(cached.Run(2, between, 4), want[2], "a prefix ending between snapshots");
  EXPECT_EQ(cached.result(2).cached_tokens, 32);
  ExpectSame(cached.Run(3, later, 4), want[3], "a's whole prompt, then chunks of 12");
  EXPECT_EQ(cached.result(3).cached_tokens, 48);
  EXPECT_EQ(cached.scheduler().GetStats().state_snapshot_resumes, 3);
}

INSTANTIATE_TEST_SUITE_P(Archs, HybridMoeCacheTest, ::testing::Values("qwen35moe", "qwen3next"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace
}  // namespace radixlm
