// What a loaded model holds: the packed matrices' pages of the mapping are released (a file
// opened with Open, never a buffer image) and the forward pass still gives the same logits;
// resident bytes by kind; the load's progress updates.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/packed_weights.h"
#include "model/model.h"
#include "support/mapping_rss.h"
#include "tiny_model.h"

namespace radixlm::model {
namespace {

using gguf::GgmlType;
using testing::BuildTinyModel;
using testing::ParseTinyModel;
using testing::TinyModelSpec;

// Matrices of a few pages each, so that releasing them drops whole pages.
TinyModelSpec PagesSpec() {
  TinyModelSpec spec;
  spec.hidden = 256;
  spec.ffn = 512;
  spec.head_dim = 64;
  spec.vocab = 1000;
  spec.matrix_type = GgmlType::kQ8_0;
  return spec;
}

// GGUF bytes of the matrices the forward pass multiplies by (the output head and every
// layer's projections; token_embd is the output head when tied).
int64_t MatrixBytes(const ModelWeights& w) {
  auto bytes = [](const kernels::WeightMatrix& m) {
    return static_cast<int64_t>(m.row_bytes) * m.rows;
  };
  int64_t total = bytes(w.output);
  for (const LayerWeights& l : w.layers) {
    for (const kernels::WeightMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down}) {
      total += bytes(*m);
    }
  }
  return total;
}

class ModelMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bytes_ = BuildTinyModel(PagesSpec());
    path_ = (std::filesystem::temp_directory_path() /
             ("radixlm_model_memory_" + std::to_string(::getpid()) + ".gguf"))
                .string();
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes_.data()),
               static_cast<std::streamsize>(bytes_.size()));
  }
  void TearDown() override { std::filesystem::remove(path_); }

  static std::vector<float> Logits(Model& model, const std::vector<int32_t>& tokens) {
    auto cache = model.CreateKvCache({.n_slots = 64});
    EXPECT_TRUE(cache.ok());
    std::vector<int32_t> slots(tokens.size());
    for (size_t i = 0; i < slots.size(); ++i) slots[i] = static_cast<int32_t>(i);
    ForwardBatch batch;
    batch.sequences.push_back({tokens, slots, {}, LogitsMode::kAll});
    ForwardOutput out;
    EXPECT_TRUE(model.Forward(batch, **cache, &out).ok());
    return out.logits;
  }

  std::vector<uint8_t> bytes_;
  std::string path_;
  ModelOptions options_{.n_threads = 2, .max_batch_tokens = 32};
};

TEST_F(ModelMemoryTest, PackedMatricesReleaseTheirPagesAndComputeTheSame) {
  auto mapped = Model::Load(path_, options_);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  auto image = Model::FromGguf(ParseTinyModel(bytes_), options_);
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  const ModelWeights& w = (*mapped)->weights();
  // Only a mapped file's pages are released, and only where matrices were packed.
  EXPECT_EQ((*image)->weights().released_bytes(), 0);
  if (kernels::PackedGemmAvailable()) {
    EXPECT_GT(w.released_bytes(), 0);
    EXPECT_LE(w.released_bytes(), MatrixBytes(w));
  } else {
    EXPECT_EQ(w.released_bytes(), 0);
  }
  // The tied embedding table's pages went with the output head packed from them: embedding
  // lookups read its rows from the file, so the mapping keeps what it held after the load.
  // Same logits as the buffer image, bit for bit.
  EXPECT_EQ(w.embed_reads_file, kernels::PackedGemmAvailable());
  EXPECT_FALSE((*image)->weights().embed_reads_file);
  const int64_t rss_loaded = ::radixlm::testing::MappingRssBytes(w.token_embd.data);
  const std::vector<int32_t> tokens = {1, 500, 999, 7, 42, 500};
  EXPECT_EQ(Logits(**mapped, tokens), Logits(**image, tokens));
  for (int32_t first = 0; first < 1000; first += 25) {  // every row of the table, once
    std::vector<int32_t> rows(25);
    for (int32_t i = 0; i < 25; ++i) rows[i] = first + i;
    EXPECT_EQ(Logits(**mapped, rows), Logits(**image, rows)) << first;
  }
  if (rss_loaded >= 0 && w.embed_reads_file) {
    EXPECT_EQ(::radixlm::testing::MappingRssBytes(w.token_embd.data), rss_loaded);
  }
}

TEST_F(ModelMemoryTest, ResidentBytesByKind) {
  auto model = Model::Load(path_, options_);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const ModelWeights& w = (*model)->weights();
  const int64_t matrices = MatrixBytes(w);
  // Packed copies are the GGUF's size give or take scales and padding to 16-row groups; the
  // norm vectors add a little.
  EXPECT_GT((*model)->weights_bytes(), matrices * 9 / 10);
  EXPECT_LT((*model)->weights_bytes(), matrices * 2);
  EXPECT_EQ((*model)->weights_bytes(), w.resident_bytes());
  const ModelConfig& c = (*model)->config();
  // x, xn, proj (hidden), q and attn (q_size), k and v (kv_size), gate and up (ffn), and a
  // cos and sin table per RoPE variant.
  const int64_t per_token =
      3 * c.hidden_size + 2 * c.q_size() + 2 * c.kv_size() + 2 * c.ffn_size + c.head_dim;
  EXPECT_EQ((*model)->scratch_bytes() % (options_.max_batch_tokens * 4), 0);
  EXPECT_GE((*model)->scratch_bytes(), options_.max_batch_tokens * per_token * 4);
}

TEST_F(ModelMemoryTest, ProgressHearsEveryMatrixThenDone) {
  auto file = gguf::GgufFile::Open(path_);
  ASSERT_TRUE(file.ok());
  auto config = ModelConfig::FromGguf(**file);
  ASSERT_TRUE(config.ok());
  std::vector<LoadProgress> updates;
  auto w = ModelWeights::Load(**file, *config, kernels::CpuBackend(), nullptr,
                              [&](const LoadProgress& p) { updates.push_back(p); });
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const int64_t layers = config->n_layers;
  ASSERT_EQ(updates.size(), static_cast<size_t>(1 + 7 * layers + 1));  // output, layers, done
  for (size_t i = 1; i < updates.size(); ++i) {
    EXPECT_GE(updates[i].bytes_done, updates[i - 1].bytes_done);
    EXPECT_GE(updates[i].layers_done, updates[i - 1].layers_done);
    EXPECT_GE(updates[i].elapsed_s, updates[i - 1].elapsed_s);
  }
  EXPECT_EQ(updates[7].layers_done, 1);  // the first layer's seventh matrix completes it
  EXPECT_EQ(updates[6].layers_done, 0);
  const LoadProgress& last = updates.back();
  EXPECT_TRUE(last.done);
  EXPECT_EQ(last.layers_done, layers);
  EXPECT_EQ(last.layers_total, layers);
  EXPECT_EQ(last.bytes_done, last.bytes_total);
  EXPECT_EQ(last.bytes_total, MatrixBytes(**w));
}

}  // namespace
}  // namespace radixlm::model
