// The disk tier (HiCache, file backend) in the scheduler, against the fake model: its Forward
// checks every prefix slot's position and hash chain (and, with the hybrid pool, every
// windowed row a window sees), so KV loaded from disk into the wrong slots, for the wrong
// tokens or from a corrupt file fails the step. Greedy outputs must equal the unbatched
// reference, with fewer tokens computed when a prefix comes back from disk. A full disk
// (FaultyBlockFileIo) and /flush_cache must change no output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "scheduler_harness.h"
#include "support/faulty_block_file_io.h"

namespace radixlm::testing {
namespace {

namespace fs = std::filesystem;

struct HiParams {
  int32_t page_size;
  bool write_through;
  bool swa;    // hybrid sliding-window pool (window 16)
  bool async;  // loads on the loader thread (else synchronous at admission)
};

std::string Name(const ::testing::TestParamInfo<HiParams>& info) {
  return "page" + std::to_string(info.param.page_size) +
         (info.param.write_through ? "_through" : "_back") + (info.param.swa ? "_swa" : "") +
         (info.param.async ? "_async" : "_sync");
}

class HiCacheTest : public ::testing::TestWithParam<HiParams> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("radixlm_hicache_test_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::remove_all(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  HarnessOptions Options(bool enable = true, uint64_t model_id = 42,
                         BlockFileIo* file_io = nullptr) const {
    const HiParams& p = GetParam();
    HarnessOptions o;
    o.config = SmallConfig();
    o.config.page_size = p.page_size;
    o.config.max_total_tokens = 320;  // about two 150-token prompts
    o.config.chunked_prefill_size = 64;
    o.config.max_running_requests = 4;
    if (p.swa) {
      o.config.swa_max_total_tokens = 160;
      o.config.sliding_window = 16;
    }
    o.config.hicache.enable = enable;
    o.config.hicache.write_through = p.write_through;
    o.config.hicache.dir = dir_.string();
    o.config.hicache.capacity_bytes = 64 << 20;
    o.config.hicache.model_id = model_id;
    o.config.hicache.block_tokens = 16;
    o.config.hicache.async_load = p.async;
    o.config.hicache.file_io = file_io;
    return o;
  }

  // Runs one greedy request alone; returns tokens the model computed for it.
  int64_t Run(SchedulerHarness& h, uint64_t id, const std::vector<int32_t>& prompt) {
    const int64_t before = h.runner().tokens_computed();
    h.Add(SchedulerHarness::Greedy(id, prompt, 4));
    h.RunUntilIdle();
    EXPECT_EQ(h.result(id).ids, h.runner().ReferenceGreedy(prompt, 4)) << "request " << id;
    return h.runner().tokens_computed() - before;
  }

  // Fills the pool with other prompts so that whatever came before is evicted from RAM.
  void Flood(SchedulerHarness& h, PromptGen& gen, uint64_t first_id) {
    for (uint64_t i = 0; i < 4; ++i) Run(h, first_id + i, gen.Tokens(150));
  }

  // Runs doc as request 1, then floods RAM so that write-back stores it; the store's queued
  // writes are done on return. Returns the tokens computed for doc.
  int64_t RunThenEvict(SchedulerHarness& h, PromptGen& gen, const std::vector<int32_t>& doc) {
    const int64_t cold = Run(h, 1, doc);
    Flood(h, gen, 10);
    h.scheduler().disk_store_for_testing()->Flush();
    return cold;
  }

  // RunThenEvict in a scheduler of its own, shut down on return (an earlier server run).
  int64_t StoreInEarlierRun(PromptGen& gen, const std::vector<int32_t>& doc) {
    SchedulerHarness first(Options());
    return RunThenEvict(first, gen, doc);
  }

  // Block files (*.kvb) and temporary files in the store's directory.
  std::pair<int, int> CountFiles() const {
    std::pair<int, int> n{0, 0};
    for (const auto& entry : fs::directory_iterator(dir_)) {
      const std::string name = entry.path().filename().string();
      if (name.ends_with(".kvb")) ++n.first;
      if (name.starts_with(".tmp-")) ++n.second;
    }
    return n;
  }

