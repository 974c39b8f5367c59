#include "scheduler/prefill_adder.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace radixlm {
namespace {

PrefillBudgets Roomy() {
  PrefillBudgets b;
  b.available_tokens = 10000;
  b.input_tokens = 1000;
  b.chunk_tokens = 300;
  b.batch_tokens = 2000;
  b.logprob_rows = 64;
  b.request_slots = 8;
  return b;
}

TEST(PrefillAdderTest, AdmitsWholeRequestsWhileBudgetsLast) {
  PrefillAdder adder(Roomy());
  int64_t ext = 0;
  EXPECT_EQ(adder.AddOne({.extend_len = 100, .max_new_tokens = 10}, &ext),
            PrefillAdder::Result::kContinue);
  EXPECT_EQ(ext, 100);
  EXPECT_EQ(adder.AddOne({.extend_len = 150, .max_new_tokens = 10}, &ext),
            PrefillAdder::Result::kContinue);
  EXPECT_EQ(ext, 150);
  // 50 chunk tokens left: a 100-token prompt is cut to 50 and ends the round.
  EXPECT_EQ(adder.AddOne({.extend_len = 100, .max_new_tokens = 10}, &ext),
            PrefillAdder::Result::kOther);
  EXPECT_EQ(ext, 50);
  EXPECT_TRUE(adder.has_partial());
  EXPECT_EQ(adder.AddOne({.extend_len = 1, .max_new_tokens = 1}, &ext),
            PrefillAdder::Result::kOther);
  EXPECT_EQ(ext, 0);
}

// An image attended bidirectionally is one range a chunk never ends inside: the cut moves back
// to the image's start, and a chunk that would start inside nothing else waits.
TEST(PrefillAdderTest, CutsNeverFallInsideAWholeRange) {
  const std::vector<std::pair<int64_t, int64_t>> image = {{250, 350}};
  PrefillAdder adder(Roomy());  // chunk 300
  int64_t ext = 0;
  EXPECT_EQ(adder.AddOne({.extend_len = 400, .max_new_tokens = 10, .whole_ranges = image}, &ext),
            PrefillAdder::Result::kOther);
  EXPECT_EQ(ext, 250);
  EXPECT_TRUE(adder.has_partial());

  // The next round continues at the image: 300 chunk tokens hold it whole.
  PrefillAdder next(Roomy());
  const std::vector<std::pair<int64_t, int64_t>> at_start = {{0, 100}};
  EXPECT_EQ(next.AddChunked({.extend_len = 150, .max_new_tokens = 10, .whole_ranges = at_start}),
            150);

  // 60 chunk tokens left: the image's 100 do not fit, nothing is admitted.
  PrefillBudgets small = Roomy();
  small.chunk_tokens = 60;
  PrefillAdder tight(small);
  EXPECT_EQ(tight.AddChunked({.extend_len = 150, .max_new_tokens = 10, .whole_ranges = at_start}),
            std::nullopt);
  EXPECT_EQ(tight.AddOne({.extend_len = 150, .max_new_tokens = 10, .whole_ranges = at_start}, &ext),
            PrefillAdder::Result::kOther);
  EXPECT_EQ(ext, 0);
  // A range the cut does not reach changes nothing.
  const std::vector<std::pair<int64_t, int64_t>> later = {{100, 140}};
  EXPECT_EQ(tight.AddChunked({.extend_len = 150, .max_new_tokens = 10, .whole_ranges = later}), 60);
}

TEST(PrefillAdderTest, WholePromptsAreNeverCut) {
  PrefillBudgets b = Roomy();
  b.chunk_tokens.reset();
  b.batch_tokens = 300;
  b.whole_prompts = true;  // an encoder's
  PrefillAdder adder(b);
  int64_t ext = 0;
  EXPECT_EQ(adder.AddOne({.extend_len = 200, .max_new_tokens = 0}, &ext),
            PrefillAdder::Result::kContinue);
  EXPECT_EQ(ext, 200);
  // 100 batch tokens left: a 150-token prompt waits for another round, whole.
  EXPECT_EQ(adder.AddOne({.extend_len = 150, .max_new_tokens = 0}, &ext),
            PrefillAdder::Result::kOther);
  EXPECT_EQ(ext, 0);
  EXPECT_FALSE(adder.has_partial());
  EXPECT_EQ(adder.AddOne({.extend_len = 100, .max_new_tokens = 0}, &ext),
            PrefillAdder::Result::kOther);  // fits exactly, and the batch is then full
  EXPECT_EQ(ext, 100);
  // Alone, with too little KV room for it: no token, nothing cut.
  PrefillBudgets tight = b;
  tight.available_tokens = 100;
  PrefillAdder alone(tight);
  EXPECT_EQ(alone.AddOne({.extend_len = 150, .max_new_tokens = 0, .force = true}, &ext),
            PrefillAdder::Result::kNoToken);
  EXPECT_EQ(ext, 0);
}

TEST(PrefillAdderTest, ChunksArePageAligned) {
  PrefillBudgets b = Roomy();
  b.page_size = 16;
  b.chunk_tokens = 100;
  PrefillAdder adder(b);
  int64_t ext = 0;
  adder.AddOne({.extend_len = 500, .max_new_tokens = 10}, &ext);
  EXPECT_EQ(ext, 96);
}

TEST(PrefillAdderTest, TotalBudgetReservesRunningDecodes) {
  PrefillBudgets b = Roomy();
  b.available_tokens = 1000;
  b.running_reserve = 800;  // running requests' expected growth
  PrefillAdder adder(b);
  int64_t ext = 0;
  EXPECT_EQ(adder.AddOne({.extend_len = 150, .max_new_tokens = 100}, &ext),
            PrefillAdder::Result::kNoToken);
  EXPECT_EQ(ext, 0);
  EXPECT_EQ(adder.AddOne({.extend_len = 50, .max_new_tokens = 100}, &ext),
            PrefillAdder::Result::kContinue);
  EXPECT_EQ(ext, 50);
  // A forced candidate ignores the estimate; it is still cut by the chunk size.
  PrefillAdder forced(b);
  EXPECT_NE(forced.AddOne({.extend_len = 900, .max_new_tokens = 100, .force = true}, &ext),
            PrefillAdder::Result::kContinue);
  EXPECT_EQ(ext, 300);
}

TEST(PrefillAdderTest, InputBudgetDefersButNeverTheFirst) {
  PrefillBudgets b = Roomy();
  b.input_tokens = 100;
  b.chunk_tokens.reset();
  PrefillAdder adder(b);
  int64_t ext = 0;
  EXPECT_EQ(adder.AddOne({.extend_len = 400, .max_new_tokens = 1}, &ext),
            PrefillAdder::Result::kOther);
  EXPECT_EQ(ext, 400);  // the first one goes whole (no chunking)
  PrefillAdder adder2(b);
  adder2.AddOne({.extend_len = 60, .max_new_tokens = 1}, &ext);
  EXPECT_EQ(adder2.AddOne({.extend_len = 60, .max_new_tokens = 1}, &ext),
            PrefillAdder::Result::kOther);
  EXPECT_EQ(ext, 0);
}

TEST(PrefillAdderTest, LogprobRowsAndBatchCap) {
  PrefillBudgets b = Roomy();
  b.batch_tokens = 120;
  PrefillAdder adder(b);
  int64_t ext = 0;
  adder.AddOne({.extend_len = 200, .max_new_tokens = 1, .needs_logprob_rows = true}, &ext);
  EXPECT_EQ(ext, 64);
  PrefillAdder adder2(b);
  adder2.AddOne({.extend_len = 200, .max_new_tokens = 1}, &ext);
  EXPECT_EQ(ext, 120);
}

TEST(PrefillAdderTest, ChunkedRequestContinuesAndLockChangesCount) {
  PrefillBudgets b = Roomy();
  b.available_tokens = 200;
  PrefillAdder adder(b);
  std::optional<int64_t> ext = adder.AddChunked({.extend_len = 500, .max_new_tokens = 5});
  ASSERT_TRUE(ext.has_value());
  EXPECT_EQ(*ext, 200);  // memory-bound
  EXPECT_TRUE(adder.has_partial());
  PrefillAdder adder2(b);
  adder2.OnEvictableChange(-150);
  EXPECT_EQ(*adder2.AddChunked({.extend_len = 500, .max_new_tokens = 5}), 50);
  PrefillAdder adder3(b);
  adder3.OnEvictableChange(-200);
  EXPECT_FALSE(adder3.AddChunked({.extend_len = 500, .max_new_tokens = 5}).has_value());
}

TEST(PrefillAdderTest, RequestSlots) {
  PrefillBudgets b = Roomy();
  b.request_slots = 1;
  PrefillAdder adder(b);
  int64_t ext = 0;
  EXPECT_EQ(adder.AddOne({.extend_len = 10, .max_new_tokens = 1}, &ext),
            PrefillAdder::Result::kOther);
  EXPECT_EQ(ext, 10);
  EXPECT_EQ(adder.AddOne({.extend_len = 10, .max_new_tokens = 1}, &ext),
            PrefillAdder::Result::kOther);
  EXPECT_EQ(ext, 0);
}

}  // namespace
}  // namespace radixlm
