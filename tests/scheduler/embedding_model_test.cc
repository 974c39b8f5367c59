// Embedding requests (RequestInput::pooling) over a real (tiny, random-weight) model whose
// runner returns hidden states (ModelOptions::output_hidden_states): the pooled vectors against
// the plain float reference forward, and the same vectors however the scheduler runs them
// (chunked, batched, from a cached prefix).
//
// The reference gives logits, not hidden states; with an F32 tied output matrix E, logits_i =
// E · xn_i where xn_i is position i's final-normed hidden state, so E · pooled is parallel to
// the reference's last logits (last pooling), first logits (cls) or mean logits (mean).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "engine/model_backed_runner.h"
#include "model/model.h"
#include "model/reference_model.h"
#include "model/tiny_model.h"
#include "scheduler/scheduler.h"

namespace radixlm {
namespace {

using model::testing::BuildTinyModel;
using model::testing::ParseTinyModel;
using model::testing::ReferenceModel;
using model::testing::TinyModelSpec;

constexpr int64_t kPool = 256;

TinyModelSpec Spec() {
  TinyModelSpec s;
  s.vocab = 64;
  s.tied_output = true;  // token_embd is the output matrix
  s.seed = 5;
  return s;
}

class EmbeddingSchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override { gguf_ = BuildTinyModel(Spec()); }

  void Start(int64_t chunked_prefill_size, bool radix_cache = true) {
    model::ModelOptions mo;
    mo.n_threads = 1;
    mo.max_batch_tokens = 512;
    mo.max_context = 256;
    mo.output_hidden_states = true;
    auto model = model::Model::FromGguf(ParseTinyModel(gguf_), mo);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    auto runner = ModelBackedRunner::Create(std::move(*model), kPool + 1, 0);
    ASSERT_TRUE(runner.ok()) << runner.status().ToString();
    runner_ = std::move(*runner);
    SchedulerConfig c;
    c.max_total_tokens = kPool;
    c.max_running_requests = 8;
    c.chunked_prefill_size = chunked_prefill_size;
    c.max_prefill_tokens = 256;
    c.disable_radix_cache = !radix_cache;
    auto sched = Scheduler::Create(c, runner_.get(), nullptr, [this](RequestOutput&& out) {
      if (out.chunk.finish_reason.has_value()) {
        finished_[out.id] = out.chunk;
      }
    });
    ASSERT_TRUE(sched.ok()) << sched.status().ToString();
    scheduler_ = std::move(*sched);
  }

  void Add(uint64_t id, const std::vector<int32_t>& prompt, Pooling pooling) {
    RequestInput in;
    in.id = id;
    in.input_ids = prompt;
    in.params.max_new_tokens = 0;
    in.pooling = pooling;
    ASSERT_TRUE(scheduler_->AddRequest(std::move(in)).ok());
  }

  void RunAll() {
    for (int i = 0; i < 1000 && scheduler_->HasWork(); ++i) {
      const Status s = scheduler_->Step();
      ASSERT_TRUE(s.ok()) << s.ToString();
      const Status inv = scheduler_->CheckInvariants();
      ASSERT_TRUE(inv.ok()) << inv.ToString();
    }
  }

  // One request alone: its output chunk.
  GenerateOutput Embed(uint64_t id, const std::vector<int32_t>& prompt, Pooling pooling) {
    Add(id, prompt, pooling);
    RunAll();
    EXPECT_EQ(finished_.count(id), 1u);
    return finished_[id];
  }

  // E · v, E the [vocab, hidden] F32 token embedding (the tied output).
  std::vector<float> Project(const std::vector<float>& v) const {
    std::unique_ptr<gguf::GgufFile> file = ParseTinyModel(gguf_);
    const gguf::TensorInfo* e = file->FindTensor("token_embd.weight");
    EXPECT_NE(e, nullptr);
    const int64_t hidden = e->row_size();
    EXPECT_EQ(hidden, static_cast<int64_t>(v.size()));
    std::vector<float> out(static_cast<size_t>(e->num_rows()));
    const auto* w = reinterpret_cast<const float*>(e->data);
    for (int64_t r = 0; r < e->num_rows(); ++r) {
      double dot = 0;
      for (int64_t i = 0; i < hidden; ++i) dot += static_cast<double>(w[r * hidden + i]) * v[i];
      out[r] = static_cast<float>(dot);
    }
    return out;
  }