  fs::path dir_;
};

TEST_P(HiCacheTest, EvictedPrefixComesBackFromDisk) {
  SchedulerHarness h(Options());
  PromptGen gen(1);
  const std::vector<int32_t> doc = gen.Tokens(150);
  const int64_t cold = RunThenEvict(h, gen, doc);
  const SchedulerStats before = h.scheduler().GetStats();
  ASSERT_TRUE(before.hicache_enabled);
  EXPECT_GT(before.disk.blocks_stored, 0);
  const int64_t warm = Run(h, 2, doc);
  const SchedulerStats after = h.scheduler().GetStats();
  EXPECT_GE(after.disk_hit_tokens - before.disk_hit_tokens, 16);
  EXPECT_GT(after.disk.blocks_loaded, before.disk.blocks_loaded);
  EXPECT_GE(h.result(2).cached_tokens, 16);
  EXPECT_LT(warm, cold - 16) << "the disk hit saves prefill work";
  // A prompt sharing only part of the document reuses the blocks of that part.
  std::vector<int32_t> branch(doc.begin(), doc.begin() + 100);
  const std::vector<int32_t> tail = gen.Tokens(30);
  branch.insert(branch.end(), tail.begin(), tail.end());
  Flood(h, gen, 20);
  Run(h, 3, branch);
  EXPECT_EQ(h.scheduler().GetStats().disk.load_failures, 0);
}

TEST_P(HiCacheTest, WholeEvictedPromptComesBackFromDisk) {
  // With the sliding-window pool, releasing a window splits nodes where no block ends; the
  // block across such a split must still be stored, or the stored prefix stops there.
  SchedulerHarness h(Options());
  PromptGen gen(5);
  const std::vector<int32_t> doc = gen.Tokens(150);
  Run(h, 1, doc);
  Flood(h, gen, 10);
  h.scheduler().disk_store_for_testing()->Flush();
  Run(h, 2, doc);
  // Every full block before the prompt's last token: 9 blocks of 16.
  EXPECT_EQ(h.result(2).cached_tokens, 144);
}

TEST_P(HiCacheTest, OutputsEqualWithoutTheTier) {
  SchedulerHarness with(Options());
  SchedulerHarness without(Options(/*enable=*/false));
  PromptGen gen(2);
  std::vector<std::vector<int32_t>> docs;
  for (int i = 0; i < 4; ++i) docs.push_back(gen.Tokens(120));
  // Each document asked twice, concurrently with others, in a shuffled order.
  uint64_t id = 1;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 4; ++i) {
      std::vector<int32_t> q = docs[(i * 3 + round) % 4];
      const std::vector<int32_t> tail = gen.Tokens(8);
      q.insert(q.end(), tail.begin(), tail.end());
      with.Add(SchedulerHarness::Greedy(id, q, 6));
      without.Add(SchedulerHarness::Greedy(id, q, 6));
      ++id;
    }
    with.RunUntilIdle();
    without.RunUntilIdle();
  }
  for (uint64_t i = 1; i < id; ++i) EXPECT_EQ(with.result(i).ids, without.result(i).ids) << i;
}

TEST_P(HiCacheTest, RestartHitsStoredPrefixes) {
  PromptGen gen(3);
  const std::vector<int32_t> doc = gen.Tokens(150);
  const int64_t cold = StoreInEarlierRun(gen, doc);
  SchedulerHarness second(Options());
  const int64_t warm = Run(second, 1, doc);
  EXPECT_GE(second.scheduler().GetStats().disk_hit_tokens, 16);
  EXPECT_LT(warm, cold - 16);
  // Another model's identity never sees them.
  SchedulerHarness foreign(Options(true, /*model_id=*/43));
  const int64_t foreign_cost = Run(foreign, 1, doc);
  EXPECT_EQ(foreign.scheduler().GetStats().disk_hit_tokens, 0);
  EXPECT_EQ(foreign_cost, cold);
}

