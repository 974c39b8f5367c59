// The low-bit weight types (Q2_K, Q3_K, IQ4_NL, IQ4_XS, IQ3_S, IQ3_XXS, IQ2_XXS, IQ2_XS,
// IQ2_S, IQ1_S, IQ1_M, MXFP4):
//   * DequantizeRow on files quantized by llama.cpp equals llama.cpp's own dequantization
//     (testdata/lowbit_<T>.gguf and .expected.f32, made by testdata/make_lowbit_testdata.py);
//   * every dot kernel equals "dequantize, then dot in double" on those files' rows and on random
//     blocks (every bit pattern), and every SIMD path equals the scalar reference;
//   * MatMul and GetRows use them for any number of tokens and threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/dot.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"
#include "test_util.h"
#include "util/thread_pool.h"

namespace radixlm::kernels {
namespace {

using testing::Dequantize;
using testing::RandomBytes;
using testing::RandomFloats;

const GgmlType kLowbitTypes[] = {
    GgmlType::kQ2_K,  GgmlType::kQ3_K,    GgmlType::kIQ4_NL,  GgmlType::kIQ4_XS,
    GgmlType::kIQ3_S, GgmlType::kIQ3_XXS, GgmlType::kIQ2_XXS, GgmlType::kIQ2_XS,
    GgmlType::kIQ2_S, GgmlType::kIQ1_S,   GgmlType::kIQ1_M,   GgmlType::kMXFP4,
};

// The types whose activations are Q8_0 (as in ggml); the others take Q8_K.
bool PairsWithQ8_0(GgmlType t) { return t == GgmlType::kIQ4_NL || t == GgmlType::kMXFP4; }

std::string LowbitName(GgmlType t) { return std::string(gguf::GgmlTypeName(t)); }

std::string TestdataPath(const std::string& file) {
  return std::string(RADIXLM_SOURCE_DIR) + "/tests/kernels/testdata/" + file;
}

// Offset of the half super-block scale of a block, or -1 where it has none (IQ1_M spreads its
// scale over the top nibbles of its scale words).
int LowbitHalfScaleOffset(GgmlType t) {
  switch (t) {
    case GgmlType::kQ2_K:
      return offsetof(BlockQ2K, d);
    case GgmlType::kQ3_K:
      return offsetof(BlockQ3K, d);
    case GgmlType::kIQ1_M:
      return -1;
    default:
      return 0;  // every IQ type but IQ1_M starts with its half d
  }
}

// A row of random blocks: every quant / scale / sign byte random, the half scales (d, and
// Q2_K's dmin) finite and of a realistic size, so every dot is a finite sum.
std::vector<uint8_t> RandomLowbitRow(std::mt19937& rng, GgmlType t, int64_t n) {
  std::vector<uint8_t> row = RandomBytes(rng, RowBytes(t, n));
  std::uniform_real_distribution<float> u(-3.0f, -1.0f);
  const size_t bb = BlockBytes(t);
  for (size_t b = 0; b < row.size() / bb; ++b) {
    uint8_t* block = row.data() + b * bb;
    if (t == GgmlType::kMXFP4) {
      // An E8M0 exponent of 2^-10 .. 2^3 (a random byte would overflow the sums).
      block[0] = static_cast<uint8_t>(117 + rng() % 14);
      continue;
    }
    const uint16_t h = F32ToF16(std::pow(10.0f, u(rng)));
    if (t == GgmlType::kIQ1_M) {
      // The top nibble of scale word k is bits 4k..4k+3 of the half.
      for (int k = 0; k < 4; ++k) {
        uint8_t* hi = block + offsetof(BlockIQ1M, scales) + 2 * k + 1;
        *hi = static_cast<uint8_t>((*hi & 0x0F) | (((h >> (4 * k)) & 0xF) << 4));
      }
      continue;
    }
    std::memcpy(block + LowbitHalfScaleOffset(t), &h, sizeof(h));
    if (t == GgmlType::kQ2_K) {
      const uint16_t m = F32ToF16(std::pow(10.0f, u(rng)));
      std::memcpy(block + offsetof(BlockQ2K, dmin), &m, sizeof(m));
    }
  }
  return row;
}

std::vector<uint8_t> LowbitActivation(GgmlType t, const std::vector<float>& x) {
  return testing::MakeActivation(t, x);
}

// Sum |w_i x_i| plus, for Q2_K, the mins' |dmin * m * x_i| (the kernels subtract the two sums).
double LowbitMagnitude(GgmlType t, const std::vector<uint8_t>& w, const std::vector<float>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  const std::vector<float> wd = Dequantize(t, w.data(), n);
  std::vector<float> offset(n, 0.0f);
  if (t == GgmlType::kQ2_K) {
    std::vector<uint8_t> z = w;
    for (size_t b = 0; b < z.size() / sizeof(BlockQ2K); ++b) {
      std::memset(z.data() + b * sizeof(BlockQ2K) + offsetof(BlockQ2K, qs), 0, kQK_K / 4);
    }
    offset = Dequantize(t, z.data(), n);
  }
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += std::fabs(x[i]) * (std::fabs(wd[i]) + std::fabs(offset[i]));
  return s;
}

// A file made by llama.cpp: its tensors and llama.cpp's dequantized values of them.
struct LlamaCppFile {
  std::unique_ptr<gguf::GgufFile> file;
  std::vector<float> expected;  // every tensor's values, in file order
};

LlamaCppFile LoadLlamaCppFile(GgmlType t) {
  LlamaCppFile f;
  auto file = gguf::GgufFile::Open(TestdataPath("lowbit_" + LowbitName(t) + ".gguf"));
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  if (!file.ok()) return f;
  f.file = std::move(*file);
  std::ifstream in(TestdataPath("lowbit_" + LowbitName(t) + ".expected.f32"), std::ios::binary);
  in.seekg(0, std::ios::end);
  f.expected.resize(static_cast<size_t>(in.tellg()) / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(f.expected.data()), f.expected.size() * sizeof(float));
  return f;
}

class LowbitTest : public ::testing::TestWithParam<GgmlType> {};

TEST_P(LowbitTest, TypeIsKnownToTheReaderAndTheKernels) {
  const GgmlType t = GetParam();
  const auto traits = gguf::GetTypeTraits(t);
  ASSERT_TRUE(traits.has_value());
  EXPECT_TRUE(IsSupportedType(t));
  EXPECT_EQ(BlockSize(t), traits->block_size);
  EXPECT_EQ(static_cast<int64_t>(BlockBytes(t)), traits->type_size);
  EXPECT_NE(GetVecDotFn(t), nullptr);
  EXPECT_EQ(ActivationType(t), PairsWithQ8_0(t) ? GgmlType::kQ8_0 : GgmlType::kQ8_K);
}

// DequantizeRow gives llama.cpp's values for every element of llama.cpp's file, bit for bit.
TEST_P(LowbitTest, DequantizeMatchesLlamaCpp) {
  const GgmlType t = GetParam();
  const LlamaCppFile f = LoadLlamaCppFile(t);
  ASSERT_NE(f.file, nullptr);
  size_t at = 0;
  for (const gguf::TensorInfo& info : f.file->tensors()) {
    ASSERT_EQ(info.type, t) << info.name;
    const int64_t cols = info.row_size();
    const size_t row_bytes = RowBytes(t, cols);
    for (int64_t r = 0; r < info.num_rows(); ++r) {
      const std::vector<float> got = Dequantize(t, info.data + r * row_bytes, cols);
      ASSERT_LE(at + cols, f.expected.size());
      int mismatches = 0;
      for (int64_t c = 0; c < cols; ++c) {
        if (std::memcmp(&got[c], &f.expected[at + c], sizeof(float)) != 0 && ++mismatches <= 3) {
          ADD_FAILURE() << LowbitName(t) << " " << info.name << " row " << r << " col " << c << ": "
                        << got[c] << " vs llama.cpp " << f.expected[at + c];
        }
      }
      EXPECT_EQ(mismatches, 0) << info.name << " row " << r;
      at += cols;
    }
  }
  EXPECT_EQ(at, f.expected.size());
}

// The dispatched dot of llama.cpp's rows with quantized activations equals the dot of the
// dequantized rows in double (integer sums are exact; the tolerance is float rounding).
TEST_P(LowbitTest, DotOfLlamaCppRowsMatchesDequantizedReference) {
  const GgmlType t = GetParam();
  const LlamaCppFile f = LoadLlamaCppFile(t);
  ASSERT_NE(f.file, nullptr);
  std::mt19937 rng(17);
  for (const gguf::TensorInfo& info : f.file->tensors()) {
    const int64_t cols = info.row_size();
    const size_t row_bytes = RowBytes(t, cols);
    for (int64_t r = 0; r < info.num_rows(); ++r) {
      const std::vector<uint8_t> w(info.data + r * row_bytes, info.data + (r + 1) * row_bytes);
      const auto xq = LowbitActivation(t, RandomFloats(rng, cols, -2.0f, 2.0f));
      const auto xd = Dequantize(ActivationType(t), xq.data(), cols);
      const double ref = testing::RefDot(Dequantize(t, w.data(), cols), xd, nullptr);
      EXPECT_NEAR(VecDot(t, cols, w.data(), xq.data()), ref,
                  2e-6 * LowbitMagnitude(t, w, xd) + 1e-30)
          << LowbitName(t) << " " << info.name << " row " << r;
    }
  }
}

// The same on random blocks: every bit pattern of quants, signs and sub-block scales.
TEST_P(LowbitTest, DotOfRandomBlocksMatchesDequantizedReference) {
  const GgmlType t = GetParam();
  std::mt19937 rng(1234 + static_cast<int>(t));
  for (int64_t blocks : {1, 2, 3, 7, 10}) {
    const int64_t n = blocks * BlockSize(t);
    const auto w = RandomLowbitRow(rng, t, n);
    const auto xq = LowbitActivation(t, RandomFloats(rng, n, -2.0f, 2.0f));
    const auto xd = Dequantize(ActivationType(t), xq.data(), n);
    const double ref = testing::RefDot(Dequantize(t, w.data(), n), xd, nullptr);
    EXPECT_NEAR(VecDot(t, n, w.data(), xq.data()), ref, 2e-6 * LowbitMagnitude(t, w, xd) + 1e-30)
        << LowbitName(t) << " n=" << n;
  }
}

// Every SIMD path equals the scalar reference (up to float summation order).
TEST_P(LowbitTest, SimdMatchesScalar) {
  const GgmlType t = GetParam();
  std::mt19937 rng(99 + static_cast<int>(t));
  const VecDotFn scalar = GetVecDotFnForIsa(t, Isa::kScalar);
  ASSERT_NE(scalar, nullptr);
  int paths = 0;
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const VecDotFn fn = GetVecDotFnForIsa(t, isa);
    if (fn == nullptr || fn == scalar) continue;
    ++paths;
    for (int trial = 0; trial < 50; ++trial) {
      const int64_t n = BlockSize(t) * (1 + rng() % 12);
      const auto w = RandomLowbitRow(rng, t, n);
      auto xf = RandomFloats(rng, n, -3.0f, 3.0f);
      if (trial % 10 == 0) xf[rng() % n] = 1e4f;  // a spike: other elements quantize to ~0
      const auto xq = LowbitActivation(t, xf);
      const auto xd = Dequantize(ActivationType(t), xq.data(), n);
      EXPECT_NEAR(fn(n, w.data(), xq.data()), scalar(n, w.data(), xq.data()),
                  1e-6 * LowbitMagnitude(t, w, xd) + 1e-30)
          << LowbitName(t) << " " << IsaName(isa) << " n=" << n;
    }
  }
  std::printf("%s: %d SIMD dot path(s) checked against scalar\n", LowbitName(t).c_str(), paths);
}

// Where a 4-row kernel exists, it is bit for bit 4 single-row dots (batch invariance).
TEST_P(LowbitTest, FourRowKernelIsBitIdenticalToSingleRowDots) {
  const GgmlType t = GetParam();
  const VecDot4Fn dot4 = GetVecDot4Fn(t);
  if (dot4 == nullptr) GTEST_SKIP() << "no 4-row kernel for " << LowbitName(t);
  std::mt19937 rng(55);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t n = BlockSize(t) * (1 + rng() % 9);
    const auto w = RandomLowbitRow(rng, t, n);
    const size_t stride = RowBytes(ActivationType(t), n) + 4;  // padded rows
    std::vector<uint8_t> xs(4 * stride);
    for (int j = 0; j < 4; ++j) {
      auto xf = RandomFloats(rng, n, -2.0f, 2.0f);
      if (trial % 5 == j) xf[rng() % n] = 1e4f;
      const auto xq = LowbitActivation(t, xf);
      std::copy(xq.begin(), xq.end(), xs.begin() + j * stride);
    }
    float out[4];
    dot4(n, w.data(), xs.data(), stride, out);
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(out[j], VecDot(t, n, w.data(), xs.data() + j * stride))
          << LowbitName(t) << " row " << j << " n=" << n;
    }
  }
}

