// NEXTN speculation on a hybrid (qwen35; qwen35moe and qwen3next too) model: the model's own
// NextN layer drafts chains (engine/nextn_runner.h, scheduler_nextn.cc) that the target
// verifies in one forward, its linear layers' state rolled back to the last kept node. Every
// request's greedy tokens and logprobs (top 5 included) equal, bit for bit, those of plain
// decoding, with the radix cache on: several requests batched, prompts that resume from state
// snapshots mid-prefix, a stop token inside a chain (its release snapshots the rolled-back
// state, which the next turn resumes from), and drafts both kept and rejected.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/model_backed_runner.h"
#include "engine/nextn_runner.h"
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
constexpr int32_t kSnapshots = 32;
constexpr int32_t kSteps = 3;

class Instance {
 public:
  Instance(const std::vector<uint8_t>& gguf, bool nextn, bool cache = true) {
    model::ModelOptions mo;
    mo.n_threads = 2;
    mo.max_batch_tokens = 160;
    mo.max_context = 400;
    auto model = model::Model::FromGguf(ParseTinyModel(gguf), mo);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    model::Model* target = model->get();
    constexpr int64_t kPool = 1024;
    auto runner = ModelBackedRunner::Create(
        std::move(*model), kPool + 1, 0, kernels::KvDtype::kF16,
        /*state_slots=*/kRunning + (cache ? kSnapshots : 0) + (nextn ? kRunning * kSteps : 0));
    EXPECT_TRUE(runner.ok()) << runner.status().ToString();
    runner_ = std::move(*runner);
    SchedulerConfig c;
    c.max_total_tokens = kPool;
    c.max_running_requests = kRunning;
    c.chunked_prefill_size = 64;
    c.max_prefill_tokens = 128;
    c.state_snapshot_slots = cache ? kSnapshots : 0;
    c.hybrid_snapshot_interval = 16;
    c.disable_radix_cache = !cache;
    if (nextn) {
      auto draft = NextnRunner::Create(*target, kPool + 1, kernels::KvDtype::kF16);
      EXPECT_TRUE(draft.ok()) << draft.status().ToString();
      draft_ = std::move(*draft);
      c.speculative_draft_model = true;
      c.speculative_nextn = true;
      c.speculative_num_steps = kSteps;
      c.speculative_num_draft_tokens = kSteps + 1;
      c.speculative_pacing = false;  // draft every round: more verification to check
    }
    auto sched = Scheduler::Create(
        c, runner_.get(), nullptr,
        [this](RequestOutput&& out) {
          Result& r = results_[out.id];
          r.tokens.insert(r.tokens.end(), out.chunk.output_ids.begin(), out.chunk.output_ids.end());
          for (LogprobEntry& e : out.chunk.output_token_logprobs)
            r.logprobs.push_back(std::move(e));
          r.cached_tokens = out.chunk.meta.cached_tokens;
        },
        draft_.get());
    EXPECT_TRUE(sched.ok()) << sched.status().ToString();
    scheduler_ = std::move(*sched);
  }

