// Golden-file tokenizer tests shared by the real-vocabulary suites (Gemma-3, SmolLM2): the
// tokenizer of the GGUF an environment variable names, the cases llama.cpp wrote for it (a
// generator under bench/ writes the golden file; never edit one by hand), and the checks every
// suite runs over them.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace radixlm::tokenizer::testutil {

struct GoldenCase {
  std::string text;
  bool add_bos = false;  // false where the file has no add_bos
  bool parse_special = false;
  std::vector<int32_t> ids;
  std::string decoded;               // llama.cpp's detokenization, specials shown
  std::string decoded_skip_special;  // "" where the file has none
};

struct GoldenSuite {
  std::unique_ptr<Tokenizer> tokenizer;
  nlohmann::json file;  // the whole golden file (its vocabulary facts, for one)
  std::vector<GoldenCase> cases;
};

// Loads the tokenizer of the GGUF that `model_env` names and testdata/<golden_name>. nullptr
// when `model_env` is unset or not a file (the suite skips); a bad model or a missing golden
// file is also nullptr, after a test failure naming it (`generator`: what writes the file).
std::unique_ptr<GoldenSuite> LoadGoldenSuite(const char* model_env, const std::string& golden_name,
                                             const std::string& generator);

// The same for the GGUF at `model` (a file the tests carry); a missing file is a test failure.
std::unique_ptr<GoldenSuite> LoadGoldenSuiteFromFile(const std::string& model,
                                                     const std::string& golden_name,
                                                     const std::string& generator);

// Every case encodes (with its add_bos and parse_special) to its ids: one failure listing
// every mismatch. At least `min_cases` cases.
void ExpectEncodesLikeGolden(const GoldenSuite& suite, size_t min_cases = 100);

// Streaming each case's ids through a StreamingDetokenizer (with and without skip_special)
// gives Decode's text.
void ExpectStreamingMatchesDecode(const GoldenSuite& suite);

}  // namespace radixlm::tokenizer::testutil
