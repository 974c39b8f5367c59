// LoRA adapters over a tiny base: loading and its refusals, the forward against the plain
// reference on the merged weights (W + scale * B A), and batch invariance across adapter mixes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "gguf/gguf_writer.h"
#include "lora_fixture.h"
#include "model/lora_adapter.h"
#include "model/lora_pool.h"
#include "model/model.h"
#include "reference_model.h"
#include "tiny_model.h"

namespace radixlm::model {
namespace {

using gguf::GgmlType;
using testing::BuildLoraAdapter;
using testing::BuildTinyModel;
using testing::LoraSpec;
using testing::MergeLoraIntoBase;
using testing::ParseTinyModel;
using testing::ReferenceModel;
using testing::TinyModelSpec;

class LoraTest : public ::testing::Test {
 protected:
  static constexpr int64_t kSlots = 512;

  void SetUpBase(const TinyModelSpec& spec) {
    base_bytes_ = BuildTinyModel(spec);
    ModelOptions options;
    options.n_threads = 2;
    options.max_batch_tokens = 128;
    auto model = Model::FromGguf(ParseTinyModel(base_bytes_), options);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(model).value();
    auto cache = model_->CreateKvCache({.n_slots = kSlots});
    ASSERT_TRUE(cache.ok());
    cache_ = std::move(cache).value();
    next_slot_ = 0;
  }

  StatusOr<std::unique_ptr<LoraAdapter>> LoadAdapter(const std::vector<uint8_t>& bytes,
                                                     const LoraLoadOptions& options = {}) {
    return LoraAdapter::FromGguf(ParseTinyModel(bytes), model_->config(), model_->weights(),
                                 options);
  }

  std::unique_ptr<LoraAdapter> Adapter(const LoraSpec& spec) {
    adapter_bytes_.push_back(BuildLoraAdapter(model_->gguf(), spec));
    auto a = LoadAdapter(adapter_bytes_.back());
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return a.ok() ? std::move(a).value() : nullptr;
  }

  std::vector<int32_t> Slots(size_t n) {
    std::vector<int32_t> s(n);
    std::iota(s.begin(), s.end(), next_slot_);
    next_slot_ += static_cast<int32_t>(n);
    return s;
  }

  std::vector<int32_t> Tokens(size_t n, uint32_t seed) const {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int32_t> dist(
        0, static_cast<int32_t>(model_->config().vocab_size - 1));
    std::vector<int32_t> t(n);
    for (int32_t& x : t) x = dist(rng);
    return t;
  }

  // One prompt prefilled (every row's logits) and then `decode` greedy steps, each sequence
  // under its own adapter, all sequences together in each forward. Returns per sequence its
  // prompt's rows then one row per decode step.
  // With a pool, each forward is prepared by it first (as ModelBackedRunner does).
  std::vector<std::vector<std::vector<float>>> Run(const std::vector<std::vector<int32_t>>& prompts,
                                                   const std::vector<const LoraAdapter*>& adapters,
                                                   int decode, LoraPool* pool = nullptr) {
    const size_t n = prompts.size();
    std::vector<std::vector<std::vector<float>>> rows(n);
    std::vector<std::vector<int32_t>> slots(n);
    std::vector<std::vector<int32_t>> new_slots(n);
    std::vector<std::vector<int32_t>> next(n);
    ForwardBatch batch;
    for (size_t i = 0; i < n; ++i) {
      new_slots[i] = Slots(prompts[i].size());
      batch.sequences.push_back({prompts[i], new_slots[i], {}, LogitsMode::kAll});
      batch.sequences.back().lora = adapters[i];
    }
    for (int step = 0; step <= decode; ++step) {
      ForwardOutput out;
      if (pool != nullptr) pool->Prepare(batch);
      Status st = model_->Forward(batch, *cache_, &out);
      EXPECT_TRUE(st.ok()) << st.ToString();
      if (!st.ok()) return rows;
      for (size_t i = 0; i < n; ++i) {
        for (int64_t r = 0; r < out.row_count[i]; ++r) {
          rows[i].emplace_back(out.Row(i, r), out.Row(i, r) + out.vocab_size);
        }
        const std::vector<float>& last = rows[i].back();
        slots[i].insert(slots[i].end(), new_slots[i].begin(), new_slots[i].end());
        next[i] = {static_cast<int32_t>(std::max_element(last.begin(), last.end()) - last.begin())};
        new_slots[i] = Slots(1);
      }
      batch.sequences.clear();
      for (size_t i = 0; i < n; ++i) {
        batch.sequences.push_back({next[i], new_slots[i], slots[i], LogitsMode::kLast});
        batch.sequences.back().lora = adapters[i];
      }
    }
    return rows;
  }

