// The disk tier over a real (tiny, random-weight) model: KV copied out of the model's KV cache
// into block files and back (ModelBackedRunner::ReadKv / WriteKv, every layer, sliding-window
// rows included) serves a prefix evicted from RAM: the same greedy output as computing it, with
// fewer prefill tokens computed, after eviction and after a restart. Under LoRA adapters, a
// block serves only the adapter that computed it (by the adapter's content, so also after a
// restart), never another adapter or the base model.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/model_backed_runner.h"
#include "model/lora_adapter.h"
#include "model/lora_fixture.h"
#include "model/model.h"
#include "model/tiny_model.h"
#include "scheduler/scheduler.h"

namespace radixlm {
namespace {

namespace fs = std::filesystem;
using model::testing::BuildLoraAdapter;
using model::testing::BuildTinyModel;
using model::testing::LoraSpec;
using model::testing::ParseTinyModel;
using model::testing::TinyModelSpec;

constexpr int64_t kPool = 160;
constexpr int64_t kWindow = 8;
constexpr int64_t kSwaPool = 96;

TinyModelSpec Spec(bool gemma3) {
  TinyModelSpec s;
  s.vocab = 64;
  s.tied_output = false;
  s.seed = 11;
  if (gemma3) {
    s.arch = "gemma3";
    s.n_layers = 6;  // layer 5 is the global one
    s.n_kv_heads = 1;
    s.head_dim = 32;
    s.sliding_window = kWindow;
    s.rope_base = 1e6f;
  }
  return s;
}

// A request's LoRA adapter and the tree namespace it runs in (as the engine's LoraRegistry
// hands them out).
struct Lora {
  std::shared_ptr<const model::LoraAdapter> adapter;
  int32_t key_namespace = 0;
};

// One server lifetime: a scheduler over a fresh model runner.
class Instance {
 public:
  Instance(const std::vector<uint8_t>& gguf, bool swa, const std::string& dir,
           bool write_through = false) {
    model::ModelOptions mo;
    mo.n_threads = 1;
    mo.max_batch_tokens = 512;
    mo.max_context = 256;
    auto model = model::Model::FromGguf(ParseTinyModel(gguf), mo);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    auto runner = ModelBackedRunner::Create(std::move(*model), kPool + 1, swa ? kSwaPool + 1 : 0);
    EXPECT_TRUE(runner.ok()) << runner.status().ToString();
    runner_ = std::move(*runner);
    SchedulerConfig c;
    c.max_total_tokens = kPool;
    c.max_running_requests = 4;
    c.chunked_prefill_size = 32;
    c.max_prefill_tokens = 64;
    if (swa) {
      c.swa_max_total_tokens = kSwaPool;
      c.sliding_window = kWindow;
    }
    c.hicache.enable = !dir.empty();
    c.hicache.write_through = write_through;
    c.hicache.dir = dir;
    c.hicache.capacity_bytes = 64 << 20;
    c.hicache.model_id = 1;
    c.hicache.block_tokens = 8;
    auto sched = Scheduler::Create(c, runner_.get(), nullptr, [this](RequestOutput&& out) {
      auto& ids = outputs_[out.id];
      ids.insert(ids.end(), out.chunk.output_ids.begin(), out.chunk.output_ids.end());
    });
    EXPECT_TRUE(sched.ok()) << sched.status().ToString();
    scheduler_ = std::move(*sched);
  }

  // Greedy output of one request run alone, and the prefill tokens it computed.
  std::pair<std::vector<int32_t>, int64_t> Run(uint64_t id, const std::vector<int32_t>& prompt,
                                               const Lora& lora = {}) {
    const int64_t before = scheduler_->GetStats().prefill_tokens;
    RequestInput in;
    in.id = id;
    in.input_ids = prompt;
    in.lora = lora.adapter;
    in.lora_namespace = lora.key_namespace;
    in.lora_identity = lora.adapter != nullptr ? lora.adapter->identity() : 0;
    in.params.temperature = 0.0f;
    in.params.max_new_tokens = 6;
    in.params.ignore_eos = true;
    EXPECT_TRUE(scheduler_->AddRequest(std::move(in)).ok());
    for (int i = 0; i < 10000 && scheduler_->HasWork(); ++i) {
      const Status s = scheduler_->Step();
      EXPECT_TRUE(s.ok()) << s.ToString();
      const Status inv = scheduler_->CheckInvariants();
      EXPECT_TRUE(inv.ok()) << inv.ToString();
      if (!s.ok() || !inv.ok()) break;
    }
    return {outputs_[id], scheduler_->GetStats().prefill_tokens - before};
  }

