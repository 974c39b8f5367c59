// Hybrid models with the gated DeltaNet's chunked prefill (ModelOptions::linear_attn_prefill
// = kChunked) on the tiny qwen35 / qwen35moe / qwen3next files: prefill logits within the
// float reference's tolerance and close to the recurrent form's, the same greedy tokens where
// the recurrent form's top two are apart; bit-identical whatever the threads and wherever the
// prompt is split at a multiple of the chunk size, and batched with another; decode steps as
// the recurrent form's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "hybrid_reference.h"
#include "kernels/gated_delta.h"
#include "model/model.h"
#include "tiny_model.h"

namespace radixlm::model {
namespace {

constexpr int64_t kChunkPositions = kernels::kGatedDeltaChunk;
constexpr size_t kPromptLength = 3 * kChunkPositions + 5;  // three whole chunks and a partial one

testing::TinyModelSpec ChunkedTestSpec(const std::string& arch) {
  if (arch == "qwen35moe") return testing::TinyQwen35MoeSpec();
  if (arch == "qwen3next") return testing::TinyQwen3NextSpec();
  return testing::TinyQwen35Spec();
}

class HybridChunkedTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    bytes_ = testing::BuildTinyModel(ChunkedTestSpec(GetParam()));
    std::mt19937 rng(11);
    std::uniform_int_distribution<int32_t> dist(
        0, static_cast<int32_t>(ChunkedTestSpec(GetParam()).vocab - 1));
    tokens_.resize(kPromptLength);
    for (int32_t& t : tokens_) t = dist(rng);
    for (size_t i = 0; i < kPromptLength; ++i) slots_.push_back(static_cast<int32_t>(i));
  }

  std::unique_ptr<Model> Load(LinearAttnPrefill mode, int threads) {
    auto model = Model::FromGguf(testing::ParseTinyModel(bytes_),
                                 {.n_threads = threads,
                                  .max_batch_tokens = static_cast<int64_t>(2 * kPromptLength),
                                  .linear_attn_prefill = mode});
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    return model.ok() ? std::move(model).value() : nullptr;
  }

  // Every row's logits of tokens_ run in steps that end at each of `ends` (ascending, the
  // last kPromptLength), on a fresh cache.
  std::vector<std::vector<float>> Run(Model& model, const std::vector<size_t>& ends) {
    auto cache = model.CreateKvCache({.n_slots = 512, .n_state_slots = 2});
    EXPECT_TRUE(cache.ok()) << cache.status().ToString();
    std::vector<std::vector<float>> rows;
    if (!cache.ok()) return rows;
    size_t begin = 0;
    for (size_t end : ends) {
      ForwardBatch batch;
      SequenceInput seq;
      seq.tokens = std::span<const int32_t>(tokens_).subspan(begin, end - begin);
      seq.new_slots = std::span<const int32_t>(slots_).subspan(begin, end - begin);
      seq.prefix_slots = std::span<const int32_t>(slots_).first(begin);
      seq.logits = LogitsMode::kAll;
      seq.state_slot = 1;
      batch.sequences.push_back(seq);
      ForwardOutput out;
      const Status st = model.Forward(batch, **cache, &out);
      EXPECT_TRUE(st.ok()) << st.ToString();
      if (!st.ok()) return rows;
      for (int64_t r = 0; r < out.row_count[0]; ++r) {
        rows.emplace_back(out.Row(0, r), out.Row(0, r) + out.vocab_size);
      }
      begin = end;
    }
    return rows;
  }

  std::vector<uint8_t> bytes_;
  std::vector<int32_t> tokens_;
  std::vector<int32_t> slots_;
};

TEST_P(HybridChunkedTest, PrefillIsCloseToTheRecurrentFormAndTheFloatReference) {
  const testing::HybridReference reference(*testing::ParseTinyModel(bytes_));
  const auto expected = reference.Forward(tokens_);
  const auto recurrent = Run(*Load(LinearAttnPrefill::kRecurrent, 2), {kPromptLength});
  const auto chunked = Run(*Load(LinearAttnPrefill::kChunked, 2), {kPromptLength});
  ASSERT_EQ(recurrent.size(), kPromptLength);
  ASSERT_EQ(chunked.size(), kPromptLength);
  double worst_ref = 0.0, worst_rec = 0.0, scale = 0.0;
  int64_t apart = 0, differ = 0;
  for (size_t t = 0; t < kPromptLength; ++t) {
    for (size_t v = 0; v < chunked[t].size(); ++v) {
      worst_ref =
          std::max(worst_ref, std::abs(static_cast<double>(chunked[t][v]) - expected[t][v]));
      worst_rec =
          std::max(worst_rec, std::abs(static_cast<double>(chunked[t][v]) - recurrent[t][v]));
      scale = std::max(scale, std::abs(static_cast<double>(expected[t][v])));
    }
    // Greedy tokens where the recurrent form's top two are apart by far more than the forms
    // differ.
    std::vector<float> sorted = recurrent[t];
    std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<float>());
    if (sorted[0] - sorted[1] > 1e-3 * scale) {
      ++apart;
      const auto top = [](const std::vector<float>& r) {
        return std::max_element(r.begin(), r.end()) - r.begin();
      };
      differ += top(chunked[t]) != top(recurrent[t]);
    }
  }
  EXPECT_NE(chunked, recurrent);  // the chunked form ran
  EXPECT_GT(scale, 0.5);          // logits of a useful spread
  EXPECT_LT(worst_ref, 2e-4 * scale)
      << "worst |chunked - reference| " << worst_ref << " of " << scale;
  EXPECT_LT(worst_rec, 2e-4 * scale)
      << "worst |chunked - recurrent| " << worst_rec << " of " << scale;
  EXPECT_GT(apart, static_cast<int64_t>(kPromptLength) / 2);
  EXPECT_EQ(differ, 0) << "of " << apart << " positions";
}