TEST_P(HiCacheTest, CorruptOrTruncatedBlocksAreRecomputed) {
  PromptGen gen(4);
  const std::vector<int32_t> doc = gen.Tokens(150);
  const int64_t cold = StoreInEarlierRun(gen, doc);
  int n = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    if (n++ % 2 == 0) {
      std::fstream f(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(70);
      f.put('\x01');
    } else {
      fs::resize_file(entry.path(), fs::file_size(entry.path()) - 3);
    }
  }
  ASSERT_GT(n, 0);
  SchedulerHarness second(Options());
  const int64_t cost = Run(second, 1, doc);  // checks the output against the reference
  EXPECT_EQ(second.scheduler().GetStats().disk_hit_tokens, 0);
  EXPECT_GT(second.scheduler().GetStats().disk.load_failures, 0);
  EXPECT_EQ(cost, cold);
}

TEST_P(HiCacheTest, RemovedDirectoryOnlySkipsWrites) {
  SchedulerHarness h(Options());
  PromptGen gen(5);
  const std::vector<int32_t> doc = gen.Tokens(150);
  RunThenEvict(h, gen, doc);
  std::error_code ec;  // the writer thread may be renaming a file in it meanwhile
  fs::remove_all(dir_, ec);
  Run(h, 2, doc);  // the blocks vanished: recomputed, still right
  Flood(h, gen, 20);
  Run(h, 3, doc);
}

TEST_P(HiCacheTest, RequestEndingWhileItsBlocksLoadEndsCleanly) {
  SchedulerHarness h(Options());
  PromptGen gen(6);
  const std::vector<int32_t> doc = gen.Tokens(150);
  RunThenEvict(h, gen, doc);
  // Another request decodes meanwhile; the one that needs the disk blocks is aborted right
  // after its first round (in the load queue when loads are asynchronous).
  h.Add(SchedulerHarness::Greedy(2, gen.Tokens(40), 30));
  h.Step();
  h.Add(SchedulerHarness::Greedy(3, doc, 4));
  h.Step();
  EXPECT_TRUE(h.scheduler().Abort(3));
  ASSERT_TRUE(h.finished(3));
  EXPECT_TRUE(h.result(3).finish->is_abort());
  h.RunUntilIdle();
  // Its blocks stay usable.
  Run(h, 4, doc);
  EXPECT_GE(h.scheduler().GetStats().disk_hit_tokens, 16);
}

TEST_P(HiCacheTest, FullDiskSkipsWritesAndServingGoesOn) {
  FaultyBlockFileIo io;
  SchedulerHarness h(Options(true, 42, &io));
  const int64_t block_file_bytes = 48 + 16 * (4 + h.runner().kv_token_bytes()) + 4;
  io.set_budget(3 * block_file_bytes);  // the disk fills after three blocks
  PromptGen gen(7);
  const std::vector<int32_t> doc = gen.Tokens(150);
  RunThenEvict(h, gen, doc);
  Flood(h, gen, 20);  // many more blocks offered to the full disk
  h.scheduler().disk_store_for_testing()->Flush();
  const SchedulerStats full = h.scheduler().GetStats();
  EXPECT_EQ(full.disk.blocks_stored, 3);
  EXPECT_GE(full.disk.write_failures, 1);
  EXPECT_EQ(full.disk.write_failures, io.failed_writes());
  // Not a retry of every block: most are dropped without an attempt while writes pause.
  EXPECT_GT(full.disk.writes_dropped, 4 * full.disk.write_failures);
  EXPECT_EQ(CountFiles(), std::make_pair(3, 0)) << "whole blocks only, no partial file left";
  // The blocks that were written serve the document's start; every output stays right.
  Run(h, 2, doc);
  const SchedulerStats after = h.scheduler().GetStats();
  EXPECT_GE(after.disk_hit_tokens - full.disk_hit_tokens, 16);
  EXPECT_EQ(after.disk.load_failures, 0);
  Run(h, 3, gen.Tokens(150));
}

