// A hybrid (qwen35) model's prefixes leaving one radix tree and entering another: moved to
// another instance as prefill/decode disaggregation moves them (PrefixKv with the linear layers'
// state, engine/prefix_kv.h, through its wire record), and through the disk tier (blocks with state
// snapshots beside them, scheduler_hicache_state.cc), after RAM let them go and after a restart.
// Each gives, bit for bit, the greedy tokens and logprobs of computing the prompt with the radix
// cache off, counts the tokens it brought as cached and computes only the rest.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
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
#include "model/model.h"
#include "model/tiny_model.h"
#include "scheduler/run_result.h"
#include "scheduler/scheduler.h"

namespace radixlm {
namespace {

namespace fs = std::filesystem;
using model::testing::BuildTinyModel;
using model::testing::ParseTinyModel;
using scheduler_testing::ExpectSame;
using scheduler_testing::Ids;
using scheduler_testing::Prompt;
using scheduler_testing::Result;

constexpr int32_t kRunning = 4;

struct Options {
  bool cache = true;
  int64_t pool = 160;
  std::string disk_dir = {};  // non-empty: the disk tier there
  bool write_through = false;
  bool async_load = true;
};

class Instance {
 public:
  Instance(const std::vector<uint8_t>& gguf, const Options& o) {
    model::ModelOptions mo;
    mo.n_threads = 2;
    mo.max_batch_tokens = 128;
    mo.max_context = 256;
    auto model = model::Model::FromGguf(ParseTinyModel(gguf), mo);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    constexpr int32_t kSnapshots = 16;
    auto runner = ModelBackedRunner::Create(std::move(*model), o.pool + 1, 0,
                                            kernels::KvDtype::kF16, kRunning + kSnapshots);
    EXPECT_TRUE(runner.ok()) << runner.status().ToString();
    runner_ = std::move(*runner);
    SchedulerConfig c;
    c.max_total_tokens = o.pool;
    c.max_running_requests = kRunning;
    c.chunked_prefill_size = 48;
    c.max_prefill_tokens = 96;
    c.disable_radix_cache = !o.cache;
    c.state_snapshot_slots = kSnapshots;
    c.hybrid_snapshot_interval = 16;
    c.hicache.enable = !o.disk_dir.empty();
    c.hicache.write_through = o.write_through;
    c.hicache.async_load = o.async_load;
    c.hicache.dir = o.disk_dir;
    c.hicache.capacity_bytes = 64 << 20;
    c.hicache.model_id = 1;
    c.hicache.block_tokens = 8;
    auto sched = Scheduler::Create(c, runner_.get(), nullptr, [this](RequestOutput&& out) {
      Result& r = results_[out.id];
      r.tokens.insert(r.tokens.end(), out.chunk.output_ids.begin(), out.chunk.output_ids.end());
      for (LogprobEntry& e : out.chunk.output_token_logprobs) r.logprobs.push_back(std::move(e));
      r.cached_tokens = out.chunk.meta.cached_tokens;
    });
    EXPECT_TRUE(sched.ok()) << sched.status().ToString();
    scheduler_ = std::move(*sched);
  }

  // Runs one request to the end; returns its result. snapshot_resume_point: as a prefill
  // server's request (RequestInput).
  const Result& Run(uint64_t id, const Ids& prompt, int max_new,
                    bool snapshot_resume_point = false) {
    RequestInput in;
    in.id = id;
    in.input_ids = prompt;
    in.params.temperature = 0.0f;
    in.params.max_new_tokens = max_new;
    in.params.ignore_eos = true;
    in.return_logprob = true;
    in.top_logprobs_num = 5;
    in.snapshot_resume_point = snapshot_resume_point;
    EXPECT_TRUE(scheduler_->AddRequest(std::move(in)).ok());
    for (int i = 0; i < 10000 && scheduler_->HasWork(); ++i) {
      const Status s = scheduler_->Step();
      EXPECT_TRUE(s.ok()) << s.ToString();
      const Status inv = scheduler_->CheckInvariants();
      EXPECT_TRUE(inv.ok()) << inv.ToString();
      if (!s.ok() || !inv.ok()) break;
    }
    return results_[id];
  }