// Where an 8-row kernel exists (the codebook types), it is bit for bit 8 single-row dots.
TEST_P(LowbitTest, EightRowKernelIsBitIdenticalToSingleRowDots) {
  const GgmlType t = GetParam();
  const VecDot8Q8KFn dot8 = GetVecDot8Q8KFn(t);
  if (dot8 == nullptr) GTEST_SKIP() << "no 8-row kernel for " << LowbitName(t);
  ASSERT_EQ(ActivationType(t), GgmlType::kQ8_K);
  std::mt19937 rng(56);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t n = BlockSize(t) * (1 + rng() % 9);
    const auto w = RandomLowbitRow(rng, t, n);
    const size_t stride = RowBytes(ActivationType(t), n) + (trial % 2 ? 4 : 0);
    std::vector<uint8_t> xs(8 * stride);
    for (int j = 0; j < 8; ++j) {
      auto xf = RandomFloats(rng, n, -2.0f, 2.0f);
      if (trial % 9 == j) xf[rng() % n] = 1e4f;
      if (trial % 7 == j) std::fill(xf.begin(), xf.end(), 0.0f);
      const auto xq = LowbitActivation(t, xf);
      std::copy(xq.begin(), xq.end(), xs.begin() + j * stride);
    }
    float out[8];
    std::fill(out, out + 8, -1.0f);
    dot8(n, w.data(), xs.data(), stride, out);
    for (int j = 0; j < 8; ++j) {
      EXPECT_EQ(out[j], VecDot(t, n, w.data(), xs.data() + j * stride))
          << LowbitName(t) << " row " << j << " n=" << n;
    }
  }
}

