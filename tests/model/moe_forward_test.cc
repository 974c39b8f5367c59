// The mixture-of-experts FFN beyond its agreement with the float reference (checked in
// model_forward_test.cc): batch invariance. A row's experts and weights depend on that row
// alone and its experts' outputs are summed in a fixed order, so its logits are bit-identical
// whether it is decoded alone or beside other sequences and prefills, and whether a prompt is
// prefilled in one call or in chunks (its expert GEMMs then hold other rows, or fewer). And
// the memory rule for experts: packed one by one, at their GGUF bytes, one copy.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <string>

#include "kernels/packed_weights.h"
#include "model/model.h"
#include "tiny_model.h"

namespace radixlm::model {
namespace {

using gguf::GgmlType;
using testing::BuildTinyModel;
using testing::ParseTinyModel;
using testing::TinyMixtralSpec;
using testing::TinyModelSpec;
using testing::TinyQwen3MoeSpec;

struct MoeCase {
  std::string name;
  TinyModelSpec spec;
};

std::vector<MoeCase> MoeCases() {
  std::vector<MoeCase> cases = {{"qwen3moe_f32", TinyQwen3MoeSpec()},
                                {"mixtral_f32", TinyMixtralSpec()}};
  MoeCase q8{"qwen3moe_q8_0", TinyQwen3MoeSpec()};
  q8.spec.matrix_type = GgmlType::kQ8_0;
  cases.push_back(q8);
  return cases;
}

class MoeForwardTest : public ::testing::TestWithParam<MoeCase> {
 protected:
  static constexpr int64_t kSlots = 512;

  void SetUp() override {
    bytes_ = BuildTinyModel(GetParam().spec);
    auto model = Model::FromGguf(ParseTinyModel(bytes_), {.n_threads = 2, .max_batch_tokens = 96});
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(model).value();
    ASSERT_GT(model_->config().n_experts, 0);
  }

  std::unique_ptr<KvCache> NewCache() {
    auto cache = model_->CreateKvCache({.n_slots = kSlots});
    EXPECT_TRUE(cache.ok());
    return std::move(cache).value();
  }

  std::vector<int32_t> RandomTokens(size_t n) {
    std::uniform_int_distribution<int32_t> dist(0, static_cast<int32_t>(GetParam().spec.vocab - 1));
    std::vector<int32_t> t(n);
    for (int32_t& x : t) x = dist(rng_);
    return t;
  }

  static std::vector<int32_t> Range(int32_t first, size_t n) {
    std::vector<int32_t> out(n);
    std::iota(out.begin(), out.end(), first);
    return out;
  }

  // Runs `batch`; returns each sequence's logits rows.
  std::vector<std::vector<std::vector<float>>> Run(const ForwardBatch& batch, KvCache& cache) {
    ForwardOutput out;
    const Status st = model_->Forward(batch, cache, &out);
    EXPECT_TRUE(st.ok()) << st.ToString();
    std::vector<std::vector<std::vector<float>>> rows(batch.sequences.size());
    if (!st.ok()) return rows;
    for (size_t s = 0; s < batch.sequences.size(); ++s) {
      for (int64_t r = 0; r < out.row_count[s]; ++r) {
        const float* p = out.Row(s, r);
        rows[s].emplace_back(p, p + out.vocab_size);
      }
    }
    return rows;
  }