  // Greedy, or with `temperature` > 0 seeded sampling (the same tokens whatever the batch).
  void Add(uint64_t id, const Ids& prompt, int max_new, const std::vector<int32_t>& stop = {},
           float temperature = 0.0f) {
    RequestInput in;
    in.id = id;
    in.input_ids = prompt;
    in.params.temperature = temperature;
    in.params.sampling_seed = 1000 + static_cast<int64_t>(id);
    in.params.max_new_tokens = max_new;
    in.params.ignore_eos = true;
    in.params.stop_token_ids = stop;
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

  const Result& result(uint64_t id) { return results_[id]; }
  SchedulerStats stats() const { return scheduler_->GetStats(); }

 private:
  std::unique_ptr<ModelBackedRunner> runner_;
  std::unique_ptr<NextnRunner> draft_;  // (declared after runner_: destroyed first)
  std::unique_ptr<Scheduler> scheduler_;
  std::map<uint64_t, Result> results_;
};

Ids Join(Ids a, const Ids& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Ids Head(const Ids& a, int64_t n) { return Ids(a.begin(), a.begin() + n); }

model::testing::TinyModelSpec Spec(const std::string& arch) {
  model::testing::TinyModelSpec s = arch == "qwen35moe"   ? model::testing::TinyQwen35MoeSpec()
                                    : arch == "qwen3next" ? model::testing::TinyQwen3NextSpec()
                                                          : model::testing::TinyQwen35Spec();
  s.nextn_layers = 1;
  s.nextn_eh_identity = true;
  s.residual_write_scale = 0.2f;
  return s;
}

class NextnSpeculativeTest : public ::testing::TestWithParam<const char*> {};

TEST_P(NextnSpeculativeTest, OutputsEqualPlainDecodingWithTheRadixCacheOn) {
  const std::vector<uint8_t> gguf = BuildTinyModel(Spec(GetParam()));
  // Wave 1, batched: a and b share 20 tokens; c and d are unrelated. Wave 2 resumes from the
  // snapshots of wave 1 mid-prefix (a's first 32 tokens; b's prompt and more).
  const Ids a = Prompt(1, 40), b = Join(Head(a, 20), Prompt(2, 25)), c = Prompt(3, 9),
            d = Prompt(4, 30);
  const std::vector<Ids> wave1 = {a, b, c, d};
  const std::vector<Ids> wave2 = {Join(Head(a, 36), Prompt(5, 7)), Join(b, Prompt(6, 12)),
                                  Join(Head(d, 17), Prompt(7, 3))};
  constexpr int kNew = 40;
  auto run = [&](Instance& in) {
    for (size_t i = 0; i < wave1.size(); ++i) in.Add(i, wave1[i], kNew);
    in.Drain();
    for (size_t i = 0; i < wave2.size(); ++i) in.Add(10 + i, wave2[i], kNew);
    in.Drain();
  };
  Instance plain(gguf, /*nextn=*/false);
  run(plain);
  Instance spec(gguf, /*nextn=*/true);
  run(spec);
  for (uint64_t id : {0, 1, 2, 3, 10, 11, 12}) {
    ExpectSame(spec.result(id), plain.result(id), "request " + std::to_string(id));
    ASSERT_EQ(spec.result(id).tokens.size(), static_cast<size_t>(kNew));
  }
  EXPECT_GT(spec.result(10).cached_tokens, 0) << "resumed from a snapshot";
  EXPECT_EQ(spec.result(10).cached_tokens, plain.result(10).cached_tokens);
  const SchedulerStats s = spec.stats();
  EXPECT_GT(s.state_snapshot_resumes, 0);
  // Drafts proposed, some kept (each keeps its node's KV and state), some rejected (each
  // rolls the linear layers' state back).
  EXPECT_GT(s.spec_drafted_tokens, 100);
  EXPECT_GT(s.spec_accepted_tokens, 10);
  EXPECT_GT(s.spec_drafted_tokens - s.spec_accepted_tokens, 10);
  EXPECT_LT(spec.stats().forward_passes, plain.stats().forward_passes);
  std::printf("[ %s ] NEXTN: %lld of %lld drafted tokens kept; %lld forward passes (plain: %lld)\n",
              GetParam(), static_cast<long long>(s.spec_accepted_tokens),
              static_cast<long long>(s.spec_drafted_tokens),
              static_cast<long long>(s.forward_passes),
              static_cast<long long>(plain.stats().forward_passes));
}

TEST_P(NextnSpeculativeTest, WithTheRadixCacheOffAndSeededSampling) {
  // No snapshots (the checkpoints follow the running rows directly), and sampled requests
  // beside greedy ones: each keeps the tokens its seed gives without speculation.
  const std::vector<uint8_t> gguf = BuildTinyModel(Spec(GetParam()));
  auto run = [&](Instance& in) {
    for (uint64_t id = 0; id < 6; ++id) {
      in.Add(id, Prompt(30 + static_cast<uint32_t>(id), 12 + 5 * static_cast<int64_t>(id)), 30, {},
             id % 2 == 1 ? 0.8f : 0.0f);
    }
    in.Drain();
  };
  Instance plain(gguf, /*nextn=*/false, /*cache=*/false);
  run(plain);
  Instance spec(gguf, /*nextn=*/true, /*cache=*/false);
  run(spec);
  for (uint64_t id = 0; id < 6; ++id) {
    ExpectSame(spec.result(id), plain.result(id), "request " + std::to_string(id));
  }
  const SchedulerStats s = spec.stats();
  EXPECT_GT(s.spec_accepted_tokens, 5);
  EXPECT_GT(s.spec_drafted_tokens - s.spec_accepted_tokens, 5);
}

TEST_P(NextnSpeculativeTest, AStopInsideAChainSnapshotsTheRolledBackState) {
  // A request stopped by a token in the middle of its output (often inside a verified chain,
  // nodes after it rejected) releases its KV with a snapshot of its state; the next turn
  // resumes from that snapshot and must decode as plain decoding does.
  const std::vector<uint8_t> gguf = BuildTinyModel(Spec(GetParam()));
  Instance probe(gguf, false);
  const Ids a = Prompt(21, 30);
  probe.Add(0, a, 30);
  probe.Drain();
  const Ids answer = probe.result(0).tokens;
  ASSERT_EQ(answer.size(), 30u);
  for (int64_t k : {5, 12, 19}) {
    SCOPED_TRACE("stop at output " + std::to_string(k));
    const std::vector<int32_t> stop = {answer[k]};
    Instance plain(gguf, false), spec(gguf, true);
    for (Instance* in : {&plain, &spec}) {
      in->Add(1, a, 30, stop);
      in->Drain();
      const Ids next = Join(Join(a, in->result(1).tokens), Prompt(22, 5));
      in->Add(2, next, 20);
      in->Drain();
    }
    ExpectSame(spec.result(1), plain.result(1), "the stopped turn");
    ExpectSame(spec.result(2), plain.result(2), "the next turn");
    EXPECT_GT(spec.result(2).cached_tokens, static_cast<int64_t>(a.size()));
    EXPECT_EQ(spec.result(2).cached_tokens, plain.result(2).cached_tokens);
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, NextnSpeculativeTest,
                         ::testing::Values("qwen35", "qwen35moe", "qwen3next"));

TEST(NextnSchedulerCreateTest, ChecksTheStateSlotsAndChains) {
  const std::vector<uint8_t> gguf = BuildTinyModel(Spec("qwen35"));
  auto model = model::Model::FromGguf(ParseTinyModel(gguf), {.n_threads = 1});
  ASSERT_TRUE(model.ok());
  model::Model* target = model->get();
  auto runner = ModelBackedRunner::Create(std::move(*model), 257, 0, kernels::KvDtype::kF16,
                                          /*state_slots=*/kRunning + kSnapshots);
  ASSERT_TRUE(runner.ok());
  auto draft = NextnRunner::Create(*target, 257, kernels::KvDtype::kF16);
  ASSERT_TRUE(draft.ok()) << draft.status().ToString();
  SchedulerConfig c;
  c.max_total_tokens = 256;
  c.max_running_requests = kRunning;
  c.state_snapshot_slots = kSnapshots;
  c.hybrid_snapshot_interval = 16;
  c.speculative_draft_model = true;
  c.speculative_nextn = true;
  c.speculative_num_steps = kSteps;
  auto sched = Scheduler::Create(c, runner->get(), nullptr, nullptr, draft->get());
  ASSERT_FALSE(sched.ok()) << "no state slots for the checkpoints";
  EXPECT_NE(sched.status().message().find("state slots"), std::string::npos)
      << sched.status().message();
  c.speculative_eagle_topk = 2;
  sched = Scheduler::Create(c, runner->get(), nullptr, nullptr, draft->get());
  ASSERT_FALSE(sched.ok());
  EXPECT_NE(sched.status().message().find("eagle"), std::string::npos) << sched.status().message();
}

TEST(NextnEngineTest, AModelWithoutNextnLayersIsRefusedAtStartUp) {
  const std::string path =
      ::testing::TempDir() + "nextn_none_" + std::to_string(getpid()) + ".gguf";
  {
    const std::vector<uint8_t> bytes = BuildTinyModel(model::testing::TinyQwen35Spec());
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  EngineConfig c;
  c.model_path = path;
  c.speculative_algorithm = "NEXTN";
  auto engine = Engine::Create(c);
  std::remove(path.c_str());
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(engine.status().message().find("NextN"), std::string::npos)
      << engine.status().message();
  EXPECT_NE(engine.status().message().find("nextn_predict_layers"), std::string::npos)
      << engine.status().message();
}

}  // namespace
}  // namespace radixlm
