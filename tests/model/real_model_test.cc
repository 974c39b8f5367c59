// On the real default model (gemma-3-270m Q4_K_M; runs only when RADIXLM_DEFAULT_MODEL names
// an existing file): greedy decoding of a ragged batch equals decoding each prompt alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/model.h"
#include "support/real_model.h"

namespace radixlm::model {
namespace {

// Gemma-3 token ids (BOS = 2 first) of eight English prompts of 6 to 21 tokens, so the batch
// is ragged. Tokenized with llama.cpp from the texts in the comments.
const std::vector<std::vector<int32_t>>& Prompts() {
  // clang-format off
  static const std::vector<std::vector<int32_t>> prompts = {
      // "The capital of France is Paris, and the capital of Germany is"
      {2, 818, 5279, 529, 7001, 563, 9079, 236764, 532, 506, 5279, 529, 9405, 563},
      // "Once upon a time, in a small village at the edge of a dark forest, there lived"
      {2, 14946, 3324, 496, 990, 236764, 528, 496, 1944, 9744, 657, 506, 7377, 529, 496, 4996,
       6426, 236764, 993, 11742},
      // "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n"
      {2, 2063, 10779, 78113, 236769, 236749, 1473, 107, 140, 12234, 13293, 506, 538, 236772, 594,
       123466, 1548, 29738, 107},
      // "The three primary colors are"
      {2, 818, 1806, 5905, 7913, 659},
      // "Water boils at 100 degrees Celsius at sea level, but on a high mountain it boils"
      {2, 17390, 104264, 657, 236743, 236770, 236771, 236771, 10674, 57356, 657, 5442, 1984,
       236764, 840, 580, 496, 1494, 10565, 625, 104264},
      // "Here is a list of the planets in our solar system, in order from the Sun:"
      {2, 8291, 563, 496, 1694, 529, 506, 46501, 528, 1023, 10321, 1458, 236764, 528, 1900, 699,
       506, 7718, 236787},
      // "To make a cup of tea, first"
      {2, 2021, 1386, 496, 8578, 529, 11115, 236764, 1171},
      // "In 1969, astronauts Neil Armstrong and Buzz Aldrin became the first people to"
      {2, 902, 236743, 236770, 236819, 236825, 236819, 236764, 101195, 39022, 47422, 532, 69652,
       26509, 14854, 5452, 506, 1171, 1331, 531},
  };
  // clang-format on
  return prompts;
}

int32_t Argmax(const float* logits, int64_t n) {
  return static_cast<int32_t>(std::max_element(logits, logits + n) - logits);
}

class RealModelTest : public ::testing::Test {
 protected:
  static constexpr int kNewTokens = 16;

  void SetUp() override {
    const std::string path = testing::RealModelPath();
    if (path.empty()) GTEST_SKIP() << "RADIXLM_DEFAULT_MODEL does not name a model file";
    auto model = Model::Load(path, {.n_threads = 2, .max_batch_tokens = 256, .max_context = 0});
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(model).value();
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
