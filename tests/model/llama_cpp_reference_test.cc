// Each family added on the seam against logits llama.cpp produced once on the same tiny GGUF
// (tests/model/testdata/llama_cpp/, written by tests/model/llama_cpp/make_fixtures.py; the CI
// does not build llama.cpp). The bar is the issue's: over every position, the mean KL divergence
// of radixlm's next-token distribution from llama.cpp's is at most max(2 x llama.cpp's own
// divergence when it decodes the ids one per call instead of in one batch, 0.01 nats), whatever
// batch shape radixlm computes them in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "model/model.h"

namespace radixlm::model {
namespace {

const std::string kDir = std::string(RADIXLM_SOURCE_DIR) + "/tests/model/testdata/llama_cpp/";

nlohmann::json Manifest() {
  std::ifstream in(kDir + "fixtures.json");
  EXPECT_TRUE(in.good()) << kDir << "fixtures.json";
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

std::vector<double> LogSoftmax(const float* logits, int64_t n) {
  const double max = *std::max_element(logits, logits + n);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(logits[i] - max);
  std::vector<double> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = logits[i] - max - std::log(sum);
  return out;
}

// KL(p || q) of two rows of logits.
double Kl(const float* p_logits, const float* q_logits, int64_t n) {
  const std::vector<double> p = LogSoftmax(p_logits, n);
  const std::vector<double> q = LogSoftmax(q_logits, n);
  double kl = 0.0;
  for (int64_t i = 0; i < n; ++i) kl += std::exp(p[i]) * (p[i] - q[i]);
  return kl;
}

class LlamaCppReferenceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LlamaCppReferenceTest, NextTokenDistributionsMatchLlamaCpp) {
  const nlohmann::json manifest = Manifest();
  ASSERT_FALSE(manifest.is_discarded());
  const nlohmann::json& fixture = manifest["families"][GetParam()];
  ASSERT_TRUE(fixture.is_object()) << GetParam() << " has no fixture";
  const std::vector<int32_t> ids = manifest["ids"].get<std::vector<int32_t>>();
  const auto n = static_cast<int64_t>(ids.size());

  auto model = Model::Load(kDir + fixture["gguf"].get<std::string>(),
                           {.n_threads = 2, .max_batch_tokens = n});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  // The family that reads the file (mixtral's is llama's, gemma4moe's gemma4's).
  EXPECT_EQ((*model)->config().arch, fixture.value("arch", GetParam()));
  const int64_t vocab = (*model)->config().vocab_size;

  std::vector<float> want(n * vocab);
  std::ifstream in(kDir + fixture["logits"].get<std::string>(), std::ios::binary);
  in.read(reinterpret_cast<char*>(want.data()), static_cast<std::streamsize>(want.size() * 4));
  ASSERT_TRUE(in.good()) << "llama.cpp's logits: " << want.size() << " floats expected";

  const double self_kl = fixture["self_kl_ubatch1"].get<double>();
  const double bar = std::max(2.0 * self_kl, 0.01);
  // One call for every position, then chunks of 13 reading the KV the earlier chunks wrote.
  for (const int64_t chunk : {n, int64_t{13}}) {
    auto cache = (*model)->CreateKvCache({.n_slots = n});
    ASSERT_TRUE(cache.ok()) << cache.status().ToString();
    std::vector<int32_t> slots(n);
    std::iota(slots.begin(), slots.end(), 0);
    std::vector<float> got;
    for (int64_t pos = 0; pos < n; pos += chunk) {
      const int64_t len = std::min(chunk, n - pos);
      ForwardBatch batch;
      batch.sequences.push_back({std::span<const int32_t>(ids.data() + pos, len),
                                 std::span<const int32_t>(slots.data() + pos, len),
                                 std::span<const int32_t>(slots.data(), pos), LogitsMode::kAll});
      ForwardOutput out;
      ASSERT_TRUE((*model)->Forward(batch, **cache, &out).ok());
      got.insert(got.end(), out.logits.begin(), out.logits.begin() + out.n_rows * vocab);
    }
    ASSERT_EQ(static_cast<int64_t>(got.size()), n * vocab);
    double kl_sum = 0.0;
    int agree = 0;
    for (int64_t t = 0; t < n; ++t) {
      const float* w = want.data() + t * vocab;
      const float* g = got.data() + t * vocab;
      kl_sum += Kl(w, g, vocab);
      agree += std::max_element(w, w + vocab) - w == std::max_element(g, g + vocab) - g;
    }
    const double mean_kl = kl_sum / static_cast<double>(n);
    RecordProperty("mean_kl_chunk_" + std::to_string(chunk), std::to_string(mean_kl));
    EXPECT_LE(mean_kl, bar) << GetParam() << ", chunks of " << chunk << " (llama.cpp's self-KL "
                            << self_kl << ")";
    // A wrong block moves most distributions, not a few near-tied argmaxes.
    EXPECT_GE(agree, n * 8 / 10) << GetParam() << ", chunks of " << chunk;
  }
}

INSTANTIATE_TEST_SUITE_P(Families, LlamaCppReferenceTest,
                         ::testing::Values("gemma2", "gemma4", "gemma4moe", "glm4", "granite",
                                           "mistral3", "mixtral", "olmo2", "phi3", "qwen35",
                                           "qwen35moe", "qwen3moe", "qwen3next", "qwen3vl",
                                           "qwen3vlmoe", "smollm3"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace radixlm::model
