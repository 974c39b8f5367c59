// A deepseek2 model (multi-head latent attention: the cache holds one latent row per token and
// layer, no V) under the scheduler: with the radix cache on, prompts sharing prefixes reuse the
// cached latents and give exactly the greedy outputs they give with the cache off; a prefix
// evicted to the disk tier and read back (ModelBackedRunner::ReadKv / WriteKv of the latent
// rows), or moved to another instance as prefill/decode disaggregation moves it (PrefixKv),
// gives the output of computing it, with fewer prefill tokens computed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "disagg/kv_transfer_record.h"
#include "disagg/prefix_kv_record.h"
#include "engine/model_backed_runner.h"
#include "engine/prefix_kv.h"
#include "model/deepseek2_reference.h"
#include "model/model.h"
#include "model/tiny_model.h"
#include "scheduler/scheduler.h"

namespace radixlm {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kPool = 160;

model::testing::DeepSeek2Spec Spec() {
  model::testing::DeepSeek2Spec s;  // V2-Lite's features; and V3's routing below
  s.q_rank = 64;
  s.gating = 2;
  s.probs_bias = true;
  s.n_groups = 4;
  s.n_groups_used = 2;
  s.weights_norm = true;
  s.weights_scale = 2.5f;
  return s;
}

class Instance {
 public:
  Instance(const std::vector<uint8_t>& gguf, bool radix, const std::string& disk_dir) {
    model::ModelOptions mo;
    mo.n_threads = 2;
    mo.max_batch_tokens = 128;
    mo.max_context = 256;
    auto model = model::Model::FromGguf(model::testing::ParseTinyModel(gguf), mo);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    auto runner = ModelBackedRunner::Create(std::move(*model), kPool + 1, 0);
    EXPECT_TRUE(runner.ok()) << runner.status().ToString();
    runner_ = std::move(*runner);
    SchedulerConfig c;
    c.max_total_tokens = kPool;
    c.max_running_requests = 4;
    c.chunked_prefill_size = 24;
    c.max_prefill_tokens = 48;
    c.disable_radix_cache = !radix;
    c.hicache.enable = !disk_dir.empty();
    c.hicache.write_through = false;
    c.hicache.dir = disk_dir;
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

  void Add(uint64_t id, const std::vector<int32_t>& prompt) {
    RequestInput in;
    in.id = id;
    in.input_ids = prompt;
    in.params.temperature = 0.0f;
    in.params.max_new_tokens = 6;
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

  // One request alone: its greedy output and the prefill tokens it computed.
  std::pair<std::vector<int32_t>, int64_t> Run(uint64_t id, const std::vector<int32_t>& prompt) {
    const int64_t before = scheduler_->GetStats().prefill_tokens;
    Add(id, prompt);
    Drain();
    return {outputs_[id], scheduler_->GetStats().prefill_tokens - before};
  }

  const std::vector<int32_t>& Output(uint64_t id) { return outputs_[id]; }
  Scheduler& scheduler() { return *scheduler_; }
  model::KvCache& kv() { return *runner_->kv_cache(); }

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
    t = static_cast<int32_t>(1 + x % 95);
  }
  return p;
}

std::vector<int32_t> Concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(MlaModelSchedulerTest, RadixCacheOnAndOffGiveTheSameOutputs) {
  const std::vector<uint8_t> gguf = model::testing::BuildDeepSeek2(Spec());
  const std::vector<int32_t> shared = Prompt(1, 40);
  const std::vector<std::vector<int32_t>> prompts = {Concat(shared, Prompt(2, 9)),
                                                     Concat(shared, Prompt(3, 17)), Prompt(4, 30),
                                                     Concat(shared, Prompt(5, 3)), shared};
  std::vector<std::vector<int32_t>> off;
  int64_t off_prefill = 0;
  {
    Instance plain(gguf, /*radix=*/false, "");
    for (size_t i = 0; i < prompts.size(); ++i) {
      auto [out, cost] = plain.Run(i, prompts[i]);
      ASSERT_EQ(out.size(), 6u);
      off.push_back(out);
      off_prefill += cost;
    }
  }
  // With the tree: one at a time (the shared prefix's latents reused), then all together.
  Instance cached(gguf, /*radix=*/true, "");
  int64_t on_prefill = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto [out, cost] = cached.Run(i, prompts[i]);
    EXPECT_EQ(out, off[i]) << "request " << i;
    on_prefill += cost;
  }
  EXPECT_LE(on_prefill, off_prefill - 3 * 32) << "the shared prefix is computed once";
  for (size_t i = 0; i < prompts.size(); ++i) cached.Add(100 + i, prompts[i]);
  cached.Drain();
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(cached.Output(100 + i), off[i]) << "request " << i << " in a batch";
  }
}