  Scheduler& scheduler() { return *scheduler_; }

  // The adapter in `bytes` (kept alive by the caller) loaded against this instance's model,
  // in tree namespace key_namespace.
  Lora LoadLora(const std::vector<uint8_t>& bytes, int32_t key_namespace) {
    auto adapter = model::LoraAdapter::FromGguf(ParseTinyModel(bytes), runner_->model().config(),
                                                runner_->model().weights());
    EXPECT_TRUE(adapter.ok()) << adapter.status().ToString();
    if (!adapter.ok()) return {};
    return {std::shared_ptr<const model::LoraAdapter>(std::move(*adapter)), key_namespace};
  }

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
    t = static_cast<int32_t>(1 + x % 63);
  }
  return p;
}

class HiCacheModelTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    dir_ =
        (fs::temp_directory_path() / ("radixlm_hicache_model_test_" + std::to_string(::getpid()) +
                                      (GetParam() ? "_swa" : "_full")))
            .string();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_P(HiCacheModelTest, EvictedAndRestartedPrefixesGiveTheSameGreedyOutput) {
  const bool swa = GetParam();
  const std::vector<uint8_t> gguf = BuildTinyModel(Spec(swa));
  const std::vector<int32_t> doc = Prompt(1, 70);
  std::vector<int32_t> cold_output;
  int64_t cold_cost = 0;
  {
    Instance tier(gguf, swa, dir_);
    std::tie(cold_output, cold_cost) = tier.Run(1, doc);
    ASSERT_EQ(cold_output.size(), 6u);
    for (uint32_t i = 0; i < 3; ++i) tier.Run(10 + i, Prompt(100 + i, 70));  // evicts doc
    tier.scheduler().disk_store_for_testing()->Flush();
    ASSERT_GT(tier.scheduler().GetStats().disk.blocks_stored, 0);
    const auto [warm_output, warm_cost] = tier.Run(2, doc);
    EXPECT_EQ(warm_output, cold_output);
    EXPECT_LE(warm_cost, cold_cost - 8) << "a disk hit computes fewer prefill tokens";
    EXPECT_GE(tier.scheduler().GetStats().disk_hit_tokens, 8);
  }
  // Without the tier the same sequence recomputes, with the same output.
  Instance plain(gguf, swa, "");
  EXPECT_EQ(plain.Run(1, doc).first, cold_output);
  for (uint32_t i = 0; i < 3; ++i) plain.Run(10 + i, Prompt(100 + i, 70));
  const auto [plain_output, plain_cost] = plain.Run(2, doc);
  EXPECT_EQ(plain_output, cold_output);
  // A restart with the same directory hits the stored blocks.
  Instance restarted(gguf, swa, dir_);
  const auto [restart_output, restart_cost] = restarted.Run(1, doc);
  EXPECT_EQ(restart_output, cold_output);
  EXPECT_LE(restart_cost, cold_cost - 8);
  EXPECT_GE(restarted.scheduler().GetStats().disk_hit_tokens, 8);
}

INSTANTIATE_TEST_SUITE_P(Layouts, HiCacheModelTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "HybridSwa" : "OnePool");
                         });

