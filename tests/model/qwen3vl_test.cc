// qwen3vl (model/families/qwen3vl.cc): qwen3 with interleaved M-RoPE and deepstack. An image's
// rows with their deepstack slices and its (t, h, w) positions match the float reference
// (tests/model/reference_model.cc: the pairs' sections interleaved, the fourth at position 0,
// slice k + 1 added after layer k); the slices and the fourth section change the logits (a
// model ignoring them would fail); a prefill split inside the image equals one pass; the
// deepstack count is read and bounded.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "model/model.h"
#include "reference_model.h"
#include "tiny_model.h"

namespace radixlm::model {
namespace qwen3vl_test {  // (the model tests share unity-build translation units)
namespace {

using gguf::Value;
using kernels::KvDtype;
using testing::BuildTinyModel;
using testing::ParseTinyModel;
using testing::ReferenceModel;
using testing::TinyModelSpec;

constexpr int32_t kImageId = 1 << 30;  // the radix tree's image ids: never read by the model
constexpr int64_t kImageBegin = 3, kImageRows = 2, kImageCols = 3;
constexpr int64_t kImageTokens = kImageRows * kImageCols, kTokens = 13;

// A tiny qwen3vl: 3 layers, 8 pairs per head in sections 2/2/2/`fourth` (with fourth 1, pair 6
// of each 7 takes the fourth section's position 0), `deepstack` deepstack layers, RoPE base 100.
TinyModelSpec Qwen3VlSpec(int64_t deepstack, int64_t fourth = 1, std::string arch = "qwen3vl") {
  TinyModelSpec spec;
  spec.arch = arch;
  spec.seed = 11;
  spec.n_layers = 3;
  spec.rope_base = 100.0f;  // (the last pairs turn visibly within 13 positions)
  if (arch == "qwen3vl") {
    spec.extra_metadata.push_back(
        {arch + ".rope.dimension_sections",
         Value::Arr(gguf::ValueType::kInt32, {Value::I32(2), Value::I32(2), Value::I32(2),
                                              Value::I32(static_cast<int32_t>(fourth))})});
    spec.extra_metadata.push_back(
        {arch + ".n_deepstack_layers", Value::U32(static_cast<uint32_t>(deepstack))});
  }
  return spec;
}

std::unique_ptr<Model> Load(const std::vector<uint8_t>& bytes) {
  ModelOptions options;
  options.n_threads = 2;
  options.max_batch_tokens = 64;
  auto model = Model::FromGguf(ParseTinyModel(bytes), options);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? std::move(model).value() : nullptr;
}

float MaxDiff(const std::vector<float>& a, const std::vector<float>& b) {
  float d = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

float Scale(const std::vector<float>& v) {
  float s = 1.0f;
  for (float x : v) s = std::max(s, std::fabs(x));
  return s;
}

TEST(Qwen3VlFamilyTest, ReadsTheSectionsAndDeepstack) {
  const std::vector<uint8_t> bytes = BuildTinyModel(Qwen3VlSpec(2));
  auto config = ModelConfig::FromGguf(*ParseTinyModel(bytes));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->arch, "qwen3vl");
  EXPECT_TRUE(config->mrope());
  EXPECT_TRUE(config->mrope_interleaved);
  EXPECT_EQ(config->mrope_sections, (std::array<int64_t, 3>{2, 2, 2}));
  EXPECT_EQ(config->mrope_section_e, 1);
  EXPECT_EQ(config->n_deepstack_layers, 2);
  EXPECT_EQ(config->EmbeddingRowSize(), 3 * 64);
  EXPECT_TRUE(config->qk_norm);
  EXPECT_EQ(config->rope_layout, RopeLayout::kNeox);
}

TEST(Qwen3VlFamilyTest, RefusesDeepstackInTheLastLayerAndMissingSections) {
  const std::vector<uint8_t> bytes = BuildTinyModel(Qwen3VlSpec(3));
  auto config = ModelConfig::FromGguf(*ParseTinyModel(bytes));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(config.status().message().find("'qwen3vl.n_deepstack_layers' is 3; at most 2"),
            std::string::npos)
      << config.status().ToString();
  TinyModelSpec spec = Qwen3VlSpec(2);
  spec.extra_metadata.erase(spec.extra_metadata.begin());
  const std::vector<uint8_t> none = BuildTinyModel(spec);
  config = ModelConfig::FromGguf(*ParseTinyModel(none));
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("qwen3vl.rope.dimension_sections"), std::string::npos)
      << config.status().ToString();
}

class Qwen3VlForwardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bytes_ = BuildTinyModel(Qwen3VlSpec(2));
    model_ = Load(bytes_);
    ASSERT_NE(model_, nullptr);
    auto cache = model_->CreateKvCache({.n_slots = 64, .dtype = KvDtype::kF16});
    ASSERT_TRUE(cache.ok());
    cache_ = std::move(cache).value();
    std::mt19937 rng(53);
    tokens_.resize(kTokens);
    for (int32_t& t : tokens_) t = static_cast<int32_t>(rng() % model_->config().vocab_size);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    image_.resize(kImageTokens * model_->config().EmbeddingRowSize());
    for (float& x : image_) x = dist(rng);
    std::fill_n(tokens_.begin() + kImageBegin, kImageTokens, kImageId);
    // text(3), an image of 2 rows x 3 columns at p0 = 3, text(4) from 3 + max(2, 3) = 6 on.
    for (int64_t i = 0; i < kImageBegin; ++i) positions_.push_back({i, i, i});
    for (int64_t row = 0; row < kImageRows; ++row) {
      for (int64_t col = 0; col < kImageCols; ++col) {
        positions_.push_back({kImageBegin, kImageBegin + row, kImageBegin + col});
      }
    }
    for (int64_t i = 6; i < 10; ++i) positions_.push_back({i, i, i});
  }

