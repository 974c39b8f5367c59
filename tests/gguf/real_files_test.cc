// The reader on real files: llama.cpp's vocab-only GGUFs and, when present, the default model.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "gguf/gguf_file.h"
#include "util/model_path.h"

namespace radixlm::gguf {
namespace {

TEST(GgufRealFilesTest, VocabFilesLoad) {
  const std::filesystem::path dir = std::filesystem::path(RADIXLM_TESTDATA_DIR) / "llama-vocab";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no " << dir;
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".gguf") continue;
    SCOPED_TRACE(entry.path().string());
    auto file = GgufFile::Open(entry.path().string());
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    EXPECT_EQ((*file)->version(), 3u);
    EXPECT_TRUE((*file)->tensors().empty());
    auto tokens = (*file)->GetArray("tokenizer.ggml.tokens");
    ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
    EXPECT_EQ((*tokens)->element_type, ValueType::kString);
    EXPECT_GT((*tokens)->items.size(), 1000u);
    auto arch = (*file)->GetString("general.architecture");
    ASSERT_TRUE(arch.ok());
    EXPECT_TRUE((*file)->GetInt(*arch + ".block_count").ok());
    ++loaded;
  }
  EXPECT_GT(loaded, 0);
}

// Runs when RADIXLM_DEFAULT_MODEL (or the model package's cache path) names the model file.
TEST(GgufRealFilesTest, DefaultModel) {
  StatusOr<std::string> path = ResolveModelPath("default");
  if (!path.ok()) GTEST_SKIP() << path.status().ToString();
  auto opened = GgufFile::Open(*path);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  const GgufFile& f = **opened;
  EXPECT_EQ(*f.GetString("general.architecture"), "gemma3");
  EXPECT_EQ(*f.GetInt("gemma3.block_count"), 18);
  EXPECT_EQ(*f.GetInt("gemma3.embedding_length"), 640);
  const TensorInfo* embd = f.FindTensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->shape, (std::vector<int64_t>{640, 262144}));
  EXPECT_NE(f.FindTensor("blk.17.ffn_down.weight"), nullptr);
  EXPECT_NE(f.FindTensor("output_norm.weight"), nullptr);
  EXPECT_EQ((*f.GetArray("tokenizer.ggml.tokens"))->items.size(), 262144u);
  uint64_t end = 0;
  for (const TensorInfo& t : f.tensors()) end = std::max(end, t.offset + t.size_bytes);
  EXPECT_LE(f.data_offset() + end, f.file_size());
}

}  // namespace
}  // namespace radixlm::gguf