TEST_P(HybridChunkedTest, ChunkedPrefillIsTheSameWhateverTheThreads) {
  const auto one = Run(*Load(LinearAttnPrefill::kChunked, 1), {kPromptLength});
  const auto three = Run(*Load(LinearAttnPrefill::kChunked, 3), {kPromptLength});
  ASSERT_EQ(one.size(), kPromptLength);
  EXPECT_EQ(one, three);
}

TEST_P(HybridChunkedTest, APromptSplitAtChunkBoundariesGivesTheSameLogits) {
  auto model = Load(LinearAttnPrefill::kChunked, 2);
  const auto whole = Run(*model, {kPromptLength});
  const auto split = Run(*model, {kChunkPositions, 3 * kChunkPositions, kPromptLength});
  ASSERT_EQ(split.size(), kPromptLength);
  EXPECT_EQ(whole, split);
  // Split elsewhere, the chunks start at other positions: close, not the same floats.
  const auto elsewhere = Run(*model, {kChunkPositions + 10, kPromptLength});
  ASSERT_EQ(elsewhere.size(), kPromptLength);
  EXPECT_EQ(std::vector(elsewhere.begin(), elsewhere.begin() + kChunkPositions),
            std::vector(whole.begin(), whole.begin() + kChunkPositions));
  EXPECT_NE(elsewhere, whole);
}

TEST_P(HybridChunkedTest, SingleTokenStepsRunTheRecurrentForm) {
  // One token per step (decode) never takes the chunked path: token by token, both modes give
  // the same floats.
  std::vector<size_t> each;
  for (size_t t = 1; t <= 24; ++t) each.push_back(t);
  const auto recurrent = Run(*Load(LinearAttnPrefill::kRecurrent, 2), each);
  const auto chunked = Run(*Load(LinearAttnPrefill::kChunked, 2), each);
  ASSERT_EQ(chunked.size(), 24u);
  EXPECT_EQ(chunked, recurrent);
}

TEST_P(HybridChunkedTest, SequencesBatchedGetWhatTheyGetAlone) {
  // Two prompts prefilled in one batch (the second from position 0 of its own), each as alone.
  auto model = Load(LinearAttnPrefill::kChunked, 2);
  const auto alone = Run(*model, {kPromptLength});
  auto cache = model->CreateKvCache({.n_slots = 1024, .n_state_slots = 4});
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  const size_t n2 = kChunkPositions + 9;
  std::vector<int32_t> slots2(n2);
  for (size_t i = 0; i < n2; ++i) slots2[i] = static_cast<int32_t>(600 + i);
  ForwardBatch batch;
  SequenceInput a;
  a.tokens = tokens_;
  a.new_slots = slots_;
  a.logits = LogitsMode::kAll;
  a.state_slot = 3;
  SequenceInput b = a;
  b.tokens = std::span<const int32_t>(tokens_).first(n2);
  b.new_slots = slots2;
  b.state_slot = 0;
  batch.sequences = {a, b};
  ForwardOutput out;
  const Status st = model->Forward(batch, **cache, &out);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(out.row_count[0], static_cast<int64_t>(kPromptLength));
  ASSERT_EQ(out.row_count[1], static_cast<int64_t>(n2));
  for (size_t r = 0; r < kPromptLength; ++r) {
    const std::vector<float> got(out.Row(0, r), out.Row(0, r) + out.vocab_size);
    EXPECT_EQ(got, alone[r]) << "sequence 0 position " << r;
  }
  const auto alone2 = Run(*model, {n2});
  for (size_t r = 0; r < n2; ++r) {
    const std::vector<float> got(out.Row(1, r), out.Row(1, r) + out.vocab_size);
    EXPECT_EQ(got, alone2[r]) << "sequence 1 position " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, HybridChunkedTest,
                         ::testing::Values("qwen35", "qwen35moe", "qwen3next"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

TEST(LinearAttnPrefillTest, NamesAreParsedAndOthersRefused) {
  EXPECT_EQ(*ParseLinearAttnPrefill("recurrent"), LinearAttnPrefill::kRecurrent);
  EXPECT_EQ(*ParseLinearAttnPrefill("chunked"), LinearAttnPrefill::kChunked);
  const auto bad = ParseLinearAttnPrefill("chunk");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--linear-attn-prefill"), std::string::npos);
}

}  // namespace
}  // namespace radixlm::model