  static double Cosine(const std::vector<float>& a, const std::vector<float>& b) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      ab += static_cast<double>(a[i]) * b[i];
      aa += static_cast<double>(a[i]) * a[i];
      bb += static_cast<double>(b[i]) * b[i];
    }
    return ab / std::sqrt(aa * bb);
  }

  static double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
    EXPECT_EQ(a.size(), b.size());
    double worst = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      worst = std::max(worst, static_cast<double>(std::fabs(a[i] - b[i])));
    }
    return worst;
  }

  // The reference's logits row that `pooling` should be parallel to after projection.
  std::vector<float> ReferenceTarget(const std::vector<int32_t>& prompt, Pooling pooling) const {
    std::unique_ptr<gguf::GgufFile> file = ParseTinyModel(gguf_);
    ReferenceModel ref(*file, kernels::KvDtype::kF16);
    const std::vector<std::vector<float>> logits = ref.Forward(prompt);
    if (pooling == Pooling::kLast) return logits.back();
    if (pooling == Pooling::kCls) return logits.front();
    std::vector<float> mean(logits.front().size(), 0.0f);
    for (const auto& row : logits) {
      for (size_t i = 0; i < row.size(); ++i) mean[i] += row[i] / static_cast<float>(logits.size());
    }
    return mean;
  }

  static std::vector<int32_t> Prompt(uint32_t seed, int64_t n) {
    std::vector<int32_t> p(static_cast<size_t>(n));
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 7;
    for (auto& t : p) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      t = static_cast<int32_t>(1 + x % 63);
    }
    return p;
  }

  std::vector<uint8_t> gguf_;
  std::unique_ptr<ModelBackedRunner> runner_;
  std::unique_ptr<Scheduler> scheduler_;
  std::map<uint64_t, GenerateOutput> finished_;
};

TEST_F(EmbeddingSchedulerTest, PooledVectorsMatchTheReference) {
  Start(/*chunked_prefill_size=*/-1);
  const std::vector<int32_t> prompt = Prompt(1, 23);
  uint64_t id = 1;
  for (Pooling pooling : {Pooling::kLast, Pooling::kMean, Pooling::kCls}) {
    SCOPED_TRACE(PoolingName(pooling));
    const GenerateOutput out = Embed(id++, prompt, pooling);
    ASSERT_EQ(out.embedding.size(), 64u);  // the hidden width
    EXPECT_TRUE(out.output_ids.empty());
    EXPECT_FALSE(out.finish_reason->is_abort());
    double norm = 0;
    for (float v : out.embedding) norm += static_cast<double>(v) * v;
    EXPECT_NEAR(norm, 1.0, 1e-5);
    EXPECT_GT(Cosine(Project(out.embedding), ReferenceTarget(prompt, pooling)), 0.9999);
  }
  // A different prompt is a different vector (the check above could not pass by accident).
  const GenerateOutput other = Embed(id++, Prompt(2, 23), Pooling::kLast);
  EXPECT_LT(Cosine(Project(other.embedding), ReferenceTarget(prompt, Pooling::kLast)), 0.99);
}

