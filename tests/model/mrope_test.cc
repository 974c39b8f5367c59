// qwen2vl (model/families/qwen2vl.cc): qwen2 with M-RoPE. Text alone is qwen2's computation
// bit for bit; an image's (t, h, w) rotary positions (SequenceInput::rope_positions) match the
// float reference, differ from plain positions, and give the same logits split over two
// forward passes.
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
namespace mrope_test {  // (the model tests share unity-build translation units)
namespace {

using gguf::Value;
using kernels::KvDtype;
using testing::BuildTinyModel;
using testing::ParseTinyModel;
using testing::ReferenceEmbeddingSpan;
using testing::ReferenceModel;
using testing::TinyModelSpec;

constexpr int32_t kImageId = 1 << 30;  // the radix tree's image ids: never read by the model

// A tiny qwen2vl: 8 pairs per head (head_dim 16) in sections t 2, h 3, w 3 (as Qwen2.5-VL's
// 16/24/24 of 64 pairs, scaled down); `fourth` > 0 writes a fourth section.
TinyModelSpec Qwen2VlSpec(int64_t fourth = 0, std::string arch = "qwen2vl") {
  TinyModelSpec spec;
  spec.arch = arch;
  spec.seed = 7;
  if (arch == "qwen2vl") {
    spec.extra_metadata.push_back(
        {arch + ".rope.dimension_sections",
         Value::Arr(gguf::ValueType::kInt32, {Value::I32(2), Value::I32(3), Value::I32(3),
                                              Value::I32(static_cast<int32_t>(fourth))})});
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

std::vector<std::vector<float>> Rows(const ForwardOutput& out, size_t seq) {
  std::vector<std::vector<float>> rows;
  for (int64_t r = 0; r < out.row_count[seq]; ++r) {
    const float* p = out.Row(seq, r);
    rows.emplace_back(p, p + out.vocab_size);
  }
  return rows;
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

TEST(Qwen2VlFamilyTest, ReadsTheSections) {
  const std::vector<uint8_t> bytes = BuildTinyModel(Qwen2VlSpec());
  auto config = ModelConfig::FromGguf(*ParseTinyModel(bytes));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->arch, "qwen2vl");
  EXPECT_TRUE(config->mrope());
  EXPECT_EQ(config->mrope_sections, (std::array<int64_t, 3>{2, 3, 3}));
  EXPECT_EQ(config->rope_layout, RopeLayout::kNeox);
  EXPECT_TRUE(config->qkv_bias);
}

TEST(Qwen2VlFamilyTest, RefusesAFourthSectionAndMissingSections) {
  const std::vector<uint8_t> fourth = BuildTinyModel(Qwen2VlSpec(1));
  auto config = ModelConfig::FromGguf(*ParseTinyModel(fourth));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(config.status().message().find("qwen2vl.rope.dimension_sections"), std::string::npos)
      << config.status().ToString();
  TinyModelSpec spec = Qwen2VlSpec();
  spec.extra_metadata.clear();
  const std::vector<uint8_t> none = BuildTinyModel(spec);
  config = ModelConfig::FromGguf(*ParseTinyModel(none));
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("qwen2vl.rope.dimension_sections"), std::string::npos)
      << config.status().ToString();
}

class Qwen2VlForwardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bytes_ = BuildTinyModel(Qwen2VlSpec());
    model_ = Load(bytes_);
    ASSERT_NE(model_, nullptr);
    auto cache = model_->CreateKvCache({.n_slots = 64, .dtype = KvDtype::kF16});
    ASSERT_TRUE(cache.ok());
    cache_ = std::move(cache).value();
    std::mt19937 rng(49);
    tokens_.resize(13);
    for (int32_t& t : tokens_) t = static_cast<int32_t>(rng() % model_->config().vocab_size);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    image_.resize(6 * model_->config().hidden_size);
    for (float& x : image_) x = dist(rng);
    std::fill_n(tokens_.begin() + 3, 6, kImageId);
    // text(3), an image of 2 rows x 3 columns at p0 = 3, text(4) from 3 + max(2, 3) = 6 on.
    for (int64_t i = 0; i < 3; ++i) positions_.push_back({i, i, i});
    for (int64_t row = 0; row < 2; ++row) {
      for (int64_t col = 0; col < 3; ++col) positions_.push_back({3, 3 + row, 3 + col});
    }
    for (int64_t i = 6; i < 10; ++i) positions_.push_back({i, i, i});
  }

