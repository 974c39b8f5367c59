// A qwen2vl model (M-RoPE) under the scheduler, with a prompt image on a grid: every new token,
// prefill and decode, gets its (t, h, w) rotary positions from the request's images. The greedy
// output is the float reference's with llama.cpp's positions (text after the image continues at
// p0 + max(rows, cols)), whatever the prefill chunk size (chunks split the image), and the same
// with the radix cache reusing the image's KV, and under n-gram speculation (draft trees); an
// image without a grid (one position per token) gives another output, so the positions reach
// the model.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "engine/model_backed_runner.h"
#include "model/model.h"
#include "model/reference_model.h"
#include "model/tiny_model.h"
#include "scheduler/scheduler.h"

namespace radixlm {
namespace {

constexpr int64_t kPool = 160;
constexpr int kNewTokens = 5;
// text [0, 5), an image of 3 rows x 4 columns [5, 17) at t = 5, text [17, 23) from 5 + 4 = 9 on.
constexpr int64_t kImageBegin = 5, kRows = 3, kCols = 4, kPromptLen = 23;

model::testing::TinyModelSpec Spec() {
  model::testing::TinyModelSpec spec;
  spec.arch = "qwen2vl";
  spec.tied_output = false;  // (tied, a random model repeats its input token)
  spec.seed = 11;
  spec.extra_metadata.push_back(
      {"qwen2vl.rope.dimension_sections",
       gguf::Value::Arr(gguf::ValueType::kInt32, {gguf::Value::I32(2), gguf::Value::I32(3),
                                                  gguf::Value::I32(3), gguf::Value::I32(0)})});
  return spec;
}

class Instance {
 public:
  Instance(const std::vector<uint8_t>& gguf, bool radix, int64_t chunk, bool ngram = false) {
    model::ModelOptions mo;
    mo.n_threads = 2;
    mo.max_batch_tokens = 64;
    mo.max_context = 128;
    auto model = model::Model::FromGguf(model::testing::ParseTinyModel(gguf), mo);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    auto runner = ModelBackedRunner::Create(std::move(*model), kPool + 1, 0);
    EXPECT_TRUE(runner.ok()) << runner.status().ToString();
    runner_ = std::move(*runner);
    SchedulerConfig c;
    c.max_total_tokens = kPool;
    c.max_running_requests = 4;
    c.chunked_prefill_size = chunk;
    c.max_prefill_tokens = std::max<int64_t>(chunk, 32);
    c.disable_radix_cache = !radix;
    c.speculative_ngram = ngram;
    auto sched = Scheduler::Create(c, runner_.get(), nullptr, [this](RequestOutput&& out) {
      auto& ids = outputs_[out.id];
      ids.insert(ids.end(), out.chunk.output_ids.begin(), out.chunk.output_ids.end());
    });
    EXPECT_TRUE(sched.ok()) << sched.status().ToString();
    scheduler_ = std::move(*sched);
  }

  std::vector<int32_t> Run(uint64_t id, const std::vector<int32_t>& prompt,
                           const PromptImage& image) {
    RequestInput in;
    in.id = id;
    in.input_ids = prompt;
    in.images = {image};
    in.params.temperature = 0.0f;
    in.params.max_new_tokens = kNewTokens;
    in.params.ignore_eos = true;
    EXPECT_TRUE(scheduler_->AddRequest(std::move(in)).ok());
    for (int i = 0; i < 10000 && scheduler_->HasWork(); ++i) {
      const Status s = scheduler_->Step();
      EXPECT_TRUE(s.ok()) << s.ToString();
      if (!s.ok()) break;
    }
    scheduler_->FlushNgramFills();  // (n-gram speculation: the next request sees these windows)
    return outputs_[id];
  }

  int64_t cached_prefill_tokens() { return scheduler_->GetStats().prefill_tokens; }
  int64_t accepted_drafts() { return scheduler_->GetStats().spec_accepted_tokens; }

