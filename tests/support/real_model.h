// For tests that run the real default model (gemma-3-270m): where it is and whether to run.
//
//   void SetUp() override {
//     if (std::string why = testing::RealModelSkipReason(); !why.empty()) GTEST_SKIP() << why;
//     config.model_path = testing::RealModelPath();
//   }
//
// The model is named by RADIXLM_DEFAULT_MODEL (scripts/test.sh sets it for the Release run);
// sanitizer builds skip these tests (too slow under ASan, and the sanitizer run unsets it).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include "util/sanitizers.h"

namespace radixlm::testing {

inline constexpr bool kSanitizerBuild = kAddressSanitizer;

// RADIXLM_DEFAULT_MODEL when it names an existing file, else "".
inline std::string RealModelPath() {
  const char* p = std::getenv("RADIXLM_DEFAULT_MODEL");
  if (p == nullptr || *p == '\0' || !std::filesystem::is_regular_file(p)) return "";
  return p;
}

// Why a real-model test cannot run in this build / environment; "" when it can.
inline std::string RealModelSkipReason() {
  if (kSanitizerBuild) return "real-model tests are skipped under the sanitizers";
  if (RealModelPath().empty()) return "RADIXLM_DEFAULT_MODEL does not name a model file";
  return "";
}

}  // namespace radixlm::testing
