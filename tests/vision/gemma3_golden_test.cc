// The gemma3 projector against llama.cpp's libmtmd on the files of tests/vision/testdata: a
// tiny projector (random weights, F16 matrices) and two PNG pictures, one square at the
// projector's image size and one 45x29 (resized to fit and padded), with llama.cpp's
// embeddings of them in gemma3_golden.json, written by
//   python bench/vision_oracle.py --golden tests/vision/testdata
// (llama.cpp decodes the PNGs itself; never edit the values by hand).
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

namespace radixlm::vision {
namespace {

std::string TestData(const std::string& name) {
  return std::string(RADIXLM_SOURCE_DIR) + "/tests/vision/testdata/" + name;
}

TEST(Gemma3GoldenTest, MatchesLlamaCpp) {
  std::ifstream in(TestData("gemma3_golden.json"));
  ASSERT_TRUE(in.good()) << "run bench/vision_oracle.py --golden tests/vision/testdata";
  const nlohmann::json golden = nlohmann::json::parse(in);
  auto projector = Projector::Load(TestData(golden.at("projector")), {.n_threads = 2});
  ASSERT_TRUE(projector.ok()) << projector.status().ToString();
  int checked = 0;
  for (const nlohmann::json& g : golden.at("images")) {
    const std::string file = g.at("file");
    std::ifstream f(TestData(file), std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), {});
    auto image = DecodeImage(bytes);
    ASSERT_TRUE(image.ok()) << file << ": " << image.status().ToString();
    std::vector<float> got;
    ASSERT_TRUE((*projector)->Encode(*image, &got).ok());
    const auto want = g.at("embeddings").get<std::vector<float>>();
    EXPECT_EQ((*projector)->TokensFor(*image), g.at("n_tokens").get<int64_t>());
    EXPECT_EQ((*projector)->n_embd(), g.at("n_embd").get<int64_t>());
    ASSERT_EQ(got.size(), want.size()) << file;
    double dot = 0, ng = 0, nw = 0, max_diff = 0, max_abs = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      dot += double(got[i]) * want[i];
      ng += double(got[i]) * got[i];
      nw += double(want[i]) * want[i];
      max_diff = std::max(max_diff, double(std::abs(got[i] - want[i])));
      max_abs = std::max(max_abs, double(std::abs(want[i])));
    }
    const double cosine = dot / std::sqrt(ng * nw);
    EXPECT_GT(cosine, 0.99999) << file;
    EXPECT_LT(max_diff, 3e-3 * max_abs) << file;
    std::printf("%s: cosine %.7f, max |difference| %.2e (max |value| %.2f)\n", file.c_str(), cosine,
                max_diff, max_abs);
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

}  // namespace
}  // namespace radixlm::vision