// The multi-row kernels of each ISA level this machine has (AVX2, and AVX-512 for the codebook
// types) are bit for bit the AVX2 single-row kernel MatMul dispatches with them, whichever level
// RADIXLM_ISA caps the process at; 4 and 8 rows, odd block counts, padded strides.
TEST_P(LowbitTest, MultiRowKernelsOfEveryIsaMatchTheAvx2SingleRowDot) {
  const GgmlType t = GetParam();
  const VecDotFn single = GetVecDotFnForIsa(t, Isa::kAvx2);
  if (single == nullptr) GTEST_SKIP() << "no AVX2";
  std::mt19937 rng(57);
  int kernels = 0;
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const VecDot4Fn dot4 = GetVecDot4FnForIsa(t, isa);
    const VecDot8Q8KFn dot8 = GetVecDot8Q8KFnForIsa(t, isa);
    kernels += (dot4 != nullptr) + (dot8 != nullptr);
    for (int trial = 0; trial < 10 && (dot4 != nullptr || dot8 != nullptr); ++trial) {
      const int64_t n = BlockSize(t) * (1 + rng() % 7);
      const auto w = RandomLowbitRow(rng, t, n);
      const size_t stride = RowBytes(ActivationType(t), n) + (trial % 2 ? 36 : 0);
      std::vector<uint8_t> xs(8 * stride);
      for (int j = 0; j < 8; ++j) {
        auto xf = RandomFloats(rng, n, -2.0f, 2.0f);
        if (trial % 8 == j) xf[rng() % n] = -1e4f;
        const auto xq = LowbitActivation(t, xf);
        std::copy(xq.begin(), xq.end(), xs.begin() + j * stride);
      }
      float out[8];
      for (int rows : {4, 8}) {
        if (rows == 4 && dot4 == nullptr) continue;
        if (rows == 8 && dot8 == nullptr) continue;
        std::fill(out, out + 8, -1.0f);
        (rows == 4 ? dot4 : dot8)(n, w.data(), xs.data(), stride, out);
        for (int j = 0; j < rows; ++j) {
          ASSERT_EQ(out[j], single(n, w.data(), xs.data() + j * stride))
              << LowbitName(t) << " " << IsaName(isa) << " " << rows << " rows, row " << j
              << " n=" << n;
        }
      }
    }
  }
  std::printf("%s: %d multi-row kernel(s) checked\n", LowbitName(t).c_str(), kernels);
}

