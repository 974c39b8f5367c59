#include "golden_cases.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gguf/gguf_file.h"
#include "test_util.h"
#include "tokenizer/detokenizer.h"

namespace radixlm::tokenizer::testutil {

std::unique_ptr<GoldenSuite> LoadGoldenSuite(const char* model_env, const std::string& golden_name,
                                             const std::string& generator) {
  const char* model = std::getenv(model_env);
  if (model == nullptr || !std::filesystem::is_regular_file(model)) return nullptr;
  return LoadGoldenSuiteFromFile(model, golden_name, generator);
}

std::unique_ptr<GoldenSuite> LoadGoldenSuiteFromFile(const std::string& model,
                                                     const std::string& golden_name,
                                                     const std::string& generator) {
  auto file = gguf::GgufFile::Open(model);
  if (!file.ok()) {
    ADD_FAILURE() << model << ": " << file.status().ToString();
    return nullptr;
  }
  auto tokenizer = Tokenizer::FromGguf(**file);
  if (!tokenizer.ok()) {
    ADD_FAILURE() << model << ": " << tokenizer.status().ToString();
    return nullptr;
  }
  std::ifstream in(std::string(RADIXLM_SOURCE_DIR) + "/tests/tokenizer/testdata/" + golden_name);
  if (!in) {
    ADD_FAILURE() << "golden file " << golden_name << " missing; run " << generator;
    return nullptr;
  }
  auto suite = std::make_unique<GoldenSuite>();
  suite->tokenizer = std::move(*tokenizer);
  suite->file = nlohmann::json::parse(in);
  for (const nlohmann::json& c : suite->file.at("cases")) {
    suite->cases.push_back(GoldenCase{c.at("text"), c.value("add_bos", false),
                                      c.at("parse_special"),
                                      c.at("ids").get<std::vector<int32_t>>(), c.at("decoded"),
                                      c.value("decoded_skip_special", std::string())});
  }
  return suite;
}

void ExpectEncodesLikeGolden(const GoldenSuite& suite, size_t min_cases) {
  ASSERT_GE(suite.cases.size(), min_cases);
  int mismatches = 0;
  std::string report;
  for (const GoldenCase& c : suite.cases) {
    const std::vector<int32_t> got = suite.tokenizer->Encode(c.text, c.add_bos, c.parse_special);
    if (got != c.ids) {
      ++mismatches;
      report += "\n  text: \"" + Escape(c.text) + "\" add_bos=" + std::to_string(c.add_bos) +
                " parse_special=" + std::to_string(c.parse_special) +
                "\n    expected: " + IdsToString(c.ids) + "\n    got:      " + IdsToString(got);
    }
  }
  EXPECT_EQ(mismatches, 0) << mismatches << " of " << suite.cases.size() << " differ:" << report;
}

void ExpectStreamingMatchesDecode(const GoldenSuite& suite) {
  const Tokenizer& tokenizer = *suite.tokenizer;
  for (const GoldenCase& c : suite.cases) {
    for (bool skip : {false, true}) {
      StreamingDetokenizer stream(tokenizer, skip);
      std::string joined;
      for (int32_t id : c.ids) joined += stream.Feed(id);
      joined += stream.Flush();
      EXPECT_EQ(joined, tokenizer.Decode(c.ids, skip)) << IdsToString(c.ids);
    }
  }
}

}  // namespace radixlm::tokenizer::testutil