  // The prompt's tokens [begin, end) after a prefix of `begin`, every row's logits.
  std::vector<std::vector<float>> Run(int64_t begin, int64_t end, bool with_positions,
                                      int32_t first_slot = 0) {
    std::vector<int32_t> slots(tokens_.size());
    std::iota(slots.begin(), slots.end(), first_slot);
    const auto n = static_cast<size_t>(end - begin);
    SequenceInput in{std::span<const int32_t>(tokens_).subspan(begin, n),
                     std::span<const int32_t>(slots).subspan(begin, n),
                     std::span<const int32_t>(slots).first(begin), LogitsMode::kAll};
    std::vector<EmbeddingSpan> spans;
    const int64_t b = std::max<int64_t>(3, begin), e = std::min<int64_t>(9, end);
    if (b < e) {
      spans.push_back({.begin = b - begin,
                       .n = e - b,
                       .rows = image_.data() + (b - 3) * model_->config().hidden_size});
    }
    in.embedding_spans = spans;
    std::vector<int64_t> flat;
    for (int64_t i = begin; i < end; ++i) {
      flat.insert(flat.end(), positions_[i].begin(), positions_[i].end());
    }
    if (with_positions) in.rope_positions = flat;
    ForwardBatch batch;
    batch.sequences.push_back(in);
    ForwardOutput out;
    const Status st = model_->Forward(batch, *cache_, &out);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return st.ok() ? Rows(out, 0) : std::vector<std::vector<float>>{};
  }

  std::vector<std::vector<float>> Reference(bool with_positions) {
    ReferenceModel reference(model_->gguf(), KvDtype::kF16);
    if (with_positions) reference.SetRopePositions(positions_);
    std::vector<int32_t> ids = tokens_;
    std::fill_n(ids.begin() + 3, 6, 0);
    std::vector<std::vector<float>> rows;
    const int64_t h = model_->config().hidden_size;
    for (int64_t r = 0; r < 6; ++r) {
      rows.emplace_back(image_.begin() + r * h, image_.begin() + (r + 1) * h);
    }
    return reference.Forward(ids, {{.begin = 3, .rows = rows}});
  }

  std::vector<uint8_t> bytes_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<KvCache> cache_;
  std::vector<int32_t> tokens_;
  std::vector<float> image_;
  std::vector<std::array<int64_t, 3>> positions_;
};

// With every section at the token's position (text), qwen2vl is qwen2: the same weights give
// the same logits exactly, with the positions given or left out.
TEST_F(Qwen2VlForwardTest, TextIsQwen2Exactly) {
  const std::vector<uint8_t> qwen2_bytes = BuildTinyModel(Qwen2VlSpec(0, "qwen2"));
  std::unique_ptr<Model> qwen2 = Load(qwen2_bytes);
  ASSERT_NE(qwen2, nullptr);
  auto qwen2_cache = qwen2->CreateKvCache({.n_slots = 64, .dtype = KvDtype::kF16});
  ASSERT_TRUE(qwen2_cache.ok());
  std::vector<int32_t> text(tokens_.begin(), tokens_.begin() + 3);
  text.insert(text.end(), tokens_.begin() + 9, tokens_.end());
  std::vector<int32_t> slots(text.size());
  std::iota(slots.begin(), slots.end(), 0);
  std::vector<int64_t> same;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto p = static_cast<int64_t>(i);
    same.insert(same.end(), {p, p, p});
  }
  std::vector<std::vector<float>> want;
  {
    ForwardBatch batch;
    batch.sequences.push_back({text, slots, {}, LogitsMode::kAll});
    ForwardOutput out;
    ASSERT_TRUE(qwen2->Forward(batch, **qwen2_cache, &out).ok());
    want = Rows(out, 0);
  }
  for (const bool given : {false, true}) {
    ForwardBatch batch;
    SequenceInput in{text, slots, {}, LogitsMode::kAll};
    if (given) in.rope_positions = same;
    batch.sequences.push_back(in);
    ForwardOutput out;
    const Status st = model_->Forward(batch, *cache_, &out);
    ASSERT_TRUE(st.ok()) << st.ToString();
    const auto got = Rows(out, 0);
    ASSERT_EQ(got.size(), want.size());
    for (size_t t = 0; t < got.size(); ++t) {
      EXPECT_EQ(got[t], want[t]) << "position " << t << (given ? " (positions given)" : "");
    }
  }
}