  static float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
    float d = 0.0f;
    for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
    return d;
  }
  static float MaxAbs(const std::vector<float>& a) {
    float m = 1.0f;
    for (float x : a) m = std::max(m, std::fabs(x));
    return m;
  }

  std::vector<uint8_t> base_bytes_;
  std::vector<std::vector<uint8_t>> adapter_bytes_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<KvCache> cache_;
  int32_t next_slot_ = 0;
};

// The forward with an adapter equals the reference forward of the merged weights, for an
// F32 and an F16 adapter on gemma3 (q_size != hidden) and llama; without it, the base's.
TEST_F(LoraTest, ForwardEqualsTheMergedReference) {
  TinyModelSpec llama;
  for (const TinyModelSpec& spec : {testing::TinyGemma3Spec(), llama}) {
    for (GgmlType type : {GgmlType::kF32, GgmlType::kF16}) {
      SCOPED_TRACE(spec.arch + " " + std::string(gguf::GgmlTypeName(type)));
      SetUpBase(spec);
      LoraSpec ls;
      ls.type = type;
      ls.rank = 8;
      adapter_bytes_.push_back(BuildLoraAdapter(model_->gguf(), ls));
      const std::vector<uint8_t>& adapter_bytes = adapter_bytes_.back();
      auto adapter = LoadAdapter(adapter_bytes);
      ASSERT_TRUE(adapter.ok()) << adapter.status().ToString();
      EXPECT_EQ((*adapter)->n_matrices(), 7 * model_->config().n_layers);
      EXPECT_EQ((*adapter)->max_rank(), 8);
      // The merged model: F16 adapter values as the file holds them.
      const std::vector<uint8_t> merged =
          MergeLoraIntoBase(model_->gguf(), *ParseTinyModel(adapter_bytes));
      auto merged_file = ParseTinyModel(merged);
      ReferenceModel with(*merged_file, kernels::KvDtype::kF16);
      ReferenceModel without(model_->gguf(), kernels::KvDtype::kF16);

      const auto prompt = Tokens(9, 3);
      const auto got = Run({prompt}, {adapter->get()}, 0)[0];
      const auto base = Run({prompt}, {nullptr}, 0)[0];
      const auto want = with.Forward(prompt);
      const auto want_base = without.Forward(prompt);
      ASSERT_EQ(got.size(), prompt.size());
      float adapter_effect = 0.0f;
      for (size_t t = 0; t < prompt.size(); ++t) {
        EXPECT_LE(MaxAbsDiff(got[t], want[t]), 3e-4f * MaxAbs(want[t])) << "position " << t;
        EXPECT_LE(MaxAbsDiff(base[t], want_base[t]), 3e-4f * MaxAbs(want_base[t]));
        adapter_effect = std::max(adapter_effect, MaxAbsDiff(got[t], base[t]) / MaxAbs(base[t]));
      }
      EXPECT_GT(adapter_effect, 1e-2f) << "the adapter barely changes the logits";
    }
  }
}

// Q8_0 adapters (rank and widths multiples of 32) are read as their dequantized values.
TEST_F(LoraTest, Q8_0AdapterEqualsTheMergedReference) {
  TinyModelSpec spec;
  SetUpBase(spec);
  LoraSpec ls;
  ls.type = GgmlType::kQ8_0;
  ls.rank = 32;
  ls.targets = {"attn_q", "attn_v", "ffn_up"};  // widths 64, 32 and 128 out of hidden 64
  adapter_bytes_.push_back(BuildLoraAdapter(model_->gguf(), ls));
  auto adapter = LoadAdapter(adapter_bytes_.back());
  ASSERT_TRUE(adapter.ok()) << adapter.status().ToString();
  const auto merged = MergeLoraIntoBase(model_->gguf(), *ParseTinyModel(adapter_bytes_.back()));
  auto merged_file = ParseTinyModel(merged);
  ReferenceModel with(*merged_file, kernels::KvDtype::kF16);
  const auto prompt = Tokens(7, 5);
  const auto got = Run({prompt}, {adapter->get()}, 0)[0];
  const auto want = with.Forward(prompt);
  for (size_t t = 0; t < prompt.size(); ++t) {
    EXPECT_LE(MaxAbsDiff(got[t], want[t]), 3e-4f * MaxAbs(want[t])) << "position " << t;
  }
}

// Rows of four adapters and the base in one batch (prefill, then decode steps; the adapters
// in runs and interleaved) get bit for bit what each gets alone.
TEST_F(LoraTest, BatchMixingAdaptersIsBitIdenticalToEachAlone) {
  SetUpBase(testing::TinyGemma3Spec());
  std::vector<std::unique_ptr<LoraAdapter>> adapters;
  for (uint32_t i = 0; i < 4; ++i) {
    LoraSpec ls;
    ls.seed = 100 + i;
    ls.rank = i % 2 == 0 ? 8 : 16;
    ls.type = i == 3 ? GgmlType::kF16 : GgmlType::kF32;
    if (i == 2) ls.targets = {"attn_v", "ffn_down"};
    adapters.push_back(Adapter(ls));
    ASSERT_NE(adapters.back(), nullptr);
  }
  const LoraAdapter* a[4] = {adapters[0].get(), adapters[1].get(), adapters[2].get(),
                             adapters[3].get()};
  std::vector<std::vector<int32_t>> prompts;
  std::vector<const LoraAdapter*> mix = {a[0], nullptr, a[1], a[0], a[2], a[3], nullptr, a[3]};
  for (size_t i = 0; i < mix.size(); ++i) prompts.push_back(Tokens(3 + i, 40 + i % 3));
  const auto together = Run(prompts, mix, 3);
  for (size_t i = 0; i < mix.size(); ++i) {
    const auto alone = Run({prompts[i]}, {mix[i]}, 3)[0];
    ASSERT_EQ(alone.size(), together[i].size());
    for (size_t r = 0; r < alone.size(); ++r) {
      ASSERT_EQ(alone[r], together[i][r]) << "sequence " << i << " row " << r;
    }
  }
  // And the adapters do differ from each other and from the base on the same prompt.
  const auto p = prompts[0];
  const auto base = Run({p}, {nullptr}, 0)[0].back();
  for (const LoraAdapter* x : a) {
    EXPECT_NE(Run({p}, {x}, 0)[0].back(), base);
  }
}

TEST_F(LoraTest, RefusesAdaptersThatDoNotFitTheBase) {
  SetUpBase(TinyModelSpec{});
  auto expect_error = [&](const std::vector<uint8_t>& bytes, const std::string& needle,
                          const LoraLoadOptions& options = {}) {
    auto a = LoadAdapter(bytes, options);
    ASSERT_FALSE(a.ok()) << needle;
    EXPECT_NE(a.status().message().find(needle), std::string::npos) << a.status().ToString();
  };
  LoraSpec ls;
  ls.arch = "gemma3";
  expect_error(BuildLoraAdapter(model_->gguf(), ls), "base model is 'llama'");

  ls = {};
  ls.rank = 16;
  LoraLoadOptions small;
  small.max_rank = 8;
  expect_error(BuildLoraAdapter(model_->gguf(), ls), "exceeds --max-lora-rank 8", small);

  LoraLoadOptions no_q;
  no_q.allowed_targets[static_cast<int>(LoraTarget::kQ)] = false;
  expect_error(BuildLoraAdapter(model_->gguf(), {}), "q_proj is not among", no_q);

  auto write = [](auto&& add) {
    gguf::GgufWriter w;
    w.AddMetadata("general.architecture", gguf::Value::Str("llama"));
    w.AddMetadata("general.type", gguf::Value::Str("adapter"));
    w.AddMetadata("adapter.type", gguf::Value::Str("lora"));
    add(w);
    return w.Serialize();
  };
  std::vector<float> zeros(64 * 4, 0.0f);
  // A shape of another model (in = 32, not hidden 64).
  expect_error(
      write([&](gguf::GgufWriter& w) {
        ASSERT_TRUE(
            w.AddF32Tensor("blk.0.attn_q.weight.lora_a", {32, 4}, std::vector<float>(128)).ok());
        ASSERT_TRUE(w.AddF32Tensor("blk.0.attn_q.weight.lora_b", {4, 64}, zeros).ok());
      }),
      "do not fit the base matrix");
  expect_error(write([&](gguf::GgufWriter& w) {
                 ASSERT_TRUE(w.AddF32Tensor("blk.0.attn_q.weight.lora_a", {64, 4}, zeros).ok());
               }),
               "only one of lora_a and lora_b");
  expect_error(
      write([&](gguf::GgufWriter& w) {
        ASSERT_TRUE(w.AddF32Tensor("token_embd.weight.lora_a", {64, 4}, zeros).ok());
        ASSERT_TRUE(
            w.AddF32Tensor("token_embd.weight.lora_b", {4, 100}, std::vector<float>(400)).ok());
      }),
      "'token_embd.weight': LoRA is applied to");
  expect_error(write([&](gguf::GgufWriter& w) {
                 ASSERT_TRUE(w.AddF32Tensor("blk.7.attn_q.weight.lora_a", {64, 4}, zeros).ok());
                 ASSERT_TRUE(w.AddF32Tensor("blk.7.attn_q.weight.lora_b", {4, 64}, zeros).ok());
               }),
               "layer 7 but the base model has 2");
  expect_error(write([](gguf::GgufWriter&) {}), "no lora_a / lora_b tensors");
  // A model file is not an adapter.
  expect_error(base_bytes_, "general.type is");
}

// Fused QKV / gate-up (phi3) and experts are refused by name, never silently ignored.
TEST_F(LoraTest, RefusesMatricesTheForwardDoesNotAdapt) {
  SetUpBase(testing::TinyPhi3Spec());
  LoraSpec ls;
  ls.targets = {"attn_output"};
  EXPECT_TRUE(LoadAdapter(BuildLoraAdapter(model_->gguf(), ls)).ok());
  ls.targets = {"ffn_up"};
  auto a = LoadAdapter(BuildLoraAdapter(model_->gguf(), ls));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("fused gate-up"), std::string::npos) << a.status().ToString();
  // (The fixture adapts only matrices the base has: written by hand.)
  gguf::GgufWriter w;
  w.AddMetadata("general.architecture", gguf::Value::Str("phi3"));
  w.AddMetadata("general.type", gguf::Value::Str("adapter"));
  w.AddMetadata("adapter.type", gguf::Value::Str("lora"));
  ASSERT_TRUE(w.AddF32Tensor("blk.0.attn_q.weight.lora_a", {64, 4}, std::vector<float>(256)).ok());
  ASSERT_TRUE(w.AddF32Tensor("blk.0.attn_q.weight.lora_b", {4, 64}, std::vector<float>(256)).ok());
  a = LoadAdapter(w.Serialize());
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("fused attn_qkv"), std::string::npos)
      << a.status().ToString();
  SetUpBase(testing::TinyMixtralSpec());
  ls.targets = {"attn_q"};
  EXPECT_TRUE(LoadAdapter(BuildLoraAdapter(model_->gguf(), ls)).ok());
}