  // The prompt's tokens [begin, end) after a prefix of `begin`, every row's logits.
  std::vector<std::vector<float>> Run(int64_t begin, int64_t end, int32_t first_slot = 0) {
    std::vector<int32_t> slots(tokens_.size());
    std::iota(slots.begin(), slots.end(), first_slot);
    const auto n = static_cast<size_t>(end - begin);
    SequenceInput in{std::span<const int32_t>(tokens_).subspan(begin, n),
                     std::span<const int32_t>(slots).subspan(begin, n),
                     std::span<const int32_t>(slots).first(begin), LogitsMode::kAll};
    std::vector<EmbeddingSpan> spans;
    const int64_t b = std::max(kImageBegin, begin);
    const int64_t e = std::min(kImageBegin + kImageTokens, end);
    if (b < e) {
      spans.push_back(
          {.begin = b - begin,
           .n = e - b,
           .rows = image_.data() + (b - kImageBegin) * model_->config().EmbeddingRowSize()});
    }
    in.embedding_spans = spans;
    std::vector<int64_t> flat;
    for (int64_t i = begin; i < end; ++i) {
      flat.insert(flat.end(), positions_[i].begin(), positions_[i].end());
    }
    in.rope_positions = flat;
    ForwardBatch batch;
    batch.sequences.push_back(in);
    ForwardOutput out;
    const Status st = model_->Forward(batch, *cache_, &out);
    EXPECT_TRUE(st.ok()) << st.ToString();
    std::vector<std::vector<float>> rows;
    for (int64_t r = 0; st.ok() && r < out.row_count[0]; ++r) {
      rows.emplace_back(out.Row(0, r), out.Row(0, r) + out.vocab_size);
    }
    return rows;
  }

  // The float reference's logits of the same prompt; `slices` of each image row given (1: the
  // first only, as if the model had no deepstack).
  std::vector<std::vector<float>> Reference(const std::vector<uint8_t>& bytes, int64_t slices = 3) {
    ReferenceModel reference(*ParseTinyModel(bytes), KvDtype::kF16);
    reference.SetRopePositions(positions_);
    std::vector<int32_t> ids = tokens_;
    std::fill_n(ids.begin() + kImageBegin, kImageTokens, 0);
    const int64_t width = model_->config().EmbeddingRowSize();
    std::vector<std::vector<float>> rows;
    for (int64_t r = 0; r < kImageTokens; ++r) {
      std::vector<float> row(image_.begin() + r * width, image_.begin() + (r + 1) * width);
      std::fill(row.begin() + slices * model_->config().hidden_size, row.end(), 0.0f);
      rows.push_back(row);
    }
    return reference.Forward(ids, {{.begin = kImageBegin, .rows = rows}});
  }

  std::vector<uint8_t> bytes_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<KvCache> cache_;
  std::vector<int32_t> tokens_;
  std::vector<float> image_;  // [kImageTokens, hidden * 3]
  std::vector<std::array<int64_t, 3>> positions_;
};

TEST_F(Qwen3VlForwardTest, ImageRowsAndPositionsMatchTheReference) {
  const auto got = Run(0, kTokens);
  const auto want = Reference(bytes_);
  ASSERT_EQ(got.size(), want.size());
  for (size_t t = 0; t < got.size(); ++t) {
    EXPECT_LE(MaxDiff(got[t], want[t]), 1e-3f * Scale(want[t])) << "position " << t;
  }
  // The deepstack slices matter from the image's first token on.
  const auto first_slice_only = Reference(bytes_, 1);
  for (size_t t = kImageBegin; t < got.size(); ++t) {
    EXPECT_GT(MaxDiff(first_slice_only[t], want[t]), 1e-2f * Scale(want[t])) << "position " << t;
  }
  // So does the fourth section (its pairs unrotated, text included): the same weights with
  // sections 2/2/2/0 (pair 6 at t) differ after position 0.
  const std::vector<uint8_t> no_fourth = BuildTinyModel(Qwen3VlSpec(2, 0));
  const auto other = Reference(no_fourth);
  EXPECT_EQ(MaxDiff(other[0], want[0]), 0.0f);  // position 0: nothing rotates
  const size_t last = want.size() - 1;
  EXPECT_GT(MaxDiff(other[last], want[last]), 1e-2f * Scale(want[last]));
}

// A prefill split inside the image, then the rest: the same logits as one pass.
TEST_F(Qwen3VlForwardTest, SplitPrefillEqualsOnePass) {
  const auto whole = Run(0, kTokens);
  for (const int64_t split : {5, 9, 11}) {
    Run(0, split, 20);
    const auto rest = Run(split, kTokens, 20);
    ASSERT_EQ(rest.size(), static_cast<size_t>(kTokens - split));
    for (size_t t = 0; t < rest.size(); ++t) {
      EXPECT_LE(MaxDiff(rest[t], whole[split + t]), 1e-4f * Scale(whole[split + t]))
          << "split " << split << " position " << split + t;
    }
  }
}

}  // namespace
}  // namespace qwen3vl_test
}  // namespace radixlm::model
