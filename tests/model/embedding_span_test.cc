// Embedding spans (model/forward_batch.h): rows given in place of token embeddings (an image's
// projector output), unscaled, attended bidirectionally within the span as llama.cpp decodes
// gemma3's image tokens; checked against the float reference, across batching, and with a
// cached prefix that ends inside the span; gemma4's per-layer inputs at image positions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "model/model.h"
#include "reference_model.h"
#include "tiny_model.h"

namespace radixlm::model {
namespace {

using kernels::KvDtype;
using testing::BuildTinyModel;
using testing::ParseTinyModel;
using testing::ReferenceEmbeddingSpan;
using testing::ReferenceModel;
using testing::TinyGemma3Spec;

// Image ids as the radix tree keys them: outside the vocabulary, never read by the model.
constexpr int32_t kImageId = 1 << 30;

class EmbeddingSpanTest : public ::testing::Test {
 protected:
  static constexpr int64_t kSlots = 128;

  void SetUp() override {
    bytes_ = BuildTinyModel(TinyGemma3Spec());
    ModelOptions options;
    options.n_threads = 2;
    options.max_batch_tokens = 64;
    auto model = Model::FromGguf(ParseTinyModel(bytes_), options);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(model).value();
    reference_ = std::make_unique<ReferenceModel>(model_->gguf(), KvDtype::kF16);
    auto cache = model_->CreateKvCache({.n_slots = kSlots, .dtype = KvDtype::kF16});
    ASSERT_TRUE(cache.ok());
    cache_ = std::move(cache).value();
    slots_.resize(kSlots);
    std::iota(slots_.begin(), slots_.end(), 0);
    std::shuffle(slots_.begin(), slots_.end(), rng_);
  }

  std::vector<int32_t> TakeSlots(size_t n) {
    std::vector<int32_t> out(slots_.end() - n, slots_.end());
    slots_.resize(slots_.size() - n);
    return out;
  }

  std::vector<int32_t> RandomTokens(size_t n) {
    std::vector<int32_t> t(n);
    for (int32_t& x : t) x = static_cast<int32_t>(rng_() % model_->config().vocab_size);
    return t;
  }

  // n rows of hidden width, of the size token rows have after gemma3's sqrt(hidden) scale.
  std::vector<float> RandomRows(int64_t n) {
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> rows(n * model_->config().hidden_size);
    for (float& x : rows) x = dist(rng_);
    return rows;
  }

  std::vector<std::vector<float>> AsRows(const std::vector<float>& flat) const {
    const int64_t h = model_->config().hidden_size;
    std::vector<std::vector<float>> rows;
    for (size_t b = 0; b < flat.size(); b += h)
      rows.emplace_back(flat.begin() + b, flat.begin() + b + h);
    return rows;
  }

  static std::vector<std::vector<float>> Rows(const ForwardOutput& out, size_t seq) {
    std::vector<std::vector<float>> rows;
    for (int64_t r = 0; r < out.row_count[seq]; ++r) {
      const float* p = out.Row(seq, r);
      rows.emplace_back(p, p + out.vocab_size);
    }
    return rows;
  }

  // As model_forward_test's ReferenceTolerance for F32 weights under GELU.
  static void ExpectClose(const std::vector<float>& got, const std::vector<float>& want,
                          const std::string& what) {
    ASSERT_EQ(got.size(), want.size());
    float scale = 1.0f, max_err = 0.0f;
    for (float w : want) scale = std::max(scale, std::fabs(w));
    for (size_t i = 0; i < got.size(); ++i)
      max_err = std::max(max_err, std::fabs(got[i] - want[i]));
    EXPECT_LE(max_err, 1e-3f * scale) << what;
  }

