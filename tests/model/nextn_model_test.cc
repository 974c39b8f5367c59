// The NextN (multi-token-prediction) layer of the Qwen hybrids (model/nextn_model.h) against
// the plain float reference (nextn_reference.cc), the target's hidden-state output that feeds
// it, and the state checkpoints a hybrid model's verification of draft chains rolls back to.
#include "model/nextn_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>

#include "hybrid_reference.h"
#include "model/model.h"
#include "tiny_model.h"

namespace radixlm::model {
namespace {

using testing::BuildTinyModel;
using testing::ParseTinyModel;

testing::TinyModelSpec NextnSpec(const std::string& arch) {
  testing::TinyModelSpec s = arch == "qwen35moe"   ? testing::TinyQwen35MoeSpec()
                             : arch == "qwen3next" ? testing::TinyQwen3NextSpec()
                                                   : testing::TinyQwen35Spec();
  s.nextn_layers = 1;
  s.nextn_own_head = arch == "qwen3next";  // the optional shared_head_head, in one of them
  return s;
}

double WorstDifference(const std::vector<std::vector<float>>& got,
                       const std::vector<std::vector<float>>& want, double* scale) {
  double worst = 0.0;
  *scale = 0.0;
  for (size_t t = 0; t < want.size(); ++t) {
    for (size_t v = 0; v < want[t].size(); ++v) {
      worst = std::max(worst, std::abs(static_cast<double>(got[t][v]) - want[t][v]));
      *scale = std::max(*scale, std::abs(static_cast<double>(want[t][v])));
    }
  }
  return worst;
}

class NextnModelTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    bytes_ = BuildTinyModel(NextnSpec(GetParam()));
    auto model = Model::FromGguf(ParseTinyModel(bytes_), {.n_threads = 2, .max_batch_tokens = 64});
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(model).value();
    auto nextn = NextnModel::Create(*model_);
    ASSERT_TRUE(nextn.ok()) << nextn.status().ToString();
    nextn_ = std::move(nextn).value();
  }

  std::vector<int32_t> RandomTokens(size_t n) {
    std::uniform_int_distribution<int32_t> dist(0, 99);
    std::vector<int32_t> t(n);
    for (int32_t& x : t) x = dist(rng_);
    return t;
  }

  // The NextN layer over tokens [begin, end) of a sequence in slots 0.. (K/V of the earlier
  // ones in `cache`), beside rows [begin, end) of hidden_in; every row's logits and hidden.
  void RunNextn(KvCache& cache, const std::vector<int32_t>& tokens,
                const std::vector<std::vector<float>>& hidden_in, size_t begin, size_t end,
                std::vector<std::vector<float>>* logits, std::vector<std::vector<float>>* hidden) {
    const int64_t h = model_->config().hidden_size;
    std::vector<int32_t> slots(tokens.size());
    std::iota(slots.begin(), slots.end(), 0);
    std::vector<float> in;
    for (size_t t = begin; t < end; ++t)
      in.insert(in.end(), hidden_in[t].begin(), hidden_in[t].end());
    ForwardBatch batch;
    SequenceInput seq;
    seq.tokens = std::span<const int32_t>(tokens).subspan(begin, end - begin);
    seq.new_slots = std::span<const int32_t>(slots).subspan(begin, end - begin);
    seq.prefix_slots = std::span<const int32_t>(slots).first(begin);
    seq.logits = LogitsMode::kAll;
    seq.nextn_hidden = in;
    batch.sequences.push_back(seq);
    ForwardOutput out;
    const Status st = nextn_->Forward(batch, cache, &out);
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (int64_t r = 0; r < out.row_count[0]; ++r) {
      logits->emplace_back(out.Row(0, r), out.Row(0, r) + out.vocab_size);
      hidden->emplace_back(out.hidden.begin() + r * h, out.hidden.begin() + (r + 1) * h);
    }
  }

  std::vector<uint8_t> bytes_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<NextnModel> nextn_;
  std::mt19937 rng_{11};
};