  std::vector<uint8_t> bytes_;
  std::unique_ptr<Model> model_;
  std::mt19937 rng_{99};
};

TEST_P(MoeForwardTest, DecodedRowIsBitIdenticalAloneAndInABatch) {
  // Four sequences with cached prompts; sequence 0's next token decoded alone, then again in a
  // batch with the other three's decodes and a 40-token prefill (so its experts' GEMMs run
  // with many rows).
  const std::vector<size_t> prompt = {9, 14, 5, 21};
  std::vector<std::vector<int32_t>> tokens;
  for (size_t n : prompt) tokens.push_back(RandomTokens(n + 1));
  const auto fresh = RandomTokens(40);
  std::vector<std::vector<int32_t>> prefix_slots, next_slot;
  int32_t slot = 0;
  for (size_t i = 0; i < prompt.size(); ++i) {
    prefix_slots.push_back(Range(slot, prompt[i]));
    slot += static_cast<int32_t>(prompt[i]);
    next_slot.push_back({slot++});
  }
  const std::vector<int32_t> fresh_slots = Range(slot, fresh.size());
  auto prefill_all = [&](KvCache& cache) {
    for (size_t i = 0; i < prompt.size(); ++i) {
      ForwardBatch b;
      b.sequences.push_back({std::span<const int32_t>(tokens[i].data(), prompt[i]),
                             prefix_slots[i],
                             {},
                             LogitsMode::kNone});
      Run(b, cache);
    }
  };

  auto alone_cache = NewCache();
  prefill_all(*alone_cache);
  ForwardBatch alone;
  alone.sequences.push_back({std::span<const int32_t>(tokens[0].data() + prompt[0], 1),
                             next_slot[0], prefix_slots[0], LogitsMode::kLast});
  const auto want = Run(alone, *alone_cache);

  auto batch_cache = NewCache();
  prefill_all(*batch_cache);
  ForwardBatch batch;
  batch.sequences.push_back({fresh, fresh_slots, {}, LogitsMode::kAll});
  for (size_t i = prompt.size(); i-- > 0;) {  // sequence 0 last
    batch.sequences.push_back({std::span<const int32_t>(tokens[i].data() + prompt[i], 1),
                               next_slot[i], prefix_slots[i], LogitsMode::kLast});
  }
  const auto got = Run(batch, *batch_cache);
  ASSERT_EQ(got.size(), 5u);
  ASSERT_EQ(got.back().size(), 1u);
  ASSERT_EQ(want[0].size(), 1u);
  EXPECT_EQ(got.back()[0], want[0][0]);
}

TEST_P(MoeForwardTest, PrefillRowsAreBitIdenticalInOneCallOrInChunks) {
  const auto tokens = RandomTokens(45);
  const auto slots = Range(0, tokens.size());
  auto one_cache = NewCache();
  ForwardBatch one;
  one.sequences.push_back({tokens, slots, {}, LogitsMode::kAll});
  const auto want = Run(one, *one_cache);
  ASSERT_EQ(want[0].size(), tokens.size());

  auto chunk_cache = NewCache();
  for (size_t begin = 0; begin < tokens.size(); begin += 7) {
    const size_t len = std::min<size_t>(7, tokens.size() - begin);
    ForwardBatch chunk;
    chunk.sequences.push_back({std::span<const int32_t>(tokens.data() + begin, len),
                               std::span<const int32_t>(slots.data() + begin, len),
                               std::span<const int32_t>(slots.data(), begin), LogitsMode::kAll});
    const auto got = Run(chunk, *chunk_cache);
    ASSERT_EQ(got[0].size(), len);
    for (size_t i = 0; i < len; ++i) {
      EXPECT_EQ(got[0][i], want[0][begin + i]) << "position " << begin + i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Experts, MoeForwardTest, ::testing::ValuesIn(MoeCases()),
                         [](const ::testing::TestParamInfo<MoeCase>& info) {
                           return info.param.name;
                         });

// The memory rule for experts: each expert's matrices are packed on their own, to exactly their
// GGUF bytes (Q8_0, rows a multiple of 16), and the stacked tensors' pages of the mapping are
// released: one copy. The mapped model computes what the buffer image does.
TEST(MoeMemoryTest, ExpertsArePackedOnceAtTheirGgufBytes) {
  TinyModelSpec spec = TinyQwen3MoeSpec();
  spec.hidden = 256;
  spec.head_dim = 64;
  spec.expert_ffn = 256;
  spec.vocab = 1000;
  spec.matrix_type = GgmlType::kQ8_0;
  const std::vector<uint8_t> bytes = BuildTinyModel(spec);
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("radixlm_moe_memory_" + std::to_string(::getpid()) + ".gguf"))
                               .string();
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  const ModelOptions options{.n_threads = 2, .max_batch_tokens = 16};
  auto mapped = Model::Load(path, options);
  std::filesystem::remove(path);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  auto image = Model::FromGguf(ParseTinyModel(bytes), options);
  ASSERT_TRUE(image.ok()) << image.status().ToString();

  int64_t stacked_bytes = 0, packed_bytes = 0, n_stacked = 0;
  const ModelWeights& w = (*mapped)->weights();
  for (int64_t i = 0; i < (*mapped)->config().n_layers; ++i) {
    for (const char* name : {"ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"}) {
      const gguf::TensorInfo* t =
          (*mapped)->gguf().FindTensor("blk." + std::to_string(i) + "." + name + ".weight");
      ASSERT_NE(t, nullptr);
      stacked_bytes += static_cast<int64_t>(t->size_bytes);
      ++n_stacked;
    }
    const LayerWeights& l = w.layers[i];
    for (const auto* experts : {&l.gate_exps, &l.up_exps, &l.down_exps}) {
      for (const kernels::WeightMatrix& m : *experts) {
        if (m.packed == nullptr) continue;
        packed_bytes += static_cast<int64_t>(m.packed->group_bytes) * m.packed->groups;
      }
    }
  }
  if (kernels::PackedGemmAvailable()) {
    EXPECT_EQ(packed_bytes, stacked_bytes);
    // Whole stacked tensors released, but for the partial pages at their two ends.
    const auto page = static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
    EXPECT_GE(w.released_bytes(), stacked_bytes - 2 * page * n_stacked);
  } else {
    EXPECT_EQ(packed_bytes, 0);  // read in place from the mapping
  }

  const std::vector<int32_t> tokens = {1, 500, 999, 7, 42, 500};
  std::vector<int32_t> slots(tokens.size());
  std::iota(slots.begin(), slots.end(), 0);
  std::vector<std::vector<float>> logits;
  for (Model* model : {(*mapped).get(), (*image).get()}) {
    auto cache = model->CreateKvCache({.n_slots = 16});
    ASSERT_TRUE(cache.ok());
    ForwardBatch batch;
    batch.sequences.push_back({tokens, slots, {}, LogitsMode::kAll});
    ForwardOutput out;
    ASSERT_TRUE(model->Forward(batch, **cache, &out).ok());
    logits.push_back(out.logits);
  }
  EXPECT_EQ(logits[0], logits[1]);
}

}  // namespace
}  // namespace radixlm::model
