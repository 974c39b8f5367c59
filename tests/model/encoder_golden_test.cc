// EncoderModel + the WordPiece tokenizer + pooling against llama.cpp's llama-embedding on the
// tiny bert / nomic-bert GGUFs of tests/model/testdata (random weights, bge's vocabulary cut):
// the vectors in encoder_embeddings_golden.json are llama-embedding's, mean and CLS pooling,
// L2-normalised, written by testdata/make_encoder_golden.py (the command in its docstring;
// never edit them by hand).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "model/encoder/encoder_model.h"
#include "sampling/pooling.h"
#include "tokenizer/tokenizer.h"

namespace radixlm::model {
namespace {

std::string TestData(const std::string& name) {
  return std::string(RADIXLM_SOURCE_DIR) + "/tests/model/testdata/" + name;
}

TEST(EncoderGoldenTest, MatchesLlamaEmbedding) {
  std::ifstream in(TestData("encoder_embeddings_golden.json"));
  ASSERT_TRUE(in.good()) << "run tests/model/testdata/make_encoder_golden.py";
  const nlohmann::json golden = nlohmann::json::parse(in);
  const auto texts = golden.at("texts").get<std::vector<std::string>>();
  int checked = 0;
  double min_cos = 1.0, worst = 0.0;
  for (const auto& [name, by_pooling] : golden.at("models").items()) {
    auto file = gguf::GgufFile::Open(TestData(name));
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    auto tok = tokenizer::Tokenizer::FromGguf(**file);
    ASSERT_TRUE(tok.ok()) << tok.status().ToString();
    auto model = EncoderModel::FromGguf(std::move(*file), {.n_threads = 2});
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    const int64_t h = (*model)->config().hidden_size;
    std::vector<std::vector<int32_t>> ids;
    std::vector<std::span<const int32_t>> seqs;
    for (const std::string& t : texts) ids.push_back((*tok)->Encode(t, true, false));
    for (const auto& v : ids) seqs.emplace_back(v);
    std::vector<float> hidden;
    ASSERT_TRUE((*model)->Forward(seqs, &hidden).ok());
    for (const auto& [pooling_name, vectors] : by_pooling.items()) {
      const Pooling pooling = *ParsePooling(pooling_name);
      int64_t row = 0;
      for (size_t i = 0; i < texts.size(); ++i) {
        const auto n = static_cast<int64_t>(ids[i].size());
        PoolingAccumulator acc(pooling, h);
        acc.Add(0, n, hidden.data() + row * h);
        row += n;
        const std::vector<float> got = acc.Finish(n, /*normalize=*/true);
        const auto want = vectors.at(i).get<std::vector<float>>();
        ASSERT_EQ(got.size(), want.size());
        double dot = 0, max_diff = 0;
        for (int64_t k = 0; k < h; ++k) {
          dot += double(got[k]) * want[k];
          max_diff = std::max(max_diff, double(std::abs(got[k] - want[k])));
        }
        EXPECT_GT(dot, 0.99999) << name << " " << pooling_name << " \"" << texts[i] << "\"";
        EXPECT_LT(max_diff, 1e-3) << name << " " << pooling_name << " \"" << texts[i] << "\"";
        min_cos = std::min(min_cos, dot);
        worst = std::max(worst, max_diff);
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 2 * 2 * static_cast<int>(texts.size()));
  std::printf("min cosine %.7f, max |difference| %.2e over %d vectors\n", min_cos, worst, checked);
}

}  // namespace
}  // namespace radixlm::model
