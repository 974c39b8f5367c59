// eval::MeasureSpeed (`radixlm speed`) on a tiny model: the prefill rate is the mean of the timed
// calls it reports, one decode entry per batch size, and bad counts are refused.
#include "eval/speed.h"

#include <gtest/gtest.h>

#include <numeric>

#include "tiny_model.h"

namespace radixlm::eval {
namespace {

using model::testing::BuildTinyModel;
using model::testing::ParseTinyModel;
using model::testing::TinyModelSpec;

class SpeedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bytes_ = BuildTinyModel(TinyModelSpec{});
    auto loaded = model::Model::FromGguf(
        ParseTinyModel(bytes_), {.n_threads = 2, .max_batch_tokens = 64, .max_context = 64});
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    model_ = std::move(loaded).value();
  }
  std::vector<uint8_t> bytes_;
  std::unique_ptr<model::Model> model_;
};

TEST_F(SpeedTest, PrefillIsTheMeanOfItsTimedCallsAndEveryBatchIsMeasured) {
  SpeedOptions options;
  options.prompt_tokens = 24;
  options.prefill_reps = 4;
  options.decode_tokens = 3;
  options.decode_prefix = 4;
  options.batch_sizes = {1, 3};
  options.bandwidth_bytes = size_t{1} << 20;
  auto r = MeasureSpeed(*model_, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->prefill_samples.size(), 4u);
  for (double s : r->prefill_samples) EXPECT_GT(s, 0.0);
  const double mean =
      std::accumulate(r->prefill_samples.begin(), r->prefill_samples.end(), 0.0) / 4.0;
  EXPECT_DOUBLE_EQ(r->prefill_tokens_per_second, mean);
  // Regions per timed call, not summed over the four: one call alone counts the same.
  EXPECT_GT(r->prefill_threading.regions_per_step, 0.0);
  options.prefill_reps = 1;
  auto once = MeasureSpeed(*model_, options);
  ASSERT_TRUE(once.ok()) << once.status().ToString();
  EXPECT_EQ(once->prefill_samples.size(), 1u);
  EXPECT_DOUBLE_EQ(r->prefill_threading.regions_per_step, once->prefill_threading.regions_per_step);
  ASSERT_EQ(r->decode.size(), 2u);
  EXPECT_EQ(r->decode[0].batch, 1);
  EXPECT_EQ(r->decode[1].batch, 3);
  for (const auto& d : r->decode) EXPECT_GT(d.tokens_per_second, 0.0);
}

TEST_F(SpeedTest, RefusesCountsBelowOne) {
  SpeedOptions options;
  options.prompt_tokens = 8;
  options.decode_tokens = 1;
  options.decode_prefix = 1;
  options.prefill_reps = 0;
  options.bandwidth_bytes = size_t{1} << 20;
  auto r = MeasureSpeed(*model_, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("prefill reps"), std::string::npos);
  options.prefill_reps = 1;
  options.prompt_tokens = 0;
  EXPECT_EQ(MeasureSpeed(*model_, options).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace radixlm::eval