TEST_P(NextnModelTest, TheTargetsHiddenStatesAreItsLmHeadInputs) {
  const testing::HybridReference reference(*ParseTinyModel(bytes_));
  const std::vector<int32_t> tokens = RandomTokens(24);
  std::vector<std::vector<float>> want_hidden;
  reference.Forward(tokens, &want_hidden);
  auto cache = model_->CreateKvCache({.n_slots = 64, .n_state_slots = 2});
  ASSERT_TRUE(cache.ok());
  std::vector<int32_t> slots(tokens.size());
  std::iota(slots.begin(), slots.end(), 0);
  ForwardBatch batch;
  SequenceInput seq;
  seq.tokens = tokens;
  seq.new_slots = slots;
  seq.logits = LogitsMode::kLast;
  batch.sequences.push_back(seq);
  batch.output_hidden = true;
  ForwardOutput with;
  ASSERT_TRUE(model_->Forward(batch, **cache, &with).ok());
  const int64_t h = model_->config().hidden_size;
  ASSERT_EQ(std::ssize(with.hidden), std::ssize(tokens) * h);
  std::vector<std::vector<float>> got;
  for (size_t t = 0; t < tokens.size(); ++t) {
    got.emplace_back(with.hidden.begin() + t * h, with.hidden.begin() + (t + 1) * h);
  }
  double scale = 0.0;
  const double worst = WorstDifference(got, want_hidden, &scale);
  EXPECT_GT(scale, 0.5);
  EXPECT_LT(worst, 2e-4 * scale) << worst << " of " << scale;
  // The logits do not change with the hidden states returned (bit for bit).
  batch.output_hidden = false;
  ForwardOutput without;
  ASSERT_TRUE(model_->Forward(batch, **cache, &without).ok());
  ASSERT_EQ(without.n_rows, 1);
  EXPECT_EQ(0, std::memcmp(with.Row(0), without.Row(0), sizeof(float) * without.vocab_size));
}

TEST_P(NextnModelTest, TheNextnLayerMatchesTheFloatReferenceAtOnceAndInSteps) {
  const testing::HybridReference reference(*ParseTinyModel(bytes_));
  const std::vector<int32_t> tokens = RandomTokens(20);
  // Its input states: the target's, shifted by one position (zeros before the first).
  std::vector<std::vector<float>> target_hidden;
  reference.Forward(tokens, &target_hidden);
  const int64_t h = model_->config().hidden_size;
  std::vector<std::vector<float>> hidden_in = {std::vector<float>(h, 0.0f)};
  hidden_in.insert(hidden_in.end(), target_hidden.begin(), target_hidden.end() - 1);
  const auto want = reference.NextnForward(tokens, hidden_in);
  for (size_t split : {tokens.size(), size_t{7}}) {
    SCOPED_TRACE("first forward: " + std::to_string(split) + " tokens");
    auto cache = KvCache::Create(nextn_->config(), {.n_slots = 64});
    ASSERT_TRUE(cache.ok()) << cache.status().ToString();
    std::vector<std::vector<float>> logits, hidden;
    RunNextn(**cache, tokens, hidden_in, 0, split, &logits, &hidden);
    for (size_t t = split; t < tokens.size(); ++t) {  // then one token at a time
      RunNextn(**cache, tokens, hidden_in, t, t + 1, &logits, &hidden);
    }
    ASSERT_EQ(logits.size(), tokens.size());
    double scale = 0.0;
    const double worst = WorstDifference(logits, want.logits, &scale);
    EXPECT_GT(scale, 0.5);
    EXPECT_LT(worst, 2e-4 * scale) << "logits: " << worst << " of " << scale;
    const double worst_hidden = WorstDifference(hidden, want.hidden, &scale);
    EXPECT_LT(worst_hidden, 2e-4 * scale) << "hidden: " << worst_hidden << " of " << scale;
  }
}

