// hf/reference_quant.h against ggml itself: the Q4_K and Q6_K bytes of testdata/
// kquant_golden_rows.h's rows were written by ggml's own quantizer (ggml_quantize_chunk without
// an importance matrix, the peer llama.cpp's libggml-base; testdata/ggml_kquant_golden.c,
// command in tests/model/llama_cpp/README.md); radixlm's must equal them byte for byte. And
// quantization at load (MapWeights) gives the same bytes on any number of threads.
#include "hf/reference_quant.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "hf/hf_weights.h"
#include "hf/safetensors.h"
#include "hf_test_util.h"
#include "kernels/quant.h"
#include "testdata/kquant_golden_rows.h"
#include "util/thread_pool.h"

namespace radixlm::hf {
namespace {

std::vector<uint8_t> ReadGolden(const std::string& name) {
  std::ifstream in(std::string(RADIXLM_SOURCE_DIR) + "/tests/hf/testdata/" + name,
                   std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// Quantizes the golden rows with `quantize` and compares with ggml's bytes block by block.
void ExpectGgmlBytes(gguf::GgmlType type, const std::string& golden_name,
                     void (*quantize)(const float*, uint8_t*, int64_t)) {
  std::vector<float> rows(kGoldenRows * kGoldenCols);
  GoldenRows(rows.data());
  const std::vector<uint8_t> golden = ReadGolden(golden_name);
  const size_t row_bytes = kernels::RowBytes(type, kGoldenCols);
  ASSERT_EQ(golden.size(), row_bytes * kGoldenRows) << golden_name << " missing or truncated";
  std::vector<uint8_t> got(golden.size());
  for (int r = 0; r < kGoldenRows; ++r) {
    quantize(rows.data() + r * kGoldenCols, got.data() + r * row_bytes, kGoldenCols);
  }
  const size_t block_bytes = kernels::BlockBytes(type);
  int differing = 0;
  for (size_t b = 0; b < golden.size() / block_bytes; ++b) {
    if (std::memcmp(got.data() + b * block_bytes, golden.data() + b * block_bytes, block_bytes) !=
        0) {
      if (differing++ == 0) {
        ADD_FAILURE() << golden_name << ": first differing block " << b << " (row "
                      << b * block_bytes / row_bytes << ")";
      }
    }
  }
  EXPECT_EQ(differing, 0) << "of " << golden.size() / block_bytes << " blocks";
}

TEST(ReferenceQuantTest, Q4KIsGgmlsByteForByte) {
  ExpectGgmlBytes(gguf::GgmlType::kQ4_K, "ggml_q4_k_golden.bin", QuantizeRowQ4KReference);
}

TEST(ReferenceQuantTest, Q6KIsGgmlsByteForByte) {
  ExpectGgmlBytes(gguf::GgmlType::kQ6_K, "ggml_q6_k_golden.bin", QuantizeRowQ6KReference);
}

TEST(ReferenceQuantTest, QuantizationAtLoadIsTheSameOnAnyNumberOfThreads) {
  // Matrices whose rows fill K-quant blocks (512 wide), with row counts that split unevenly.
  const std::string dir = testing::FreshDir("threads");
  std::vector<float> values(kGoldenRows * kGoldenCols);
  GoldenRows(values.data());
  std::vector<testing::StEntry> entries;
  const char* names[] = {"model.layers.0.mlp.down_proj.weight",
                         "model.layers.0.mlp.up_proj.weight"};
  for (int t = 0; t < 2; ++t) {
    const int64_t rows = t == 0 ? 37 : 5;
    testing::StEntry e{names[t], "F32", {rows, kGoldenCols}, {}};
    e.bytes.resize(rows * kGoldenCols * 4);
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(e.bytes.data() + r * kGoldenCols * 4,
                  values.data() + ((r * 7 + t) % kGoldenRows) * kGoldenCols, kGoldenCols * 4);
    }
    entries.push_back(std::move(e));
  }
  testing::WriteFile(dir + "/model.safetensors", testing::SafetensorsBytes(entries));
  auto ckpt = Checkpoint::Open(dir);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  HfArchitecture arch;
  arch.hf_name = "LlamaForCausalLM";
  arch.arch = "llama";
  for (const char* q : {"q4_k", "q6_k", "q8_0"}) {
    auto one = MapWeights(**ckpt, arch, q, 0, nullptr);
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    ASSERT_EQ(one->tensors.size(), 2u);
    // The single-threaded bytes are the reference quantizer's, row by row.
    const gguf::TensorInfo& down = one->tensors[0];
    const size_t row_bytes = down.size_bytes / 37;
    std::vector<uint8_t> row(row_bytes);
    const float* row5 = values.data() + ((5 * 7) % kGoldenRows) * kGoldenCols;
    if (std::string(q) == "q4_k") QuantizeRowQ4KReference(row5, row.data(), kGoldenCols);
    if (std::string(q) == "q6_k") QuantizeRowQ6KReference(row5, row.data(), kGoldenCols);
    if (std::string(q) == "q8_0") QuantizeRowQ8_0Reference(row5, row.data(), kGoldenCols);
    EXPECT_EQ(std::memcmp(down.data + 5 * row_bytes, row.data(), row_bytes), 0) << q;
    for (int threads : {1, 3, 4}) {
      ThreadPool pool(threads);
      auto many = MapWeights(**ckpt, arch, q, 0, &pool);
      ASSERT_TRUE(many.ok()) << many.status().ToString();
      for (size_t i = 0; i < 2; ++i) {
        const gguf::TensorInfo& a = one->tensors[i];
        const gguf::TensorInfo& b = many->tensors[i];
        ASSERT_EQ(a.type, b.type);
        ASSERT_EQ(a.size_bytes, b.size_bytes);
        EXPECT_EQ(std::memcmp(a.data, b.data, a.size_bytes), 0)
            << q << " " << a.name << " on " << threads << " threads";
      }
    }
  }
}

}  // namespace
}  // namespace radixlm::hf
