// DescribeGguf: the text `radixlm inspect` prints.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gguf/gguf_describe.h"
#include "gguf/gguf_writer.h"

namespace radixlm::gguf {
namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(GgufDescribeTest, HeaderMetadataTensorsAndSummary) {
  GgufWriter writer(3, 64);
  writer.AddMetadata("general.architecture", Value::Str("gemma3"));
  writer.AddMetadata("gemma3.block_count", Value::U32(18));
  writer.AddMetadata("gemma3.rope.freq_base", Value::F32(1e6f));
  std::vector<std::string> tokens(300, "tok");
  writer.AddMetadata("tokenizer.ggml.tokens", Value::StrArr(tokens));
  writer.AddMetadata("tokenizer.chat_template", Value::Str(std::string(1000, 'x')));
  ASSERT_TRUE(writer.AddF32Tensor("output_norm.weight", {640}, std::vector<float>(640)).ok());
  ASSERT_TRUE(
      writer
          .AddTensor("blk.0.ffn_down.weight", GgmlType::kQ4_K, {256, 2}, std::vector<uint8_t>(288))
          .ok());
  ASSERT_TRUE(
      writer
          .AddTensor("blk.1.ffn_down.weight", GgmlType::kQ4_K, {256, 1}, std::vector<uint8_t>(144))
          .ok());
  const std::vector<uint8_t> bytes = writer.Serialize();
  auto file = GgufFile::FromBuffer(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok()) << file.status().ToString();

  const std::string text = DescribeGguf(**file);
  EXPECT_TRUE(Contains(text, "version: 3\n")) << text;
  EXPECT_TRUE(Contains(text, "alignment: 64\n")) << text;
  EXPECT_TRUE(Contains(text, "tensor count: 3\n")) << text;
  EXPECT_TRUE(Contains(text, "  general.architecture = \"gemma3\"\n")) << text;
  EXPECT_TRUE(Contains(text, "  gemma3.block_count = 18\n")) << text;
  EXPECT_TRUE(Contains(text, "  gemma3.rope.freq_base = 1e+06\n")) << text;
  EXPECT_TRUE(Contains(text, "\"tok\", ... (300 items)]\n")) << text;
  EXPECT_TRUE(Contains(text, "... (1000 bytes)\n")) << text;
  EXPECT_TRUE(Contains(text, "  general.alignment = 64\n")) << text;
  EXPECT_TRUE(Contains(text, "blk.0.ffn_down.weight  Q4_K   [256, 2]  288\n")) << text;
  EXPECT_TRUE(Contains(text, "output_norm.weight     F32    [640]     2560\n")) << text;
  EXPECT_TRUE(Contains(text,
                       "summary: 3 tensors, 2992 bytes (2.9 KiB); types: F32 x1, Q4_K x2; "
                       "blocks: 18 (gemma3.block_count)\n"))
      << text;

  const std::string short_text = DescribeGguf(**file, {.tensor_table = false});
  EXPECT_FALSE(Contains(short_text, "tensors:\n"));
  EXPECT_TRUE(Contains(short_text, "summary: 3 tensors"));
}

TEST(GgufDescribeTest, UnknownBlockCountSaysWhy) {
  GgufWriter writer;
  writer.AddMetadata("general.architecture", Value::Str("llama"));
  std::vector<uint8_t> bytes = writer.Serialize();
  auto file = GgufFile::FromBuffer(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(DescribeBlockCount(**file), "unknown (metadata key 'llama.block_count' not found)");
  EXPECT_TRUE(Contains(DescribeGguf(**file), "summary: 0 tensors, 0 bytes (0 B); types: none;"));
}

}  // namespace
}  // namespace radixlm::gguf