// Released (its converted matrices freed, its file's pages dropped) and made resident again, an
// adapter gives the same rows bit for bit; the checks made at load stay.
TEST_F(LoraTest, ReleasedAndResidentAgainGivesTheSameRows) {
  SetUpBase(testing::TinyGemma3Spec());
  LoraSpec q8;
  q8.rank = 32;
  q8.type = GgmlType::kQ8_0;
  q8.targets = {"ffn_up", "ffn_gate"};
  for (const LoraSpec& ls : {LoraSpec{}, q8}) {
    std::unique_ptr<LoraAdapter> a = Adapter(ls);
    ASSERT_NE(a, nullptr);
    ASSERT_TRUE(a->resident());
    const std::vector<int32_t> p = Tokens(6, 3);
    const auto before = Run({p}, {a.get()}, 2)[0];
    a->Release();
    EXPECT_FALSE(a->resident());
    EXPECT_NE(a->Get(0, ls.type == GgmlType::kQ8_0 ? LoraTarget::kUp : LoraTarget::kQ), nullptr);
    a->MakeResident();
    EXPECT_EQ(Run({p}, {a.get()}, 2)[0], before);
  }
}

// identity() is the adapter's content: the same bytes loaded twice (as after a restart) share
// it; other weights, another alpha or another target set each change it; it is never 0 (the
// base model's).
TEST_F(LoraTest, IdentityIsTheAdaptersContent) {
  SetUpBase(TinyModelSpec{});
  LoraSpec other_seed;
  other_seed.seed = 8;
  LoraSpec other_alpha;
  other_alpha.alpha = 16.0f;
  LoraSpec fewer_targets;
  fewer_targets.targets = {"attn_q", "attn_v"};
  std::vector<uint64_t> ids;
  for (const LoraSpec& ls : {LoraSpec{}, other_seed, other_alpha, fewer_targets}) {
    std::unique_ptr<LoraAdapter> a = Adapter(ls);
    ASSERT_NE(a, nullptr);
    EXPECT_NE(a->identity(), 0u);
    ids.push_back(a->identity());
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    for (size_t j = i + 1; j < ids.size(); ++j) EXPECT_NE(ids[i], ids[j]) << i << " " << j;
  }
  auto again = LoadAdapter(adapter_bytes_.front());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->identity(), ids.front());
  (*again)->Release();  // residency is not content
  EXPECT_EQ((*again)->identity(), ids.front());
}