// From AVX2 up the codebook types decode each weight group once per 4 or 8 tokens (the
// single-row kernel they match is AVX2's at every level above scalar).
TEST_P(LowbitTest, CodebookTypesHaveMultiRowKernels) {
  const GgmlType t = GetParam();
  const bool codebook = t == GgmlType::kIQ3_XXS || t == GgmlType::kIQ3_S ||
                        t == GgmlType::kIQ2_XXS || t == GgmlType::kIQ2_XS ||
                        t == GgmlType::kIQ2_S || t == GgmlType::kIQ1_S || t == GgmlType::kIQ1_M;
  if (!codebook || ActiveIsa() == Isa::kScalar) {
    GTEST_SKIP() << LowbitName(t) << " at " << IsaName(ActiveIsa());
  }
  EXPECT_NE(GetVecDot4Fn(t), nullptr) << LowbitName(t);
  EXPECT_NE(GetVecDot8Q8KFn(t), nullptr) << LowbitName(t);
  EXPECT_EQ(GetVecDotFn(t), GetVecDotFnForIsa(t, Isa::kAvx2)) << LowbitName(t);
}

TEST_P(LowbitTest, ZeroActivationsGiveZero) {
  const GgmlType t = GetParam();
  std::mt19937 rng(7);
  const int64_t n = 4 * BlockSize(t);
  const auto w = RandomLowbitRow(rng, t, n);
  const auto xq = LowbitActivation(t, std::vector<float>(n, 0.0f));
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    const VecDotFn fn = GetVecDotFnForIsa(t, isa);
    if (fn != nullptr) {
      EXPECT_EQ(fn(n, w.data(), xq.data()), 0.0f) << LowbitName(t) << " " << IsaName(isa);
    }
  }
}