TEST_P(HiCacheTest, FlushCacheKeepsTheDiskTier) {
  // As SGLang: /flush_cache drops what RAM holds; the storage tier keeps its blocks.
  SchedulerHarness h(Options());
  PromptGen gen(8);
  const std::vector<int32_t> doc = gen.Tokens(150);
  const int64_t cold = RunThenEvict(h, gen, doc);
  const int64_t blocks = h.scheduler().GetStats().disk.blocks;
  ASSERT_GT(blocks, 0);
  ASSERT_TRUE(h.scheduler().FlushCache().ok());
  const SchedulerStats flushed = h.scheduler().GetStats();
  EXPECT_EQ(flushed.evictable_tokens, 0);
  EXPECT_EQ(flushed.disk.blocks, blocks);
  const int64_t warm = Run(h, 2, doc);
  EXPECT_GE(h.scheduler().GetStats().disk_hit_tokens - flushed.disk_hit_tokens, 16);
  EXPECT_LT(warm, cold - 16);
}

TEST_P(HiCacheTest, LongOutputIsStoredBeforeItsWindowIsReleased) {
  // With the hybrid pool (window 16), a decode releases the windowed KV of its own output as
  // the window moves on, before the output is in the tree; its blocks are written just before.
  SchedulerHarness h(Options());
  PromptGen gen(9);
  const std::vector<int32_t> prompt = gen.Tokens(20);
  h.Add(SchedulerHarness::Greedy(1, prompt, 70));
  h.RunUntilIdle();
  std::vector<int32_t> full = prompt;
  const std::vector<int32_t>& out = h.result(1).ids;
  ASSERT_EQ(out, h.runner().ReferenceGreedy(prompt, 70));
  full.insert(full.end(), out.begin(), out.end());
  Flood(h, gen, 10);
  h.scheduler().disk_store_for_testing()->Flush();
  // A follow-up whose prompt is the first 80 tokens of that conversation: five blocks, four
  // of them (mostly) output.
  std::vector<int32_t> follow(full.begin(), full.begin() + 80);
  const std::vector<int32_t> tail = gen.Tokens(10);
  follow.insert(follow.end(), tail.begin(), tail.end());
  const int64_t before = h.scheduler().GetStats().disk_hit_tokens;
  Run(h, 2, follow);
  EXPECT_GE(h.scheduler().GetStats().disk_hit_tokens - before, 64);
  EXPECT_GE(h.result(2).cached_tokens, 64);
}

TEST_P(HiCacheTest, ClearDiskTierDeletesTheBlocksOnly) {
  SchedulerHarness h(Options());
  PromptGen gen(10);
  const std::vector<int32_t> doc = gen.Tokens(150);
  const int64_t cold = RunThenEvict(h, gen, doc);
  const int64_t ram = h.scheduler().GetStats().evictable_tokens;
  const StatusOr<int64_t> cleared = h.scheduler().ClearDiskTier();
  ASSERT_TRUE(cleared.ok()) << cleared.status().ToString();
  EXPECT_GT(*cleared, 0);
  const SchedulerStats s = h.scheduler().GetStats();
  EXPECT_EQ(s.disk.blocks, 0);
  EXPECT_EQ(s.evictable_tokens, ram) << "the RAM tier stays";
  EXPECT_EQ(CountFiles(), std::make_pair(0, 0));
  EXPECT_EQ(Run(h, 2, doc), cold) << "recomputed: nothing on disk";
  EXPECT_EQ(h.scheduler().GetStats().disk_hit_tokens, s.disk_hit_tokens);
  SchedulerHarness without(Options(/*enable=*/false));
  EXPECT_EQ(without.scheduler().ClearDiskTier().status().code(), StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, HiCacheTest,
    ::testing::Values(HiParams{1, false, false, true}, HiParams{1, true, false, false},
                      HiParams{4, false, false, true}, HiParams{1, false, true, true},
                      HiParams{4, true, true, false}, HiParams{1, true, true, true}),
    Name);

TEST(HiCacheConfigTest, BadSettingsAreClearErrors) {
  SchedulerConfig c = SmallConfig();
  c.hicache.enable = true;
  EXPECT_FALSE(c.Validate().ok());  // no directory
  c.hicache.dir = "x";
  c.hicache.capacity_bytes = 1 << 20;
  c.page_size = 4;
  c.hicache.block_tokens = 6;
  EXPECT_FALSE(c.Validate().ok());  // not a page multiple
  c.hicache.block_tokens = 8;
  EXPECT_TRUE(c.Validate().ok());
}

}  // namespace
}  // namespace radixlm::testing
