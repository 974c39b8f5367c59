// The real model's perplexity on the fixed English text stays within the bound set by the
// llama.cpp oracle run (bench/oracle_llamacpp.py writes testdata/ppl_reference.json: the
// text's token ids, as llama.cpp tokenizes them, and llama.cpp's perplexity).
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "eval/score.h"

namespace radixlm {
namespace {

// Perplexity within 0.5 % of llama.cpp's, either way (the numerics requirement of the
// performance work; exact operation order is not required).
constexpr double kMaxRatioToLlamaCpp = 1.005;
constexpr double kMinRatioToLlamaCpp = 0.995;

TEST(OraclePerplexityTest, FixedTextWithinOracleBound) {
  const char* model_path = std::getenv("RADIXLM_DEFAULT_MODEL");
  if (model_path == nullptr || !std::filesystem::is_regular_file(model_path)) {
    GTEST_SKIP() << "RADIXLM_DEFAULT_MODEL not set (scripts/setup.sh sets it)";
  }
  std::ifstream in(std::string(RADIXLM_SOURCE_DIR) + "/tests/oracle/testdata/ppl_reference.json");
  ASSERT_TRUE(in) << "missing ppl_reference.json; run bench/oracle_llamacpp.py";
  const nlohmann::json ref = nlohmann::json::parse(in);
  const auto ids = ref.at("ids").get<std::vector<int32_t>>();
  const double llamacpp_ppl = ref.at("llamacpp_perplexity").get<double>();

  model::ModelOptions options;
  options.max_batch_tokens = 128;
  auto model = model::Model::Load(model_path, options);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  // Chunks of 100 tokens: the later chunks read KV written by earlier calls.
  auto scored = eval::ScoreSequence(**model, ids, 100);
  ASSERT_TRUE(scored.ok()) << scored.status().ToString();
  EXPECT_LE(scored->perplexity, llamacpp_ppl * kMaxRatioToLlamaCpp)
      << "radixlm " << scored->perplexity << " vs llama.cpp " << llamacpp_ppl;
  EXPECT_GE(scored->perplexity, llamacpp_ppl * kMinRatioToLlamaCpp)
      << "radixlm " << scored->perplexity << " vs llama.cpp " << llamacpp_ppl;
}

}  // namespace
}  // namespace radixlm