// --max-loras-per-batch adapters stay resident: a pass needing another releases the least
// recently used one outside its batch, and a released adapter's next pass brings it back with
// the same rows. A batch needing more adapters than the capacity keeps them all for the pass.
TEST_F(LoraTest, PoolReleasesTheLeastRecentlyUsedAdapter) {
  SetUpBase(testing::TinyGemma3Spec());
  std::vector<std::shared_ptr<const LoraAdapter>> owned;
  for (uint32_t i = 0; i < 3; ++i) {
    LoraSpec ls;
    ls.seed = 300 + i;
    owned.emplace_back(Adapter(ls));
    ASSERT_NE(owned.back(), nullptr);
    owned.back()->Release();  // as the registry holds a loaded adapter
  }
  const LoraAdapter* a = owned[0].get();
  const LoraAdapter* b = owned[1].get();
  const LoraAdapter* c = owned[2].get();
  LoraPool pool;
  pool.set_capacity(2);
  const std::vector<int32_t> p = Tokens(5, 9);
  const auto rows_a = Run({p}, {a}, 1, &pool)[0];
  const auto rows_b = Run({p}, {b}, 1, &pool)[0];
  EXPECT_TRUE(a->resident() && b->resident());
  EXPECT_EQ(Run({p}, {a}, 1, &pool)[0], rows_a);  // a is now the more recent
  Run({p}, {c}, 1, &pool);
  EXPECT_TRUE(a->resident());
  EXPECT_FALSE(b->resident());
  EXPECT_TRUE(c->resident());
  EXPECT_EQ(pool.resident_count(), 2);
  EXPECT_EQ(pool.releases(), 1);
  EXPECT_EQ(Run({p}, {b}, 1, &pool)[0], rows_b);  // back from its file; a was least recent
  EXPECT_FALSE(a->resident());
  EXPECT_EQ(pool.resident_bytes(), b->bytes() + c->bytes());

  pool.set_capacity(1);
  const auto together = Run({p, p}, {a, c}, 0, &pool);
  EXPECT_TRUE(a->resident() && c->resident());
  EXPECT_EQ(together[0].back(), rows_a[p.size() - 1]);
  Run({p}, {c}, 0, &pool);  // the next pass trims to the capacity
  EXPECT_EQ(pool.resident_count(), 1);
  EXPECT_TRUE(c->resident());

  // An adapter gone (unloaded, its last request finished) leaves the pool.
  owned[2].reset();
  Run({p}, {nullptr}, 0, &pool);
  EXPECT_EQ(pool.resident_count(), 0);
}

}  // namespace
}  // namespace radixlm::model
