// The gemma4v, qwen2.5vl_merger and qwen3vl_merger projectors against llama.cpp's libmtmd on the
// files of tests/vision/testdata, each a tiny projector (random weights, F16 matrices) and two PNG
// pictures with llama.cpp's embeddings of them and its token counts for more image sizes in
// <type>_golden.json, written by
//   python bench/vision_oracle.py --type <type> --golden tests/vision/testdata
// (llama.cpp decodes the PNGs itself; never edit the values by hand).
//   gemma4v: 2 layers, width 32, patch 4, pooling 2, 48 positions, clamp scalars on every
//     linear, std_bias / std_scale, output 256; 80x64 (10 x 8 tokens, not resized) and 45x29
//     (scaled up past the 70-token minimum to 88x56: 11 x 7 tokens).
//   qwen25vl: patch 8, one windowed and one full layer, llama.cpp's 112-pixel windows; 120x70
//     (resized to 128x64: 8 x 4 tokens, two windows across) and 20x20 (scaled up past the
//     8-token minimum to 48x48: 3 x 3 tokens).
//   qwen3vl: patch 8, three layers with deepstack mergers after the first two, 16 learned
//     positions (4 x 4, resized to each grid), output 64 per slice (rows of 192); the same two
//     sizes (resized to 128x64 and 48x48).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vision/image.h"
#include "vision/projector.h"

namespace radixlm::vision::projector_golden_test {
namespace {

std::string TestData(const std::string& name) {
  return std::string(RADIXLM_SOURCE_DIR) + "/tests/vision/testdata/" + name;
}

class ProjectorGoldenTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::ifstream in(TestData(GetParam() + "_golden.json"));
    ASSERT_TRUE(in.good()) << "run bench/vision_oracle.py --type " << GetParam()
                           << " --golden tests/vision/testdata";
    golden_ = nlohmann::json::parse(in);
    auto projector = Projector::Load(TestData(golden_.at("projector")), {.n_threads = 2});
    ASSERT_TRUE(projector.ok()) << projector.status().ToString();
    projector_ = std::move(*projector);
  }

  nlohmann::json golden_;
  std::unique_ptr<Projector> projector_;
};

TEST_P(ProjectorGoldenTest, EmbeddingsMatchLlamaCpp) {
  int checked = 0;
  for (const nlohmann::json& g : golden_.at("images")) {
    const std::string file = g.at("file");
    std::ifstream f(TestData(file), std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), {});
    auto image = DecodeImage(bytes);
    ASSERT_TRUE(image.ok()) << file << ": " << image.status().ToString();
    std::vector<float> got;
    ASSERT_TRUE(projector_->Encode(*image, &got).ok());
    const auto want = g.at("embeddings").get<std::vector<float>>();
    EXPECT_EQ(projector_->TokensFor(*image), g.at("n_tokens").get<int64_t>()) << file;
    EXPECT_EQ(projector_->n_embd(), g.at("n_embd").get<int64_t>());
    ASSERT_EQ(got.size(), want.size()) << file;
    const int64_t n_embd = projector_->n_embd();
    double dot = 0, ng = 0, nw = 0, worst_token = 1.0;
    for (size_t t = 0; t * n_embd < got.size(); ++t) {
      double td = 0, tg = 0, tw = 0;
      for (int64_t i = 0; i < n_embd; ++i) {
        const double a = got[t * n_embd + i], b = want[t * n_embd + i];
        td += a * b;
        tg += a * a;
        tw += b * b;
      }
      dot += td;
      ng += tg;
      nw += tw;
      worst_token = std::min(worst_token, td / std::sqrt(tg * tw));
    }
    const double cosine = dot / std::sqrt(ng * nw);
    EXPECT_GT(cosine, 0.9999) << file;
    EXPECT_GT(worst_token, 0.9999) << file;
    std::printf("%s: cosine %.7f, worst token %.7f\n", file.c_str(), cosine, worst_token);
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

TEST_P(ProjectorGoldenTest, TokenCountsMatchLlamaCpp) {
  int checked = 0;
  for (const nlohmann::json& c : golden_.at("token_counts")) {
    const Image image{
        .width = c.at("width").get<int>(), .height = c.at("height").get<int>(), .rgb = {}};
    EXPECT_EQ(projector_->TokensFor(image), c.at("n_tokens").get<int64_t>())
        << image.width << "x" << image.height;
    ++checked;
  }
  EXPECT_GE(checked, 8);
}

INSTANTIATE_TEST_SUITE_P(Types, ProjectorGoldenTest,
                         ::testing::Values("gemma4v", "qwen25vl", "qwen3vl"));

}  // namespace
}  // namespace radixlm::vision::projector_golden_test