// MatMul equals the single-row dots for any token count (groups of 8 and 4 tokens through the
// multi-row kernels, the rest single; row blocks of 16 with 37 rows) and thread count; GetRows
// equals DequantizeRow.
TEST_P(LowbitTest, MatMulAndGetRows) {
  const GgmlType t = GetParam();
  std::mt19937 rng(5);
  const int64_t rows = 37, cols = 512;
  std::vector<uint8_t> data;
  for (int64_t r = 0; r < rows; ++r) {
    const auto row = RandomLowbitRow(rng, t, cols);
    data.insert(data.end(), row.begin(), row.end());
  }
  const WeightMatrix w = MakeWeightMatrix(t, data.data(), rows, cols);
  ThreadPool pool(3);
  for (int64_t n_tok : {1, 3, 4, 5, 8, 9, 13, 15, 20}) {
    const auto x = RandomFloats(rng, n_tok * cols, -2.0f, 2.0f);
    std::vector<float> serial(n_tok * rows), parallel(n_tok * rows);
    MatMul(w, x.data(), n_tok, serial.data(), nullptr);
    MatMul(w, x.data(), n_tok, parallel.data(), &pool);
    EXPECT_EQ(serial, parallel) << LowbitName(t);
    for (int64_t tok = 0; tok < n_tok; ++tok) {
      const std::vector<float> xt(x.begin() + tok * cols, x.begin() + (tok + 1) * cols);
      const auto xq = LowbitActivation(t, xt);
      for (int64_t r = 0; r < rows; ++r) {
        const float want = VecDot(t, cols, data.data() + r * w.row_bytes, xq.data());
        ASSERT_EQ(serial[tok * rows + r], want)
            << LowbitName(t) << " token " << tok << " row " << r;
      }
    }
  }
  const int32_t ids[] = {3, 0, 36};
  std::vector<float> out(3 * cols);
  GetRows(w, ids, 3, out.data());
  for (int k = 0; k < 3; ++k) {
    const auto want = Dequantize(t, data.data() + ids[k] * w.row_bytes, cols);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), out.begin() + k * cols)) << LowbitName(t);
  }
}

