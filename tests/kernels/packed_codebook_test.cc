// The packed GEMM of the codebook types (kernels/packed_codebook.h), per type: the layout keeps
// the GGUF's bytes per weight and its bytes exactly (they read back), the integer form decodes
// to the dequantized weights, every ISA's kernel (AVX2 at the avx2 level, AVX-VNNI at avx_vnni,
// AVX-512 VNNI at avx512 and amx) gives the scalar definition's bits for every tile shape and
// partial group, so all levels give the same output, a row's output never depends on the batch
// or the threads, and the result is the row dot's (dot.h) up to float rounding, and the
// dequantized weights' float product up to the activations' rounding. Which types each level
// packs: PackableAtTheLevelsWhereThePackedKernelIsFaster.
#include "kernels/packed_codebook.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gguf/ggml_types.h"
#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/isa.h"
#include "kernels/dot.h"
#include "kernels/fp16.h"
#include "kernels/matmul.h"
#include "kernels/packed_weights.h"
#include "kernels/quant.h"
#include "kernels/quant_blocks.h"
#include "util/thread_pool.h"

namespace radixlm::kernels {
namespace {

using gguf::GgmlType;

struct Fixture {
  int64_t rows, cols;
  std::vector<uint8_t> raw;  // GGUF rows
  std::vector<float> dense;  // dequantized [rows, cols]
  WeightMatrix w;
};

// The codebook types packed_codebook.h lays out.
const GgmlType kPackedTypes[] = {GgmlType::kIQ3_XXS, GgmlType::kIQ2_XXS, GgmlType::kIQ3_S,
                                 GgmlType::kIQ2_XS,  GgmlType::kIQ2_S,   GgmlType::kIQ1_S,
                                 GgmlType::kIQ1_M};

// Random blocks: every index, sign and scale bit random, d in [1e-3, 1e-1] (IQ1_M: in the top
// nibbles of its scale words).
Fixture MakeCodebook(GgmlType type, int64_t rows, int64_t cols, uint32_t seed) {
  Fixture f{rows, cols, {}, {}, {}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> exponent(-3.0f, -1.0f);
  const size_t row_bytes = RowBytes(type, cols);
  f.raw.resize(row_bytes * rows);
  for (auto& b : f.raw) b = static_cast<uint8_t>(rng());
  const size_t bb = BlockBytes(type);
  for (size_t i = 0; i < f.raw.size() / bb; ++i) {
    uint8_t* block = f.raw.data() + i * bb;
    const uint16_t h = F32ToF16(std::pow(10.0f, exponent(rng)));
    if (type == GgmlType::kIQ1_M) {
      for (int k = 0; k < 4; ++k) {
        uint8_t* hi = block + offsetof(BlockIQ1M, scales) + 2 * k + 1;
        *hi = static_cast<uint8_t>((*hi & 0x0F) | (((h >> (4 * k)) & 0xF) << 4));
      }
    } else {
      std::memcpy(block, &h, 2);
    }
  }
  f.dense.resize(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    DequantizeRow(type, f.raw.data() + r * row_bytes, f.dense.data() + r * cols, cols);
  }
  f.w = MakeWeightMatrix(type, f.raw.data(), rows, cols);
  return f;
}

std::vector<float> RandomActivations(int64_t n_tokens, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(n_tokens * cols);
  for (auto& v : x) v = dist(rng);
  for (int64_t c = 0; c < 256; ++c) x[c] = 0.0f;  // an all-zero super-block (scale 0)
  return x;
}

bool Avx512VnniHere() {
#if defined(RADIXLM_KERNELS_AVX512_VNNI)
  return cpu::CpuHasAvx512Vnni();
#else
  return false;
#endif
}

// Packed at the levels where the packed kernel beat the dot kernels (packed_codebook.h): every
// type from the avx512 level up, all but IQ2_XS and IQ1_M at avx_vnni, IQ3_XXS and IQ1_S at avx2.
TEST(PackedCodebookTest, PackableAtTheLevelsWhereThePackedKernelIsFaster) {
  const PackedGemmPath path = ActivePackedGemmPath();
  for (GgmlType t : {GgmlType::kIQ3_XXS, GgmlType::kIQ3_S, GgmlType::kIQ2_XXS, GgmlType::kIQ2_XS,
                     GgmlType::kIQ2_S, GgmlType::kIQ1_S, GgmlType::kIQ1_M}) {
    const bool layout = FindCodebookLayout(t) != nullptr;
    EXPECT_EQ(layout, std::find(std::begin(kPackedTypes), std::end(kPackedTypes), t) !=
                          std::end(kPackedTypes))
        << gguf::GgmlTypeName(t);
    bool packed = false;
    switch (path) {
      case PackedGemmPath::kAvx512Vnni:
      case PackedGemmPath::kAmx:
        packed = true;
        break;
      case PackedGemmPath::kAvxVnni:
        packed = t != GgmlType::kIQ2_XS && t != GgmlType::kIQ1_M;
        break;
      case PackedGemmPath::kAvx2:
        packed = t == GgmlType::kIQ3_XXS || t == GgmlType::kIQ1_S;
        break;
      case PackedGemmPath::kNone:
        break;
    }
    EXPECT_EQ(IsPackableType(t), layout && packed)
        << gguf::GgmlTypeName(t) << " " << PackedGemmPathName(path);
  }
}

class PackedCodebookTypeTest : public ::testing::TestWithParam<GgmlType> {};

TEST_P(PackedCodebookTypeTest, KeepsItsGgufBytesAndWeights) {
  const GgmlType type = GetParam();
  const Fixture f = MakeCodebook(type, 37, 768, 7);
  const auto p = PackCodebookWeights(f.w, nullptr);
  EXPECT_EQ(p->act_block, 256);
  // 16 rows' GGUF bytes, the group padded to 64 bytes.
  EXPECT_EQ(p->group_bytes, (16 * RowBytes(type, 768) + 63) / 64 * 64);
  const Fixture f1024 = MakeCodebook(type, 32, 1024, 3);
  EXPECT_EQ(PackCodebookWeights(f1024.w, nullptr)->group_bytes, 16 * RowBytes(type, 1024));
  const size_t bb = BlockBytes(type);
  std::vector<uint8_t> block(bb);
  CodebookBlock cb;
  const float out_scale = FindCodebookLayout(type)->out_scale;
  for (int64_t r = 0; r < f.rows; ++r) {
    for (int64_t s = 0; s < f.cols / 256; ++s) {
      const uint8_t* gguf = f.raw.data() + r * f.w.row_bytes + s * bb;
      UnpackCodebookBlock(*p, r / 16, s, static_cast<int>(r % 16), block.data());
      ASSERT_EQ(0, std::memcmp(block.data(), gguf, bb)) << "row " << r << " super-block " << s;
      DecodeCodebookBlock(type, gguf, &cb);
      for (int k = 0; k < 256; ++k) {
        const float v =
            cb.d * static_cast<float>(cb.scale[k / 16]) * out_scale * static_cast<float>(cb.q[k]);
        ASSERT_NEAR(v, f.dense[r * f.cols + 256 * s + k], 1e-6f * (1.0f + std::fabs(v)))
            << "row " << r << " col " << 256 * s + k;
      }
    }
  }
}

TEST_P(PackedCodebookTypeTest, Avx512VnniKernelMatchesReferenceBitForBit) {
  if (!Avx512VnniHere()) GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
#if defined(RADIXLM_KERNELS_AVX512_VNNI)
  for (int64_t cols : {256, 768}) {
    // 45 rows: two full groups and a partial one of 13.
    const Fixture f = MakeCodebook(GetParam(), 45, cols, 21);
    const auto p = PackCodebookWeights(f.w, nullptr);
    for (int64_t n_tokens : {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 37}) {
      SCOPED_TRACE("cols " + std::to_string(cols) + " tokens " + std::to_string(n_tokens));
      const std::vector<float> x = RandomActivations(n_tokens, cols, 9);
      const PackedActivations a =
          QuantizePackedActivations(x.data(), n_tokens, cols, p->act_block, nullptr);
      std::vector<float> ref(n_tokens * f.rows), got(n_tokens * f.rows, -1.0f);
      PackedGemmReference(*p, a, n_tokens, ref.data(), f.rows);
      cpu::avx512vnni::CodebookGemm(*p, a, n_tokens, 0, p->groups, got.data(), f.rows);
      ASSERT_EQ(0, std::memcmp(ref.data(), got.data(), ref.size() * sizeof(float)));
      // Groups one at a time (as threads split them) give the same bits.
      std::vector<float> split(n_tokens * f.rows, -1.0f);
      for (int64_t g = 0; g < p->groups; ++g) {
        cpu::avx512vnni::CodebookGemm(*p, a, n_tokens, g, g + 1, split.data(), f.rows);
      }
      ASSERT_EQ(0, std::memcmp(ref.data(), split.data(), ref.size() * sizeof(float)));
    }
  }
#endif
}

// Every packed codebook kernel this binary has and this CPU runs (AVX2, AVX-VNNI, AVX-512 VNNI,
// AMX-INT8 tiles for 16 tokens: the avx2, avx_vnni, avx512 and amx levels), whatever
// RADIXLM_ISA dispatches.
struct CodebookKernel {
  const char* name;
  std::function<void(const PackedWeights&, const PackedActivations&, int64_t, int64_t, int64_t,
                     float*, int64_t)>
      gemm;
};
std::vector<CodebookKernel> CodebookKernelsHere() {
  std::vector<CodebookKernel> k;
#if defined(RADIXLM_KERNELS_X86)
  if (cpu::CpuHasAvx2()) k.push_back({"avx2", cpu::avx2::CodebookGemm});
#endif
#if defined(RADIXLM_KERNELS_AVX_VNNI)
  if (cpu::CpuHasAvxVnni()) k.push_back({"avx_vnni", cpu::avxvnni::CodebookGemm});
#endif
#if defined(RADIXLM_KERNELS_AVX512_VNNI)
  auto vnni = [](bool amx) {
    return [amx](const PackedWeights& w, const PackedActivations& a, int64_t n, int64_t g0,
                 int64_t g1, float* y, int64_t stride) {
      cpu::avx512vnni::CodebookGemm(w, a, n, g0, g1, y, stride, amx);
    };
  };
  if (cpu::CpuHasAvx512Vnni()) k.push_back({"avx512_vnni", vnni(false)});
  if (cpu::CpuHasAvx512Vnni() && cpu::CpuHasAmxInt8() && cpu::avx512vnni::CodebookAmxBuilt()) {
    k.push_back({"amx", vnni(true)});
  }
#endif
  return k;
}

// Odd shapes (a group of 5 rows: half a half; 8: one half; 13 and 45: a partial second half;
// 1, 3 and 5 super-blocks), token counts around each kernel's tile (4 and 8), and tokens of
// constant activations (every quant +127, or -127) that put the largest products into every
// pair vpmaddubsw adds: each kernel gives the scalar definition's bits, so all give the same.
TEST_P(PackedCodebookTypeTest, EveryIsaKernelMatchesReferenceBitForBit) {
  const std::vector<CodebookKernel> kernels = CodebookKernelsHere();
  if (kernels.empty()) GTEST_SKIP() << "no packed codebook kernel on this CPU";
  for (auto [rows, cols] :
       {std::pair<int64_t, int64_t>{5, 256}, {8, 1280}, {13, 768}, {45, 256}, {45, 768}}) {
    const Fixture f = MakeCodebook(GetParam(), rows, cols, static_cast<uint32_t>(rows + cols));
    const auto p = PackCodebookWeights(f.w, nullptr);
    for (int64_t n_tokens : {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 35}) {
      SCOPED_TRACE("rows " + std::to_string(rows) + " cols " + std::to_string(cols) + " tokens " +
                   std::to_string(n_tokens));
      std::vector<float> x = RandomActivations(n_tokens, cols, 3);
      if (n_tokens >= 3) {
        std::fill(x.begin() + cols, x.begin() + 2 * cols, 0.5f);
        std::fill(x.begin() + 2 * cols, x.begin() + 3 * cols, -2.0f);
      }
      const PackedActivations a =
          QuantizePackedActivations(x.data(), n_tokens, cols, p->act_block, nullptr);
      std::vector<float> ref(n_tokens * rows);
      PackedGemmReference(*p, a, n_tokens, ref.data(), rows);
      for (const CodebookKernel& k : kernels) {
        SCOPED_TRACE(k.name);
        std::vector<float> got(n_tokens * rows, -1.0f);
        k.gemm(*p, a, n_tokens, 0, p->groups, got.data(), rows);
        ASSERT_EQ(0, std::memcmp(ref.data(), got.data(), ref.size() * sizeof(float)));
        // Groups one at a time (as threads split them) give the same bits.
        std::vector<float> split(n_tokens * rows, -1.0f);
        for (int64_t g = 0; g < p->groups; ++g) {
          k.gemm(*p, a, n_tokens, g, g + 1, split.data(), rows);
        }
        ASSERT_EQ(0, std::memcmp(ref.data(), split.data(), ref.size() * sizeof(float)));
      }
    }
  }
}

// Padding rows of the last group are never stored: a 13-row output with a guard row after it.
TEST_P(PackedCodebookTypeTest, EveryIsaKernelStoresOnlyTheMatrixRows) {
  const Fixture f = MakeCodebook(GetParam(), 13, 256, 29);
  const auto p = PackCodebookWeights(f.w, nullptr);
  const int64_t n_tokens = 6, stride = 14;
  const std::vector<float> x = RandomActivations(n_tokens, 256, 31);
  const PackedActivations a = QuantizePackedActivations(x.data(), n_tokens, 256, 256, nullptr);
  for (const CodebookKernel& k : CodebookKernelsHere()) {
    std::vector<float> y(n_tokens * stride, -7.0f);
    k.gemm(*p, a, n_tokens, 0, p->groups, y.data(), stride);
    for (int64_t t = 0; t < n_tokens; ++t) EXPECT_EQ(y[t * stride + 13], -7.0f) << k.name;
  }
}

TEST_P(PackedCodebookTypeTest, MatchesTheRowDotAndTheDequantizedProduct) {
  const GgmlType type = GetParam();
  const Fixture f = MakeCodebook(type, 45, 512, 11);
  const auto p = PackCodebookWeights(f.w, nullptr);
  const int64_t n_tokens = 19;
  const std::vector<float> x = RandomActivations(n_tokens, f.cols, 5);
  const PackedActivations a =
      QuantizePackedActivations(x.data(), n_tokens, f.cols, p->act_block, nullptr);
  std::vector<float> got(n_tokens * f.rows);
  PackedGemmGroups(*p, a, n_tokens, 0, p->groups, got.data(), f.rows);
  std::vector<uint8_t> xq(RowBytes(GgmlType::kQ8_K, f.cols));
  for (int64_t t = 0; t < n_tokens; ++t) {
    QuantizeRow(GgmlType::kQ8_K, x.data() + t * f.cols, xq.data(), f.cols);
    for (int64_t r = 0; r < f.rows; ++r) {
      double exact = 0.0, mag = 0.0;
      for (int64_t k = 0; k < f.cols; ++k) {
        const double v = static_cast<double>(f.dense[r * f.cols + k]) * x[t * f.cols + k];
        exact += v;
        mag += std::fabs(v);
      }
      const float dot = VecDot(type, f.cols, f.raw.data() + r * f.w.row_bytes, xq.data());
      const float y = got[t * f.rows + r];
      ASSERT_NEAR(y, dot, 1e-5 * mag) << "token " << t << " row " << r;
      ASSERT_NEAR(y, exact, 0.01 * mag) << "token " << t << " row " << r;
    }
  }
}

TEST_P(PackedCodebookTypeTest, MatMulIsBatchAndThreadInvariant) {
  const Fixture f = MakeCodebook(GetParam(), 70, 512, 13);
  const auto p = PackCodebookWeights(f.w, nullptr);
  WeightMatrix w = f.w;
  w.packed = p.get();
  const int64_t n_tokens = 21;
  const std::vector<float> x = RandomActivations(n_tokens, f.cols, 17);
  std::vector<float> serial(n_tokens * f.rows), threaded(n_tokens * f.rows);
  MatMul(w, x.data(), n_tokens, serial.data(), nullptr);
  ThreadPool pool(3);
  MatMul(w, x.data(), n_tokens, threaded.data(), &pool);
  EXPECT_EQ(0, std::memcmp(serial.data(), threaded.data(), serial.size() * sizeof(float)));
  for (int64_t t = 0; t < n_tokens; ++t) {
    std::vector<float> one(f.rows);
    MatMul(w, x.data() + t * f.cols, 1, one.data(), &pool);
    ASSERT_EQ(0, std::memcmp(one.data(), serial.data() + t * f.rows, f.rows * sizeof(float)))
        << "token " << t;
  }
  const PackedActivations a =
      QuantizePackedActivations(x.data(), n_tokens, f.cols, p->act_block, nullptr);
  std::vector<float> ref(n_tokens * f.rows);
  PackedGemmReference(*p, a, n_tokens, ref.data(), f.rows);
  EXPECT_EQ(0, std::memcmp(serial.data(), ref.data(), ref.size() * sizeof(float)));
}

INSTANTIATE_TEST_SUITE_P(Types, PackedCodebookTypeTest, ::testing::ValuesIn(kPackedTypes),
                         [](const ::testing::TestParamInfo<GgmlType>& info) {
                           return std::string(gguf::GgmlTypeName(info.param));
                         });

}  // namespace
}  // namespace radixlm::kernels
