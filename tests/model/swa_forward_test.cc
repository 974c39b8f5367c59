// Sliding-window layers in rows of their own (KvCache::n_swa_slots): the forward pass gives
// bit-identical logits to the one-pool layout while windowed rows of tokens no window can see
// are released and reused, and refuses a batch whose windows lost a key.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "model/model.h"
#include "tiny_model.h"

namespace radixlm::model {
namespace {

using testing::BuildTinyModel;
using testing::ParseTinyModel;
using testing::TinyGemma3Spec;
using testing::TinyModelSpec;

constexpr int64_t kWindow = 4;  // TinyGemma3Spec's sliding window
constexpr int64_t kSlots = 64;
constexpr int64_t kSwaRows = 10;  // row 0 is padding: 9 usable, far fewer than the tokens

class SwaForwardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(TinyGemma3Spec().sliding_window, kWindow);
    bytes_ = BuildTinyModel(TinyGemma3Spec());
    ModelOptions options;
    options.n_threads = 2;
    options.max_batch_tokens = 64;
    auto model = Model::FromGguf(ParseTinyModel(bytes_), options);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(model).value();
  }

  std::vector<uint8_t> bytes_;
  std::unique_ptr<Model> model_;
};

// One sequence: prefill chunks then decodes, run twice — every layer in full rows, and windowed
// layers in kSwaRows rows whose rows are released as positions fall out of the window.
TEST_F(SwaForwardTest, LogitsEqualTheOnePoolLayoutWhileWindowRowsAreReused) {
  auto full = model_->CreateKvCache({.n_slots = kSlots});
  auto hybrid = model_->CreateKvCache({.n_slots = kSlots, .n_swa_slots = kSwaRows});
  ASSERT_TRUE(full.ok() && hybrid.ok());
  EXPECT_LT((*hybrid)->bytes(), (*full)->bytes());
  EXPECT_TRUE((*hybrid)->IsSwaLayer(0));
  EXPECT_FALSE((*hybrid)->IsSwaLayer(5));

  std::mt19937 rng(3);
  const int64_t vocab = model_->config().vocab_size;
  const std::vector<int64_t> steps = {5, 3, 1, 1, 4, 1, 1, 1, 2, 1, 1,
                                      1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  std::vector<int32_t> tokens(std::accumulate(steps.begin(), steps.end(), int64_t{0}));
  for (int32_t& t : tokens) t = static_cast<int32_t>(rng() % vocab);
  // Full slots in a scrambled order; windowed rows from a free list.
  std::vector<int32_t> slots(tokens.size());
  std::iota(slots.begin(), slots.end(), 1);
  std::shuffle(slots.begin(), slots.end(), rng);
  std::vector<int32_t> swa_map(kSlots, 0);
  std::vector<int32_t> free_rows(kSwaRows - 1);
  std::iota(free_rows.begin(), free_rows.end(), 1);
  std::shuffle(free_rows.begin(), free_rows.end(), rng);

  int64_t pos = 0;
  int64_t released = 0;
  ForwardOutput out_full, out_hybrid;
  for (int64_t n : steps) {
    // Release windowed rows no query from `pos` on can see (positions < pos - window + 1).
    for (; released < pos - kWindow + 1; ++released) {
      int32_t& row = swa_map[slots[released]];
      free_rows.push_back(row);
      row = 0;
    }
    ASSERT_LE(n, static_cast<int64_t>(free_rows.size())) << "more rows than the window needs";
    for (int64_t i = pos; i < pos + n; ++i) {
      swa_map[slots[i]] = free_rows.back();
      free_rows.pop_back();
    }
    ForwardBatch batch;
    SequenceInput in;
    in.tokens = std::span<const int32_t>(tokens).subspan(pos, n);
    in.new_slots = std::span<const int32_t>(slots).subspan(pos, n);
    in.prefix_slots = std::span<const int32_t>(slots).first(pos);
    in.logits = LogitsMode::kAll;
    batch.sequences.push_back(in);
    const Status full_status = model_->Forward(batch, **full, &out_full);
    ASSERT_TRUE(full_status.ok()) << full_status.ToString();
    batch.swa_slot_map = swa_map;
    const Status st = model_->Forward(batch, **hybrid, &out_hybrid);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(out_full.n_rows, out_hybrid.n_rows);
    for (int64_t r = 0; r < out_full.n_rows * vocab; ++r) {
      ASSERT_EQ(out_full.logits[r], out_hybrid.logits[r]) << "position " << pos << " value " << r;
    }
    pos += n;
  }
  EXPECT_EQ(pos, static_cast<int64_t>(tokens.size()));
  EXPECT_GT(released, kSwaRows);  // rows were reused
}

TEST_F(SwaForwardTest, RefusesABatchWhoseWindowLostAKey) {
  auto hybrid = model_->CreateKvCache({.n_slots = kSlots, .n_swa_slots = kSwaRows});
  ASSERT_TRUE(hybrid.ok());
  std::vector<int32_t> tokens = {1, 2, 3, 4, 5, 6};
  std::vector<int32_t> slots = {11, 12, 13, 14, 15, 16};
  std::vector<int32_t> swa_map(kSlots, 0);
  for (int i = 0; i < 6; ++i) swa_map[slots[i]] = i + 1;
  ForwardOutput out;
  ForwardBatch batch;
  SequenceInput in;
  in.tokens = std::span<const int32_t>(tokens).subspan(5, 1);
  in.new_slots = std::span<const int32_t>(slots).subspan(5, 1);
  in.prefix_slots = std::span<const int32_t>(slots).first(5);
  batch.sequences.push_back(in);
  // Position 5 sees positions 2..5: releasing position 1 is fine, position 2 is not.
  swa_map[slots[1]] = 0;
  batch.swa_slot_map = swa_map;
  EXPECT_TRUE(model_->Forward(batch, **hybrid, &out).ok());
  swa_map[slots[2]] = 0;
  Status st = model_->Forward(batch, **hybrid, &out);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("position 2"), std::string::npos) << st.ToString();
  // No map at all, and a new token without a row.
  batch.swa_slot_map = {};
  EXPECT_FALSE(model_->Forward(batch, **hybrid, &out).ok());
  swa_map[slots[2]] = 3;
  swa_map[slots[5]] = 0;
  batch.swa_slot_map = swa_map;
  EXPECT_FALSE(model_->Forward(batch, **hybrid, &out).ok());
}

TEST_F(SwaForwardTest, ModelsWithoutBothKindsOfLayersGetNoSwaRows) {
  TinyModelSpec spec;
  spec.arch = "llama";
  std::vector<uint8_t> bytes = BuildTinyModel(spec);
  auto llama = Model::FromGguf(ParseTinyModel(bytes), {.n_threads = 1, .max_batch_tokens = 16});
  ASSERT_TRUE(llama.ok());
  EXPECT_FALSE((*llama)->CreateKvCache({.n_slots = kSlots, .n_swa_slots = 8}).ok());
}

}  // namespace
}  // namespace radixlm::model