TEST(MlaModelSchedulerTest, PrefixThroughTheDiskTierGivesTheSameOutput) {
  const std::string dir =
      (fs::temp_directory_path() / ("radixlm_mla_model_test_" + std::to_string(::getpid())))
          .string();
  std::error_code ec;
  fs::remove_all(dir, ec);
  const std::vector<uint8_t> gguf = model::testing::BuildDeepSeek2(Spec());
  const std::vector<int32_t> doc = Prompt(7, 70);
  {
    // The instance (and the disk store's writer thread) ends before its folder is removed.
    Instance tier(gguf, /*radix=*/true, dir);
    const auto [cold_output, cold_cost] = tier.Run(1, doc);
    ASSERT_EQ(cold_output.size(), 6u);
    for (uint32_t i = 0; i < 3; ++i) tier.Run(10 + i, Prompt(100 + i, 70));  // evicts doc
    tier.scheduler().disk_store_for_testing()->Flush();
    ASSERT_GT(tier.scheduler().GetStats().disk.blocks_stored, 0);
    const auto [warm_output, warm_cost] = tier.Run(2, doc);
    EXPECT_EQ(warm_output, cold_output);
    EXPECT_LE(warm_cost, cold_cost - 8) << "a disk hit computes fewer prefill tokens";
    EXPECT_GE(tier.scheduler().GetStats().disk_hit_tokens, 8);
  }
  fs::remove_all(dir, ec);
}

// Prefill/decode disaggregation's move (engine/prefix_kv.h, as EngineCore exports and imports):
// the latent rows of a prompt computed by one instance, written into another's pool and tree,
// give that instance the output of computing the prompt itself.
TEST(MlaModelSchedulerTest, APrefixMovedToAnotherInstanceGivesTheSameOutput) {
  const std::vector<uint8_t> gguf = model::testing::BuildDeepSeek2(Spec());
  const std::vector<int32_t> doc = Prompt(11, 70);
  Instance prefill(gguf, /*radix=*/true, "");
  const auto [cold_output, cold_cost] = prefill.Run(1, doc);
  ASSERT_EQ(cold_output.size(), 6u);
  const std::vector<int32_t> slots = prefill.scheduler().CachedPrefixSlots(doc);
  ASSERT_GE(slots.size(), 64u);
  // Through the wire form the UCX ends move (disagg/pd_transfer.h): one latent plane per layer.
  const std::vector<uint8_t> wire = disagg::SerializeKvTransferRecord(disagg::RecordFromPrefixKv(
      /*room=*/1, ReadPrefixKv(prefill.kv(), prefill.scheduler().pool(), doc, slots)));
  StatusOr<disagg::KvTransferRecord> record = disagg::ParseKvTransferRecord(wire);
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  const PrefixKv moved = disagg::PrefixKvFromRecord(std::move(*record));
  EXPECT_EQ(moved.tokens.size(), slots.size());

  Instance decode(gguf, /*radix=*/true, "");
  const std::span<const int32_t> prefix = std::span<const int32_t>(doc).first(slots.size());
  auto pinned = decode.scheduler().ImportPrefix(
      /*pin=*/1, prefix, /*key_namespace=*/0, PrefixKvSwaValidFrom(decode.kv(), moved),
      [&](std::span<const int32_t> to) {
        return WritePrefixKv(decode.kv(), decode.scheduler().pool(), moved, to);
      });
  ASSERT_TRUE(pinned.ok()) << pinned.status().ToString();
  EXPECT_GE(*pinned, 64);
  const auto [warm_output, warm_cost] = decode.Run(2, doc);
  EXPECT_EQ(warm_output, cold_output);
  EXPECT_LE(warm_cost, cold_cost - *pinned + 1) << "the moved prefix is not computed again";
  EXPECT_TRUE(decode.scheduler().UnpinPrefix(1));
}

}  // namespace
}  // namespace radixlm