// (a) A prefix computed under adapter A, evicted to disk, is a disk hit for A with the same
// greedy output; also after a restart where A has another namespace number. (b) The same
// prompt under adapter B or the base model gets no disk hit and its own output.
class HiCacheLoraTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {
 protected:
  void SetUp() override {
    const auto [swa, write_through] = GetParam();
    dir_ = (fs::temp_directory_path() /
            ("radixlm_hicache_lora_test_" + std::to_string(::getpid()) + (swa ? "_swa" : "_full") +
             (write_through ? "_through" : "_back")))
               .string();
    fs::remove_all(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string dir_;
};

TEST_P(HiCacheLoraTest, AnAdaptersBlocksServeThatAdapterOnly) {
  const auto [swa, write_through] = GetParam();
  const std::vector<uint8_t> gguf = BuildTinyModel(Spec(swa));
  std::vector<std::vector<uint8_t>> adapters;  // A, B, C: the same shapes, other weights
  for (uint32_t seed : {1u, 2u, 3u}) {
    LoraSpec spec;
    spec.rank = 4;
    spec.stddev = 0.3f;
    spec.seed = seed;
    adapters.push_back(BuildLoraAdapter(*ParseTinyModel(gguf), spec));
  }
  const std::vector<int32_t> doc = Prompt(1, 70);

  // Each adapter's output computed without a disk tier.
  Instance plain(gguf, swa, "");
  const std::vector<int32_t> want_base = plain.Run(1, doc).first;
  std::vector<std::vector<int32_t>> want;
  for (int32_t i = 0; i < 3; ++i)
    want.push_back(plain.Run(2 + i, doc, plain.LoadLora(adapters[i], 1 + i)).first);
  ASSERT_EQ(want_base.size(), 6u);
  ASSERT_NE(want[0], want_base) << "adapter A must change the greedy output";
  ASSERT_NE(want[1], want[0]) << "adapters A and B must differ";
  ASSERT_NE(want[2], want[0]) << "adapters A and C must differ";

  {
    Instance tier(gguf, swa, dir_, write_through);
    const Lora a = tier.LoadLora(adapters[0], 1);
    const Lora b = tier.LoadLora(adapters[1], 2);
    const auto [cold_output, cold_cost] = tier.Run(1, doc, a);
    EXPECT_EQ(cold_output, want[0]);
    for (uint32_t i = 0; i < 3; ++i) tier.Run(10 + i, Prompt(100 + i, 70));  // evicts doc
    tier.scheduler().disk_store_for_testing()->Flush();
    ASSERT_GT(tier.scheduler().GetStats().disk.blocks_stored, 0);
    // (b) B and the base model find none of A's blocks.
    EXPECT_EQ(tier.Run(2, doc, b).first, want[1]);
    EXPECT_EQ(tier.scheduler().GetStats().disk_hit_tokens, 0);
    EXPECT_EQ(tier.Run(3, doc).first, want_base);
    EXPECT_EQ(tier.scheduler().GetStats().disk_hit_tokens, 0);
    // (a) A finds them (B's and the base model's runs evicted A's prefix from RAM, if anything
    // had kept it).
    for (uint32_t i = 0; i < 3; ++i) tier.Run(20 + i, Prompt(200 + i, 70));
    tier.scheduler().disk_store_for_testing()->Flush();
    const auto [warm_output, warm_cost] = tier.Run(4, doc, a);
    EXPECT_EQ(warm_output, want[0]);
    EXPECT_LE(warm_cost, cold_cost - 8) << "a disk hit computes fewer prefill tokens";
    EXPECT_GE(tier.scheduler().GetStats().disk_hit_tokens, 8);
  }
  // A restart: A loaded again (another namespace number) hits its blocks; C, never run
  // before, and the base model get none of them.
  Instance restarted(gguf, swa, dir_, write_through);
  const Lora c = restarted.LoadLora(adapters[2], 1);
  const Lora a = restarted.LoadLora(adapters[0], 7);
  EXPECT_EQ(restarted.Run(1, doc, c).first, want[2]);
  EXPECT_EQ(restarted.scheduler().GetStats().disk_hit_tokens, 0);
  const auto [restart_output, restart_cost] = restarted.Run(2, doc, a);
  EXPECT_EQ(restart_output, want[0]);
  EXPECT_GE(restarted.scheduler().GetStats().disk_hit_tokens, 8);
}

INSTANTIATE_TEST_SUITE_P(LayoutsAndPolicies, HiCacheLoraTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<bool, bool>>& info) {
                           return std::string(std::get<0>(info.param) ? "HybridSwa" : "OnePool") +
                                  (std::get<1>(info.param) ? "WriteThrough" : "WriteBack");
                         });

}  // namespace
}  // namespace radixlm