TEST_F(Qwen2VlForwardTest, ImagePositionsMatchTheReference) {
  const auto got = Run(0, 13, true);
  const auto want = Reference(true);
  ASSERT_EQ(got.size(), want.size());
  for (size_t t = 0; t < got.size(); ++t) {
    EXPECT_LE(MaxDiff(got[t], want[t]), 1e-3f * Scale(want[t])) << "position " << t;
  }
  // The positions matter: from the image's second token on, the plain positions' logits are
  // elsewhere (the test would notice positions that are ignored).
  const auto plain = Reference(false);
  EXPECT_EQ(MaxDiff(plain[3], want[3]), 0.0f);  // (3, 3, 3) either way
  for (size_t t = 4; t < got.size(); ++t) {
    EXPECT_GT(MaxDiff(plain[t], want[t]), 1e-2f * Scale(want[t])) << "position " << t;
  }
}

// A prefill split inside the image, then the rest: the same logits as one pass.
TEST_F(Qwen2VlForwardTest, SplitPrefillEqualsOnePass) {
  const auto whole = Run(0, 13, true);
  for (const int64_t split : {5, 9, 11}) {
    Run(0, split, true, 20);
    const auto rest = Run(split, 13, true, 20);
    ASSERT_EQ(rest.size(), static_cast<size_t>(13 - split));
    for (size_t t = 0; t < rest.size(); ++t) {
      EXPECT_LE(MaxDiff(rest[t], whole[split + t]), 1e-4f * Scale(whole[split + t]))
          << "split " << split << " position " << split + t;
    }
  }
}

TEST_F(Qwen2VlForwardTest, RefusesMalformedPositions) {
  std::vector<int32_t> slots = {0, 1};
  std::vector<int64_t> short_positions = {0, 0, 0, 1, 1};
  ForwardBatch batch;
  SequenceInput in{std::span<const int32_t>(tokens_).first(2), slots, {}, LogitsMode::kLast};
  in.rope_positions = short_positions;
  batch.sequences.push_back(in);
  ForwardOutput out;
  Status st = model_->Forward(batch, *cache_, &out);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("rotary positions"), std::string::npos) << st.ToString();

  // A model without M-RoPE refuses them.
  const std::vector<uint8_t> qwen2_bytes = BuildTinyModel(Qwen2VlSpec(0, "qwen2"));
  std::unique_ptr<Model> qwen2 = Load(qwen2_bytes);
  ASSERT_NE(qwen2, nullptr);
  auto qwen2_cache = qwen2->CreateKvCache({.n_slots = 64, .dtype = KvDtype::kF16});
  ASSERT_TRUE(qwen2_cache.ok());
  std::vector<int64_t> positions = {0, 0, 0, 1, 1, 1};
  batch.sequences[0].rope_positions = positions;
  st = qwen2->Forward(batch, **qwen2_cache, &out);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("without M-RoPE"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace mrope_test
}  // namespace radixlm::model