  Scheduler& scheduler() { return *scheduler_; }
  model::KvCache& kv() { return *runner_->kv_cache(); }
  int64_t prefill_tokens() const { return scheduler_->GetStats().prefill_tokens; }

 private:
  std::unique_ptr<ModelBackedRunner> runner_;
  std::unique_ptr<Scheduler> scheduler_;
  std::map<uint64_t, Result> results_;
};

// Through the wire form the UCX ends move (disagg/prefix_kv_record.h, kv_transfer_record.h).
PrefixKv ThroughTheRecord(const PrefixKv& kv) {
  StatusOr<disagg::KvTransferRecord> parsed = disagg::ParseKvTransferRecord(
      disagg::SerializeKvTransferRecord(disagg::RecordFromPrefixKv(/*room=*/1, PrefixKv(kv))));
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok()) return {};
  return disagg::PrefixKvFromRecord(std::move(*parsed));
}

class HybridTransferTest : public ::testing::Test {
 protected:
  HybridTransferTest() : gguf_(BuildTinyModel(model::testing::TinyQwen35Spec())) {}

  Result Uncached(const Ids& prompt, int max_new) {
    Instance off(gguf_, {.cache = false});
    return off.Run(1, prompt, max_new);
  }

  std::vector<uint8_t> gguf_;
};

// As EngineCore exports (a prefill request, snapshot_resume_point) and imports a prompt.
TEST_F(HybridTransferTest, APrefixMovedToAnotherInstanceResumesAtItsLastPosition) {
  const Ids doc = Prompt(11, 70);
  const Result want = Uncached(doc, 6);

  Instance prefill(gguf_, {});
  prefill.Run(1, doc, 1, /*snapshot_resume_point=*/true);
  const Scheduler::CachedPrefix cached = prefill.scheduler().ExportablePrefix(doc);
  ASSERT_EQ(cached.slots.size(), 69u) << "the snapshot before the last prompt position";
  ASSERT_GE(cached.state_slot, 0);
  PrefixKv exported = ReadPrefixKv(prefill.kv(), prefill.scheduler().pool(), doc, cached.slots);
  ASSERT_TRUE(ReadPrefixState(prefill.kv(), cached.state_slot, &exported).ok());
  const PrefixKv moved = ThroughTheRecord(exported);
  EXPECT_EQ(moved.tokens.size(), 69u);
  EXPECT_EQ(moved.state_layers, 4u);  // linear, linear, linear, (full), linear
  EXPECT_EQ(moved.state.size(), static_cast<size_t>(prefill.kv().recurrent()->slot_bytes()));

  Instance decode(gguf_, {});
  auto pinned = decode.scheduler().ImportPrefix(
      /*pin=*/1, moved.tokens, /*key_namespace=*/0, PrefixKvSwaValidFrom(decode.kv(), moved),
      [&](std::span<const int32_t> to) {
        return WritePrefixKv(decode.kv(), decode.scheduler().pool(), moved, to);
      },
      [&](int32_t state_slot) { return WritePrefixState(decode.kv(), moved, state_slot); });
  ASSERT_TRUE(pinned.ok()) << pinned.status().ToString();
  EXPECT_EQ(*pinned, 69);
  const int64_t before = decode.prefill_tokens();
  const Result& got = decode.Run(2, doc, 6);
  ExpectSame(got, want, "the moved prefix");
  EXPECT_EQ(got.cached_tokens, 69);
  EXPECT_EQ(decode.prefill_tokens() - before, 1) << "only the last prompt position is computed";
  EXPECT_TRUE(decode.scheduler().UnpinPrefix(1));

  // Another model's state is refused, naming both shapes, and so is a record without any.
  PrefixKv other = moved;
  other.state_layers = 6;
  Status s = WritePrefixState(decode.kv(), other, 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("6 linear-attention layers"), std::string::npos) << s.message();
  other = moved;
  other.state_layers = 0;
  other.state.clear();
  s = CheckPrefixState(decode.kv(), other);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("no linear-attention layers"), std::string::npos) << s.message();
}

