// A hybrid (qwen35) model under the scheduler: the linear layers' state lives in the request's
// row of the request-to-token table (ModelBackedRunner's state slots), so requests decoded
// together, prefilled in chunks beside each other's decodes, give the greedy outputs each gives
// alone. Here the radix cache is off (hybrid_cache_test.cc runs it on, with state snapshots),
// so a repeated prompt is recomputed, with the same output.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "engine/model_backed_runner.h"
#include "model/model.h"
#include "model/tiny_model.h"
#include "scheduler/scheduler.h"

namespace radixlm {
namespace {

using model::testing::BuildTinyModel;
using model::testing::ParseTinyModel;

constexpr int64_t kPool = 512;
constexpr int32_t kRunning = 4;

class Instance {
 public:
  explicit Instance(const std::vector<uint8_t>& gguf) {
    model::ModelOptions mo;
    mo.n_threads = 2;
    mo.max_batch_tokens = 128;
    mo.max_context = 256;
    auto model = model::Model::FromGguf(ParseTinyModel(gguf), mo);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    auto runner = ModelBackedRunner::Create(std::move(*model), kPool + 1, 0,
                                            kernels::KvDtype::kF16, /*state_slots=*/kRunning);
    EXPECT_TRUE(runner.ok()) << runner.status().ToString();
    runner_ = std::move(*runner);
    SchedulerConfig c;
    c.max_total_tokens = kPool;
    c.max_running_requests = kRunning;
    c.chunked_prefill_size = 24;  // prompts of 50 take three chunks
    c.max_prefill_tokens = 48;
    c.disable_radix_cache = true;
    auto sched = Scheduler::Create(c, runner_.get(), nullptr, [this](RequestOutput&& out) {
      auto& ids = outputs_[out.id];
      ids.insert(ids.end(), out.chunk.output_ids.begin(), out.chunk.output_ids.end());
    });
    EXPECT_TRUE(sched.ok()) << sched.status().ToString();
    scheduler_ = std::move(*sched);
  }

  void Add(uint64_t id, const std::vector<int32_t>& prompt, int max_new) {
    RequestInput in;
    in.id = id;
    in.input_ids = prompt;
    in.params.temperature = 0.0f;
    in.params.max_new_tokens = max_new;
    in.params.ignore_eos = true;
    EXPECT_TRUE(scheduler_->AddRequest(std::move(in)).ok());
  }

  void Drain() {
    for (int i = 0; i < 10000 && scheduler_->HasWork(); ++i) {
      const Status s = scheduler_->Step();
      ASSERT_TRUE(s.ok()) << s.ToString();
      const Status inv = scheduler_->CheckInvariants();
      ASSERT_TRUE(inv.ok()) << inv.ToString();
    }
  }

  const std::vector<int32_t>& Output(uint64_t id) { return outputs_[id]; }
  Scheduler& scheduler() { return *scheduler_; }

 private:
  std::unique_ptr<ModelBackedRunner> runner_;
  std::unique_ptr<Scheduler> scheduler_;
  std::map<uint64_t, std::vector<int32_t>> outputs_;
};

std::vector<int32_t> Prompt(uint32_t seed, int64_t n) {
  std::vector<int32_t> p(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 7;
  for (auto& t : p) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t = static_cast<int32_t>(1 + x % 99);
  }
  return p;
}

TEST(HybridModelSchedulerTest, RequestsTogetherGiveWhatEachGivesAlone) {
  const std::vector<uint8_t> gguf = BuildTinyModel(model::testing::TinyQwen35Spec());
  const std::vector<std::vector<int32_t>> prompts = {Prompt(1, 50), Prompt(2, 9), Prompt(3, 31),
                                                     Prompt(4, 50), Prompt(5, 3), Prompt(6, 17)};
  std::vector<std::vector<int32_t>> alone;
  {
    Instance one(gguf);
    for (size_t i = 0; i < prompts.size(); ++i) {
      one.Add(i, prompts[i], 8);
      one.Drain();
      alone.push_back(one.Output(i));
      ASSERT_EQ(alone.back().size(), 8u);
    }
  }
  // All at once (more than kRunning: rows, and so state slots, are reused), staggered so that
  // prefill chunks run beside decodes; then the first prompt again, recomputed.
  Instance together(gguf);
  for (size_t i = 0; i < prompts.size(); ++i) {
    together.Add(i, prompts[i], 8);
    if (i % 2 == 1) {
      ASSERT_TRUE(together.scheduler().Step().ok());
    }
  }
  together.Drain();
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(together.Output(i), alone[i]) << "request " << i;
  }
  const int64_t before = together.scheduler().GetStats().prefill_tokens;
  together.Add(100, prompts[0], 8);
  together.Drain();
  EXPECT_EQ(together.Output(100), alone[0]);
  EXPECT_EQ(together.scheduler().GetStats().prefill_tokens - before, 50)
      << "no prefix reuse: the whole prompt is computed again";
}

}  // namespace
}  // namespace radixlm
