#include "util/model_path.h"

#include <gtest/gtest.h>

namespace radixlm {
namespace {

TEST(ShortModelNameTest, DropsTheDirectoryAndTheGgufExtension) {
  EXPECT_EQ(ShortModelName("/root/.cache/m/gemma-3-270m-q4_k_m.gguf"), "gemma-3-270m-q4_k_m");
  EXPECT_EQ(ShortModelName("relative/dir/Qwen3-0.6B-Q8_0.GGUF"), "Qwen3-0.6B-Q8_0");
  EXPECT_EQ(ShortModelName("model.gguf"), "model");
}

TEST(ShortModelNameTest, KeepsOtherExtensionsAndDegenerateNames) {
  EXPECT_EQ(ShortModelName("/m/weights.bin"), "weights.bin");
  EXPECT_EQ(ShortModelName("/m/.gguf"), ".gguf");   // nothing would be left of the name
  EXPECT_EQ(ShortModelName("/m/dir/"), "/m/dir/");  // no file name part
}

}  // namespace
}  // namespace radixlm
