// The CPU kernel backend table: complete, named after the dispatched ISA, and preparing
// weights for the packed GEMM exactly where that GEMM runs.
#include "kernels/backend.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "kernels/dot.h"
#include "kernels/quant.h"

namespace radixlm::kernels {
namespace {

TEST(KernelBackendTest, CpuTableIsCompleteAndNamedForTheIsa) {
  const KernelBackend& k = CpuBackend();
  EXPECT_EQ(std::string(k.name), std::string("cpu-") + IsaName(ActiveIsa()));
  EXPECT_NE(k.prepare_weights, nullptr);
  EXPECT_NE(k.matmul, nullptr);
  EXPECT_NE(k.embed, nullptr);
  EXPECT_NE(k.rms_norm, nullptr);
  EXPECT_NE(k.add, nullptr);
  EXPECT_NE(k.scale, nullptr);
  EXPECT_NE(k.geglu, nullptr);
  EXPECT_NE(k.swiglu, nullptr);
  EXPECT_NE(k.rope, nullptr);
  EXPECT_NE(k.store_kv, nullptr);
  EXPECT_NE(k.attention, nullptr);
}

TEST(KernelBackendTest, PreparesWeightsOnlyWhereThePackedGemmRuns) {
  const int64_t rows = 20;
  // Quantized and float weights are packed where the packed GEMM runs; a width that is not a
  // multiple of 32 never is.
  for (const auto& [t, cols, packable] :
       {std::tuple{GgmlType::kQ8_0, 64, true}, std::tuple{GgmlType::kF32, 64, true},
        std::tuple{GgmlType::kF16, 64, true}, std::tuple{GgmlType::kF32, 40, false}}) {
    std::vector<float> src(rows * cols, 0.25f);
    std::vector<uint8_t> raw(RowBytes(t, cols) * rows);
    for (int64_t r = 0; r < rows; ++r) {
      QuantizeRow(t, src.data() + r * cols, raw.data() + r * RowBytes(t, cols), cols);
    }
    WeightMatrix w = MakeWeightMatrix(t, raw.data(), rows, cols);
    auto owned = CpuBackend().prepare_weights(&w, nullptr);
    const bool expect_packed = PackedGemmAvailable() && packable;
    EXPECT_EQ(owned != nullptr, expect_packed) << static_cast<int>(t) << " cols " << cols;
    EXPECT_EQ(w.packed, owned.get());
  }
}

}  // namespace
}  // namespace radixlm::kernels