 private:
  std::unique_ptr<ModelBackedRunner> runner_;
  std::unique_ptr<Scheduler> scheduler_;
  std::map<uint64_t, std::vector<int32_t>> outputs_;
};

class MropeSchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gguf_ = model::testing::BuildTinyModel(Spec());
    std::mt19937 rng(5);
    prompt_.resize(kPromptLen);
    for (int32_t& t : prompt_) t = static_cast<int32_t>(1 + rng() % 95);
    WriteImageIds({7, 8}, std::span<int32_t>(prompt_).subspan(kImageBegin, kRows * kCols));
    std::normal_distribution<float> dist(0.0f, 1.0f);
    auto rows = std::make_shared<std::vector<float>>(kRows * kCols * 64);  // (hidden 64)
    for (float& x : *rows) x = dist(rng);
    image_ = {.begin = kImageBegin,
              .n = kRows * kCols,
              .hash = {7, 8},
              .embeddings = rows,
              .grid_rows = kRows,
              .grid_cols = kCols};
  }

  // The float reference's greedy continuation, positions written out by hand: (i, i, i) before
  // the image, (5, 5 + row, 5 + col) on it, i - 8 after it (12 tokens in max(3, 4) = 4
  // positions).
  std::vector<int32_t> ReferenceGreedy() const {
    auto file = model::testing::ParseTinyModel(gguf_);
    model::testing::ReferenceModel reference(*file, kernels::KvDtype::kF16);
    std::vector<int32_t> ids = prompt_;
    std::fill_n(ids.begin() + kImageBegin, kRows * kCols, 0);
    std::vector<std::vector<float>> rows;
    for (int64_t r = 0; r < kRows * kCols; ++r) {
      rows.emplace_back(image_.embeddings->begin() + r * 64,
                        image_.embeddings->begin() + (r + 1) * 64);
    }
    std::vector<int32_t> out;
    for (int step = 0; step < kNewTokens; ++step) {
      std::vector<std::array<int64_t, 3>> positions;
      for (int64_t i = 0; i < static_cast<int64_t>(ids.size()); ++i) {
        if (i < kImageBegin) {
          positions.push_back({i, i, i});
        } else if (i < kImageBegin + kRows * kCols) {
          const int64_t j = i - kImageBegin;
          positions.push_back({5, 5 + j / kCols, 5 + j % kCols});
        } else {
          positions.push_back({i - 8, i - 8, i - 8});
        }
      }
      reference.SetRopePositions(positions);
      const std::vector<float> last =
          reference.Forward(ids, {{.begin = kImageBegin, .rows = rows}}).back();
      const auto next =
          static_cast<int32_t>(std::max_element(last.begin(), last.end()) - last.begin());
      out.push_back(next);
      ids.push_back(next);
    }
    return out;
  }

  std::vector<uint8_t> gguf_;
  std::vector<int32_t> prompt_;
  PromptImage image_;
};

TEST_F(MropeSchedulerTest, GreedyOutputIsTheReferencesWithImagePositions) {
  const std::vector<int32_t> want = ReferenceGreedy();
  for (const int64_t chunk : {64, 7, 3}) {  // one pass; chunks ending inside the image
    Instance instance(gguf_, /*radix=*/false, chunk);
    EXPECT_EQ(instance.Run(1, prompt_, image_), want) << "chunk " << chunk;
  }
  // The radix cache: the second request reuses the image's KV (and what follows).
  Instance cached(gguf_, /*radix=*/true, 7);
  EXPECT_EQ(cached.Run(1, prompt_, image_), want);
  const int64_t computed = cached.cached_prefill_tokens();
  EXPECT_EQ(cached.Run(2, prompt_, image_), want);
  EXPECT_LE(cached.cached_prefill_tokens() - computed, 1) << "the prompt came from the tree";
  // N-gram speculation: the second run drafts from the first's windows, each draft tree node
  // at its depth's positions, verified in one pass.
  Instance spec(gguf_, /*radix=*/false, 64, /*ngram=*/true);
  EXPECT_EQ(spec.Run(1, prompt_, image_), want);
  EXPECT_EQ(spec.Run(2, prompt_, image_), want);
  EXPECT_GT(spec.accepted_drafts(), 0);
  // Without the grid the image's tokens take one position each: another computation.
  PromptImage plain = image_;
  plain.grid_rows = plain.grid_cols = 0;
  Instance other(gguf_, /*radix=*/false, 64);
  const std::vector<int32_t> sequential = other.Run(1, prompt_, plain);
  ASSERT_EQ(sequential.size(), want.size());
  EXPECT_NE(sequential, want);
}

}  // namespace
}  // namespace radixlm