INSTANTIATE_TEST_SUITE_P(LowbitTypes, LowbitTest, ::testing::ValuesIn(kLowbitTypes),
                         [](const auto& info) { return LowbitName(info.param); });

// Hand-built blocks pin the layouts the llama.cpp files cannot single out.
TEST(LowbitLayouts, Q3KScalesAndHighBits) {
  BlockQ3K b{};
  b.d = F32ToF16(1.0f);
  // Scale 0: low 4 bits 5 (scales[0] & 15), high 2 bits 2 (scales[8] & 3) -> 37 - 32 = 5.
  b.scales[0] = 5;
  b.scales[8] = 2;
  // Scale 13: low bits from scales[5] >> 4 = 1, high bits (scales[9] >> 6) & 3 = 3 -> 49 - 32.
  b.scales[5] = 0x10;
  b.scales[9] = 0xC0;
  b.qs[0] = 0x03;        // element 0: q2 = 3
  b.hmask[0] = 0x01;     // element 0: high bit set -> 3
  b.qs[32 + 16] = 0x0C;  // element 128 + 32 + 16 (scale 8 + 2 + 1 = 11): q2 = 3 at shift 2
  b.qs[32 + 10] = 0x40;  // element 128 + 96 + 10 (scale 8 + 6 = 14 -> 0 - 32): q2 = 1
  std::vector<float> y(256);
  DequantizeRow(GgmlType::kQ3_K, &b, y.data(), 256);
  EXPECT_EQ(y[0], 5.0f * 3);
  EXPECT_EQ(y[1], 5.0f * -4);  // q2 0, no high bit: -4
  EXPECT_EQ(y[128 + 32 + 16], -32.0f * (3 - 4));
  EXPECT_EQ(y[128 + 96 + 10], -32.0f * (1 - 4));
  EXPECT_EQ(y[128 + 96 + 16 + 1], -32.0f * -4);  // scale 15: 0 - 32
  EXPECT_EQ(y[128 + 64 + 16], 17.0f * -4);       // scale 13, q2 0, no high bit
}