TEST_P(NextnModelTest, StateCheckpointsHoldTheStateAfterEachToken) {
  // A chain of 4 tokens after a prefix, checkpointed after its first three: each checkpoint
  // equals, byte for byte, the state a sequence run up to that token alone holds.
  const std::vector<int32_t> tokens = RandomTokens(14);
  std::vector<int32_t> slots(tokens.size());
  std::iota(slots.begin(), slots.end(), 0);
  auto cache = model_->CreateKvCache({.n_slots = 64, .n_state_slots = 8});
  ASSERT_TRUE(cache.ok());
  RecurrentState& state = *(*cache)->recurrent();
  auto run = [&](size_t begin, size_t end, int32_t slot, std::span<const int32_t> checkpoints) {
    ForwardBatch batch;
    SequenceInput seq;
    seq.tokens = std::span<const int32_t>(tokens).subspan(begin, end - begin);
    seq.new_slots = std::span<const int32_t>(slots).subspan(begin, end - begin);
    seq.prefix_slots = std::span<const int32_t>(slots).first(begin);
    seq.state_slot = slot;
    seq.state_checkpoints = checkpoints;
    batch.sequences.push_back(seq);
    ForwardOutput out;
    const Status st = model_->Forward(batch, **cache, &out);
    EXPECT_TRUE(st.ok()) << st.ToString();
  };
  run(0, 10, 0, {});
  state.Copy(0, 1);  // the prefix's state, for the runs one token further each
  const std::vector<int32_t> checkpoints = {4, 5, 6, -1};
  run(10, 14, 0, checkpoints);
  for (int32_t t = 0; t < 3; ++t) {
    run(10 + t, 11 + t, 1, {});  // slot 1: the prefix and tokens 10 .. 10 + t
    EXPECT_EQ(0, std::memcmp(state.Conv(0, 1), state.Conv(0, checkpoints[t]), state.slot_bytes()))
        << "after chain token " << t;
  }
  // The chain's last state is the sequence's own (slot 0): one more token to slot 1 gives it.
  run(13, 14, 1, {});
  EXPECT_EQ(0, std::memcmp(state.Conv(0, 1), state.Conv(0, 0), state.slot_bytes()));
  // A checkpoint that is a sequence's own state slot is refused.
  ForwardBatch bad;
  SequenceInput seq;
  seq.tokens = std::span<const int32_t>(tokens).first(2);
  seq.new_slots = std::span<const int32_t>(slots).first(2);
  seq.state_slot = 3;
  const std::vector<int32_t> own = {3, -1};
  seq.state_checkpoints = own;
  bad.sequences.push_back(seq);
  ForwardOutput out;
  EXPECT_EQ(model_->Forward(bad, **cache, &out).code(), StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Archs, NextnModelTest,
                         ::testing::Values("qwen35", "qwen35moe", "qwen3next"));

TEST(NextnModelCreateTest, AModelWithoutNextnLayersIsRefused) {
  const std::vector<uint8_t> bytes = BuildTinyModel(testing::TinyQwen35Spec());
  auto model = Model::FromGguf(ParseTinyModel(bytes), {.n_threads = 1});
  ASSERT_TRUE(model.ok());
  auto nextn = NextnModel::Create(**model);
  ASSERT_FALSE(nextn.ok());
  EXPECT_EQ(nextn.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(nextn.status().message().find("nextn_predict_layers"), std::string::npos)
      << nextn.status().message();
}

TEST(NextnModelCreateTest, AMissingNextnTensorIsNamed) {
  testing::TinyModelSpec spec = NextnSpec("qwen35");
  spec.omit_tensors = {"blk.5.nextn.eh_proj.weight"};
  const std::vector<uint8_t> bytes = BuildTinyModel(spec);
  auto model = Model::FromGguf(ParseTinyModel(bytes), {.n_threads = 1});
  ASSERT_TRUE(model.ok()) << model.status().ToString();  // the decoder does not read it
  auto nextn = NextnModel::Create(**model);
  ASSERT_FALSE(nextn.ok());
  EXPECT_NE(nextn.status().message().find("blk.5.nextn.eh_proj.weight"), std::string::npos)
      << nextn.status().message();
}

}  // namespace
}  // namespace radixlm::model