TEST_F(EmbeddingSchedulerTest, ChunkedBatchedAndCachedRunsPoolTheSameVector) {
  const std::vector<int32_t> a = Prompt(3, 40);
  std::vector<int32_t> b = a;  // shares a's first 30 tokens
  b.resize(30);
  for (int32_t t : Prompt(4, 12)) b.push_back(t);
  std::map<Pooling, std::vector<float>> alone;
  Start(/*chunked_prefill_size=*/-1, /*radix_cache=*/false);
  uint64_t id = 1;
  for (Pooling p : {Pooling::kLast, Pooling::kMean, Pooling::kCls})
    alone[p] = Embed(id++, b, p).embedding;

  Start(/*chunked_prefill_size=*/8);  // chunks of 8, the radix cache on
  for (Pooling p : {Pooling::kLast, Pooling::kMean, Pooling::kCls}) {
    SCOPED_TRACE(PoolingName(p));
    finished_.clear();
    ASSERT_TRUE(scheduler_->FlushCache().ok());
    Embed(100, a, p);  // a's prefix enters the tree
    const int64_t before = scheduler_->GetStats().prefill_tokens;
    const GenerateOutput out = Embed(101, b, p);
    const int64_t computed = scheduler_->GetStats().prefill_tokens - before;
    EXPECT_LT(MaxAbsDiff(out.embedding, alone[p]), 2e-5);
    if (p == Pooling::kLast) {
      EXPECT_EQ(out.meta.cached_tokens, 30);  // the shared prefix came from the tree
      EXPECT_EQ(computed, 12);
      // The whole prompt cached: its last token is computed again for its hidden state.
      const int64_t again = scheduler_->GetStats().prefill_tokens;
      const GenerateOutput repeat = Embed(102, b, p);
      EXPECT_EQ(scheduler_->GetStats().prefill_tokens - again, 1);
      EXPECT_LT(MaxAbsDiff(repeat.embedding, alone[p]), 2e-5);
    } else {
      EXPECT_EQ(out.meta.cached_tokens, 0);  // every position's hidden state is needed
      EXPECT_EQ(computed, static_cast<int64_t>(b.size()));
    }
  }

  // Several at once, in one batch: each vector as it was alone.
  finished_.clear();
  Add(200, b, Pooling::kMean);
  Add(201, a, Pooling::kLast);
  Add(202, b, Pooling::kLast);
  Add(203, b, Pooling::kCls);
  RunAll();
  ASSERT_EQ(finished_.size(), 4u);
  EXPECT_LT(MaxAbsDiff(finished_[200].embedding, alone[Pooling::kMean]), 2e-5);
  EXPECT_LT(MaxAbsDiff(finished_[202].embedding, alone[Pooling::kLast]), 2e-5);
  EXPECT_LT(MaxAbsDiff(finished_[203].embedding, alone[Pooling::kCls]), 2e-5);
}

TEST(PoolingTest, AccumulatesChunksAndNormalizes) {
  // rows of width 2 for positions 0..3: (1,0) (3,0) (0,4) (0,0)
  const float rows[] = {1, 0, 3, 0, 0, 4, 0, 0};
  PoolingAccumulator mean(Pooling::kMean, 2);
  mean.Add(0, 1, rows);
  mean.Add(1, 3, rows + 2);
  EXPECT_EQ(mean.Finish(4, false), (std::vector<float>{1.0f, 1.0f}));
  PoolingAccumulator cls(Pooling::kCls, 2);
  cls.Add(0, 2, rows);
  cls.Add(2, 2, rows + 4);
  EXPECT_EQ(cls.Finish(4, false), (std::vector<float>{1.0f, 0.0f}));
  PoolingAccumulator last(Pooling::kLast, 2);
  last.Add(0, 3, rows);
  EXPECT_EQ(last.Finish(3, true), (std::vector<float>{0.0f, 1.0f}));
  PoolingAccumulator mixed(Pooling::kMean, 2);  // positions 1..3: mean (1, 4/3)
  mixed.Add(0, 2, rows + 2);
  mixed.Add(2, 1, rows + 6);
  const std::vector<float> unit = mixed.Finish(3, true);
  ASSERT_EQ(unit.size(), 2u);
  EXPECT_NEAR(unit[0], 0.6f, 1e-6f);
  EXPECT_NEAR(unit[1], 0.8f, 1e-6f);
  EXPECT_FALSE(ParsePooling("rank").ok());
  EXPECT_EQ(*PoolingFromGguf(3), Pooling::kLast);
  EXPECT_FALSE(PoolingFromGguf(4).ok());
}

}  // namespace
}  // namespace radixlm