TEST(LowbitLayouts, Q2KScalesMinsAndShifts) {
  BlockQ2K b{};
  b.d = F32ToF16(2.0f);
  b.dmin = F32ToF16(0.5f);
  b.scales[0] = 0x31;        // sub-block 0: scale 1, min 3
  b.scales[13] = 0x24;       // sub-block 13 (half 1, shift 4, second 16): scale 4, min 2
  b.qs[0] = 0x02;            // element 0: 2
  b.qs[32 + 16 + 5] = 0x30;  // element 128 + 64 + 16 + 5: 3
  std::vector<float> y(256);
  DequantizeRow(GgmlType::kQ2_K, &b, y.data(), 256);
  EXPECT_EQ(y[0], 2.0f * 1 * 2 - 0.5f * 3);
  EXPECT_EQ(y[1], -0.5f * 3);
  EXPECT_EQ(y[128 + 64 + 16 + 5], 2.0f * 4 * 3 - 0.5f * 2);
  EXPECT_EQ(y[128 + 64 + 16 + 4], -0.5f * 2);
}

TEST(LowbitLayouts, Iq4XsScales) {
  BlockIQ4XS b{};
  b.d = F32ToF16(1.0f);
  b.scales_l[1] = 0x70;     // sub-block 3: low bits 7
  b.scales_h = 0x3 << 6;    // sub-block 3: high bits 3 -> 55 - 32 = 23
  b.qs[3 * 16 + 2] = 0xF0;  // sub-block 3, element 2: level 0 (-127); element 18: level 15
  std::vector<float> y(256);
  DequantizeRow(GgmlType::kIQ4_XS, &b, y.data(), 256);
  EXPECT_EQ(y[96 + 2], 23.0f * -127);
  EXPECT_EQ(y[96 + 18], 23.0f * 113);
  EXPECT_EQ(y[0], -32.0f * -127);  // scale 0 - 32, level 0
}

// MXFP4: the E2M1 levels (OCP MX spec: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and negatives) times 2^(e-127).
TEST(LowbitLayouts, Mxfp4LevelsAndExponent) {
  BlockMXFP4 b{};
  b.e = 127 + 3;  // 2^3
  const float levels[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  std::vector<float> y(32);
  DequantizeRow(GgmlType::kMXFP4, &b, y.data(), 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 8.0f * levels[j]) << j;
    EXPECT_EQ(y[16 + j], 8.0f * levels[15 - j]) << j;
  }
  b.e = 0;  // 2^-127: a subnormal scale, exact
  DequantizeRow(GgmlType::kMXFP4, &b, y.data(), 32);
  EXPECT_EQ(y[7], 6.0f * std::ldexp(1.0f, -127));
  b.e = 1;
  DequantizeRow(GgmlType::kMXFP4, &b, y.data(), 32);
  EXPECT_EQ(y[1], 0.5f * std::ldexp(1.0f, -126));
}

// The reference quantizer is ggml's: the exponent floor(log2(amax)) - 2, nearest levels; values
// already on the grid survive the round trip exactly.
TEST(LowbitLayouts, Mxfp4QuantizerRoundTripsGridValues) {
  std::vector<float> x(64);
  const float levels[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int j = 0; j < 64; ++j) x[j] = (j % 2 ? -1.0f : 1.0f) * levels[j % 8] * 0.25f;
  x[5] = 6.0f * 0.25f;  // amax 1.5: exponent floor(log2(1.5)) - 2 = -2
  std::vector<uint8_t> q(RowBytes(GgmlType::kMXFP4, 64));
  QuantizeRow(GgmlType::kMXFP4, x.data(), q.data(), 64);
  EXPECT_EQ(q[0], 127 - 2);
  std::vector<float> y(64);
  DequantizeRow(GgmlType::kMXFP4, q.data(), y.data(), 64);
  EXPECT_EQ(y, x);
}

}  // namespace
}  // namespace radixlm::kernels