  std::vector<uint8_t> bytes_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<ReferenceModel> reference_;
  std::unique_ptr<KvCache> cache_;
  std::vector<int32_t> slots_;
  std::mt19937 rng_{49};
};

// text(3) image(6) text(4): the image is longer than the window (4), so the windowed layers'
// image tokens see later image tokens but not the earliest ones.
TEST_F(EmbeddingSpanTest, MatchesTheReferenceBidirectionalAndCausal) {
  std::vector<int32_t> tokens = RandomTokens(13);
  std::fill_n(tokens.begin() + 3, 6, kImageId);
  const std::vector<float> image = RandomRows(6);
  for (const bool bidirectional : {true, false}) {
    const std::vector<int32_t> slots = TakeSlots(tokens.size());
    const EmbeddingSpan span{
        .begin = 3, .n = 6, .rows = image.data(), .bidirectional = bidirectional};
    ForwardBatch batch;
    SequenceInput in{tokens, slots, {}, LogitsMode::kAll};
    in.embedding_spans = std::span<const EmbeddingSpan>(&span, 1);
    batch.sequences.push_back(in);
    ForwardOutput out;
    const Status st = model_->Forward(batch, *cache_, &out);
    ASSERT_TRUE(st.ok()) << st.ToString();
    std::vector<int32_t> ref_tokens = tokens;
    std::fill_n(ref_tokens.begin() + 3, 6, 0);
    const auto want = reference_->Forward(
        ref_tokens, {{.begin = 3, .rows = AsRows(image), .bidirectional = bidirectional}});
    const auto got = Rows(out, 0);
    ASSERT_EQ(got.size(), want.size());
    for (size_t t = 0; t < got.size(); ++t) {
      ExpectClose(got[t], want[t],
                  "position " + std::to_string(t) + (bidirectional ? " bidirectional" : " causal"));
    }
  }
  // The two attentions differ (the test would not notice a mask that ignores the flag).
  std::vector<int32_t> ref_tokens = tokens;
  std::fill_n(ref_tokens.begin() + 3, 6, 0);
  const auto bi =
      reference_->Forward(ref_tokens, {{.begin = 3, .rows = AsRows(image), .bidirectional = true}});
  const auto causal = reference_->Forward(ref_tokens, {{.begin = 3, .rows = AsRows(image)}});
  float diff = 0.0f;
  for (size_t i = 0; i < bi[3].size(); ++i)
    diff = std::max(diff, std::fabs(bi[3][i] - causal[3][i]));
  EXPECT_GT(diff, 1e-2f);
}

// The image's rows are not scaled by sqrt(hidden) as token rows are: a span whose rows are a
// token's scaled embedding gives that token's logits.
TEST_F(EmbeddingSpanTest, RowsAreNotScaled) {
  const std::vector<int32_t> tokens = RandomTokens(5);
  const auto want = reference_->Forward(tokens);
  const int64_t h = model_->config().hidden_size;
  std::vector<float> row(h);
  ASSERT_TRUE(model_->Embed(tokens.data() + 2, 1, row.data()).ok());
  for (float& x : row) x *= model_->config().embedding_scale;
  std::vector<int32_t> ids = tokens;
  ids[2] = kImageId;
  const std::vector<int32_t> slots = TakeSlots(ids.size());
  const EmbeddingSpan span{.begin = 2, .n = 1, .rows = row.data()};
  SequenceInput in{ids, slots, {}, LogitsMode::kAll};
  in.embedding_spans = std::span<const EmbeddingSpan>(&span, 1);
  ForwardBatch batch;
  batch.sequences.push_back(in);
  ForwardOutput out;
  ASSERT_TRUE(model_->Forward(batch, *cache_, &out).ok());
  const auto got = Rows(out, 0);
  for (size_t t = 0; t < got.size(); ++t)
    ExpectClose(got[t], want[t], "position " + std::to_string(t));
}

// One image sequence alone, then batched with a decode and a text prefill: its logits do not
// change by a bit. And a second sequence that reuses the first's KV through part of the image
// (a cached prefix ending inside the span) and recomputes the rest gets the reference's logits.
TEST_F(EmbeddingSpanTest, BatchInvariantAndResumableInsideTheSpan) {
  std::vector<int32_t> tokens = RandomTokens(12);
  std::fill_n(tokens.begin() + 2, 7, kImageId);
  const std::vector<float> image = RandomRows(7);
  const EmbeddingSpan span{.begin = 2, .n = 7, .rows = image.data(), .bidirectional = true};

  std::vector<std::vector<float>> alone;
  const std::vector<int32_t> slots = TakeSlots(tokens.size());
  for (const bool batched : {false, true}) {
    ForwardBatch batch;
    const std::vector<int32_t> other = RandomTokens(5);
    const std::vector<int32_t> other_slots = TakeSlots(5);
    if (batched) batch.sequences.push_back({other, other_slots, {}, LogitsMode::kAll});
    SequenceInput in{tokens, slots, {}, LogitsMode::kAll};
    in.embedding_spans = std::span<const EmbeddingSpan>(&span, 1);
    batch.sequences.push_back(in);
    ForwardOutput out;
    const Status st = model_->Forward(batch, *cache_, &out);
    ASSERT_TRUE(st.ok()) << st.ToString();
    const auto rows = Rows(out, batched ? 1 : 0);
    if (!batched) {
      alone = rows;
    } else {
      ASSERT_EQ(rows.size(), alone.size());
      for (size_t t = 0; t < rows.size(); ++t) EXPECT_EQ(rows[t], alone[t]) << "position " << t;
    }
  }

  // Reuse positions 0..4 (text and 3 image tokens); recompute image tokens 3..6 and new text.
  std::vector<int32_t> resumed(tokens.begin(), tokens.begin() + 9);
  const std::vector<int32_t> tail_text = RandomTokens(3);
  resumed.insert(resumed.end(), tail_text.begin(), tail_text.end());
  const std::vector<int32_t> prefix(slots.begin(), slots.begin() + 5);
  const std::vector<int32_t> new_slots = TakeSlots(resumed.size() - 5);
  const EmbeddingSpan tail{.begin = 0,
                           .n = 4,
                           .rows = image.data() + 3 * model_->config().hidden_size,
                           .bidirectional = true};
  SequenceInput in{std::span<const int32_t>(resumed).subspan(5), new_slots, prefix,
                   LogitsMode::kAll};
  in.embedding_spans = std::span<const EmbeddingSpan>(&tail, 1);
  ForwardBatch batch;
  batch.sequences.push_back(in);
  ForwardOutput out;
  const Status st = model_->Forward(batch, *cache_, &out);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<int32_t> ref_tokens = resumed;
  std::fill_n(ref_tokens.begin() + 2, 7, 0);
  const auto want =
      reference_->Forward(ref_tokens, {{.begin = 2, .rows = AsRows(image), .bidirectional = true}});
  const auto got = Rows(out, 0);
  ASSERT_EQ(got.size(), 7u);
  for (size_t t = 0; t < got.size(); ++t) {
    ExpectClose(got[t], want[5 + t], "position " + std::to_string(5 + t));
  }
}

TEST_F(EmbeddingSpanTest, RefusesSpansOutsideTheNewTokens) {
  const std::vector<int32_t> tokens = {1, 2, kImageId, kImageId};
  const std::vector<int32_t> slots = TakeSlots(4);
  const std::vector<float> rows = RandomRows(3);
  ForwardOutput out;
  for (const EmbeddingSpan& bad : {EmbeddingSpan{.begin = 2, .n = 3, .rows = rows.data()},
                                   EmbeddingSpan{.begin = 2, .n = 0, .rows = rows.data()},
                                   EmbeddingSpan{.begin = 2, .n = 2, .rows = nullptr}}) {
    SequenceInput in{tokens, slots, {}, LogitsMode::kLast};
    in.embedding_spans = std::span<const EmbeddingSpan>(&bad, 1);
    ForwardBatch batch;
    batch.sequences.push_back(in);
    const Status st = model_->Forward(batch, *cache_, &out);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("embedding span"), std::string::npos) << st.message();
  }
  // Image ids outside a span are token ids outside the vocabulary.
  SequenceInput in{tokens, slots, {}, LogitsMode::kLast};
  ForwardBatch batch;
  batch.sequences.push_back(in);
  EXPECT_EQ(model_->Forward(batch, *cache_, &out).code(), StatusCode::kInvalidArgument);
}

// gemma4 (the tiny fixture of tests/model/testdata/llama_cpp, with per-layer inputs), as
// llama.cpp's gemma4 reads embeddings: the rows enter unscaled, and the per-layer inputs at
// image positions are token 0's (its padding row), whatever id the radix tree gives the image.
TEST(Gemma4EmbeddingSpanTest, RowsAreUnscaledAndPerLayerInputsAreTokenZeros) {
  auto file = gguf::GgufFile::Open(std::string(RADIXLM_SOURCE_DIR) +
                                   "/tests/model/testdata/llama_cpp/gemma4.gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ModelOptions options;
  options.n_threads = 2;
  auto model = Model::FromGguf(std::move(*file), options);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const ModelConfig& c = (*model)->config();
  ASSERT_GT(c.per_layer_input_size, 0);
  ASSERT_TRUE(c.scale_embeddings);
  auto forward = [&](const std::vector<int32_t>& ids, const EmbeddingSpan* span) {
    auto cache = (*model)->CreateKvCache({.n_slots = 32, .dtype = KvDtype::kF16});
    EXPECT_TRUE(cache.ok());
    std::vector<int32_t> slots(ids.size());
    std::iota(slots.begin(), slots.end(), 0);
    SequenceInput in{ids, slots, {}, LogitsMode::kAll};
    if (span != nullptr) in.embedding_spans = std::span<const EmbeddingSpan>(span, 1);
    ForwardBatch batch;
    batch.sequences.push_back(in);
    ForwardOutput out;
    const Status st = (*model)->Forward(batch, **cache, &out);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return std::vector<float>(out.logits.begin(), out.logits.begin() + out.n_rows * out.vocab_size);
  };
  const int32_t token = 17;
  for (const int32_t row_of : {0, token}) {
    // The span's row: token `row_of`'s embedding as the model scales it.
    std::vector<float> row(c.hidden_size);
    ASSERT_TRUE((*model)->Embed(&row_of, 1, row.data()).ok());
    for (float& x : row) x *= c.embedding_scale;
    const EmbeddingSpan span{.begin = 2, .n = 1, .rows = row.data()};
    const std::vector<float> image = forward({5, 9, kImageId, 33, 2}, &span);
    const std::vector<float> zero = forward({5, 9, 0, 33, 2}, nullptr);
    const std::vector<float> same = forward({5, 9, row_of, 33, 2}, nullptr);
    ASSERT_EQ(image.size(), same.size());
    float to_zero = 0.0f, to_same = 0.0f, scale = 1.0f;
    for (size_t i = 0; i < image.size(); ++i) {
      to_zero = std::max(to_zero, std::fabs(image[i] - zero[i]));
      to_same = std::max(to_same, std::fabs(image[i] - same[i]));
      scale = std::max(scale, std::fabs(same[i]));
    }
    if (row_of == 0) {
      EXPECT_LE(to_same, 1e-5f * scale);  // token 0's row and token 0's per-layer inputs
    } else {
      // Token 17's row with token 0's per-layer inputs: neither token's forward.
      EXPECT_GT(to_same, 1e-3f * scale);
      EXPECT_GT(to_zero, 1e-3f * scale);
    }
  }
}

}  // namespace
}  // namespace radixlm::model
