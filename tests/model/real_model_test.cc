// On the real default model (gemma-3-270m Q4_K_M; runs only when RADIXLM_DEFAULT_MODEL names
// an existing file): greedy decoding of a ragged batch equals decoding each prompt alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "model/model.h"

namespace radixlm::model {
namespace {

// Gemma-3 token ids of eight short English prompts (BOS = 2 first), of different lengths so
// the batch is ragged.
const std::vector<std::vector<int32_t>>& Prompts() {
  static const std::vector<std::vector<int32_t>> prompts = {
      {2, 818, 5279, 529, 7001, 563},
      {2, 818, 2935, 236764, 5866, 3009, 11052, 1024, 506, 31770, 4799},
      {2, 9259, 659, 1544, 44142, 531, 3345, 496, 1535, 3637, 236787},
      {2, 818, 1791, 1018, 236762, 236771, 3363, 657, 7226, 2033, 506, 15352},
      {2, 3689, 1891, 563, 3097, 2184, 9483, 1117, 236881},
      {2, 39311, 564, 53254, 496, 3505, 1003, 496, 9465, 3643},
      {2, 818, 1346, 35050, 3282, 576, 6290, 659, 236787, 236743},
      {2, 2094, 563, 506, 2435, 1277, 2961, 532, 1176, 5279, 1390, 1041, 2479, 236761},
  };
  return prompts;
}

std::string ModelPath() {
  const char* env = std::getenv("RADIXLM_DEFAULT_MODEL");
  if (env == nullptr || !std::filesystem::is_regular_file(env)) return "";
  return env;
}

int32_t Argmax(const float* logits, int64_t n) {
  return static_cast<int32_t>(std::max_element(logits, logits + n) - logits);
}

class RealModelTest : public ::testing::Test {
 protected:
  static constexpr int kNewTokens = 16;

  void SetUp() override {
    const std::string path = ModelPath();
    if (path.empty()) GTEST_SKIP() << "RADIXLM_DEFAULT_MODEL does not name a model file";
    auto model = Model::Load(path, {.n_threads = 2, .max_batch_tokens = 256, .max_context = 0});
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(model).value();
    // Let the pool's workers start before the first job (see model_forward_test.cc).
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto cache = model_->CreateKvCache({.n_slots = 1024});
    ASSERT_TRUE(cache.ok()) << cache.status().ToString();
    cache_ = std::move(cache).value();
  }

  std::vector<int32_t> TakeSlots(size_t n) {
    std::vector<int32_t> out(n);
    for (int32_t& s : out) s = next_slot_++;
    return out;
  }

  std::unique_ptr<Model> model_;
  std::unique_ptr<KvCache> cache_;
  int32_t next_slot_ = 1;
};

TEST_F(RealModelTest, BatchedGreedyEqualsOneAtATime) {
  const auto& prompts = Prompts();
  const int64_t vocab = model_->config().vocab_size;

  // One request at a time.
  std::vector<std::vector<int32_t>> alone(prompts.size());
  for (size_t p = 0; p < prompts.size(); ++p) {
    std::vector<int32_t> slots = TakeSlots(prompts[p].size());
    ForwardBatch batch;
    batch.sequences.push_back({prompts[p], slots, {}, LogitsMode::kLast});
    ForwardOutput out;
    ASSERT_TRUE(model_->Forward(batch, *cache_, &out).ok());
    for (int step = 0; step < kNewTokens; ++step) {
      const int32_t token = Argmax(out.LastRow(0), vocab);
      alone[p].push_back(token);
      if (step + 1 == kNewTokens) break;
      const std::vector<int32_t> new_slot = TakeSlots(1);
      const std::vector<int32_t> tokens = {token};
      ForwardBatch next;
      next.sequences.push_back({tokens, new_slot, slots, LogitsMode::kLast});
      ASSERT_TRUE(model_->Forward(next, *cache_, &out).ok());
      slots.push_back(new_slot[0]);
    }
  }

  // All together: one ragged prefill, then every decode step as one batch.
  std::vector<std::vector<int32_t>> batched(prompts.size());
  std::vector<std::vector<int32_t>> slots(prompts.size());
  std::vector<std::vector<int32_t>> new_slots(prompts.size());
  std::vector<std::vector<int32_t>> new_tokens(prompts.size());
  ForwardBatch batch;
  for (size_t p = 0; p < prompts.size(); ++p) {
    new_slots[p] = TakeSlots(prompts[p].size());
    batch.sequences.push_back({prompts[p], new_slots[p], {}, LogitsMode::kLast});
  }
  ForwardOutput out;
  ASSERT_TRUE(model_->Forward(batch, *cache_, &out).ok());
  for (int step = 0; step < kNewTokens; ++step) {
    ForwardBatch next;
    for (size_t p = 0; p < prompts.size(); ++p) {
      const int32_t token = Argmax(out.LastRow(p), vocab);
      batched[p].push_back(token);
      slots[p].insert(slots[p].end(), new_slots[p].begin(), new_slots[p].end());
      new_slots[p] = TakeSlots(1);
      new_tokens[p] = {token};
      next.sequences.push_back({new_tokens[p], new_slots[p], slots[p], LogitsMode::kLast});
    }
    if (step + 1 == kNewTokens) break;
    ASSERT_TRUE(model_->Forward(next, *cache_, &out).ok());
  }

  for (size_t p = 0; p < prompts.size(); ++p) {
    EXPECT_EQ(batched[p], alone[p]) << "prompt " << p;
  }
}

}  // namespace
}  // namespace radixlm::model