class HybridDiskTierTest : public HybridTransferTest {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');  // a parameterized test's "Name/Param"
    dir_ = (fs::temp_directory_path() /
            ("radixlm_hybrid_transfer_" + std::to_string(::getpid()) + "_" + name))
               .string();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string dir_;
};

class HybridDiskTierLoadTest : public HybridDiskTierTest,
                               public ::testing::WithParamInterface<bool> {};

// Loads on the store's loader thread (async_load) and inside admission.
INSTANTIATE_TEST_SUITE_P(Loads, HybridDiskTierLoadTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Async" : "Sync";
                         });

TEST_P(HybridDiskTierLoadTest, APrefixEvictedToDiskResumesFromItsSnapshotThereAndAfterARestart) {
  const Ids doc = Prompt(7, 70);
  const Result want = Uncached(doc, 6);
  {
    // (The instance, and the disk store's writer thread, ends before the next one opens.)
    Instance tier(gguf_, {.disk_dir = dir_, .async_load = GetParam()});
    ExpectSame(tier.Run(1, doc, 6), want, "computed");
    for (uint32_t i = 0; i < 3; ++i) tier.Run(10 + i, Prompt(100 + i, 70), 6);  // evicts doc
    tier.scheduler().disk_store_for_testing()->Flush();
    ASSERT_GT(tier.scheduler().GetStats().disk.blocks_stored, 0);
    const int64_t before = tier.prefill_tokens();
    const Result& warm = tier.Run(2, doc, 6);
    ExpectSame(warm, want, "read back from disk");
    // Snapshots at every 16 tokens (block ends); the last before position 69 is at 64.
    EXPECT_EQ(warm.cached_tokens, 64);
    EXPECT_EQ(tier.prefill_tokens() - before, 70 - 64);
    EXPECT_GE(tier.scheduler().GetStats().disk_hit_tokens, 64);
  }
  Instance restarted(gguf_, {.disk_dir = dir_, .async_load = GetParam()});
  const Result& warm = restarted.Run(3, doc, 6);
  ExpectSame(warm, want, "after a restart");
  EXPECT_EQ(warm.cached_tokens, 64);
}

TEST_F(HybridDiskTierTest, WriteThroughStoresSnapshotsAsTheyAreTaken) {
  const Ids doc = Prompt(9, 60);
  const Result want = Uncached(doc, 4);
  {
    Instance tier(gguf_, {.disk_dir = dir_, .write_through = true});
    ExpectSame(tier.Run(1, doc, 4), want, "computed");
  }
  Instance restarted(gguf_, {.disk_dir = dir_, .write_through = true});
  const Result& warm = restarted.Run(2, doc, 4);
  ExpectSame(warm, want, "read back from disk");
  EXPECT_EQ(warm.cached_tokens, 48) << "the last snapshot at a block end before position 59";
  EXPECT_GE(restarted.scheduler().GetStats().disk_hit_tokens, 48);
}

// Snapshots go to disk where blocks end: an interval that does not is refused at start-up.
TEST_F(HybridDiskTierTest, ASnapshotIntervalNotAWholeNumberOfBlocksIsRefused) {
  model::ModelOptions mo;
  mo.n_threads = 1;
  mo.max_batch_tokens = 64;
  mo.max_context = 128;
  auto model = model::Model::FromGguf(ParseTinyModel(gguf_), mo);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto runner = ModelBackedRunner::Create(std::move(*model), 129, 0, kernels::KvDtype::kF16, 8);
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  SchedulerConfig c;
  c.max_total_tokens = 128;
  c.max_running_requests = 2;
  c.state_snapshot_slots = 4;
  c.hybrid_snapshot_interval = 12;
  c.hicache.enable = true;
  c.hicache.dir = dir_;
  c.hicache.capacity_bytes = 1 << 20;
  c.hicache.model_id = 1;
  c.hicache.block_tokens = 8;
  auto sched = Scheduler::Create(c, runner->get(), nullptr, [](RequestOutput&&) {});
  ASSERT_FALSE(sched.ok());
  EXPECT_EQ(sched.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(sched.status().message().find("--hybrid-snapshot-interval (12)"), std::string::npos)
      << sched.status().message();
}

}  // namespace
}  // namespace radixlm
