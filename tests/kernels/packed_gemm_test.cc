// The int8 GEMM over repacked weights (kernels/packed_weights.h): exact repacking of every
// packable type, the dispatched SIMD path bit for bit against the scalar reference, batch
// invariance over token counts, and closeness to the float product of the dequantized weights.
// Every SIMD path the CPU runs (AVX2, AVX-VNNI, AVX-512 VNNI, AMX) is compared, not only the
// dispatched one; the first test prints which.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/isa.h"
#include "kernels/dot.h"
#include "kernels/fp16.h"
#include "kernels/matmul.h"
#include "kernels/packed_weights.h"
#include "kernels/quant.h"
#include "kernels/quant_blocks.h"

namespace radixlm::kernels {
namespace {

using gguf::GgmlType;

struct Case {
  GgmlType type;
  const char* name;
};
const Case kCases[] = {
    {GgmlType::kQ4_0, "Q4_0"},   {GgmlType::kQ4_1, "Q4_1"},     {GgmlType::kQ5_0, "Q5_0"},
    {GgmlType::kQ5_1, "Q5_1"},   {GgmlType::kQ8_0, "Q8_0"},     {GgmlType::kQ4_K, "Q4_K"},
    {GgmlType::kQ5_K, "Q5_K"},   {GgmlType::kQ6_K, "Q6_K"},     {GgmlType::kQ2_K, "Q2_K"},
    {GgmlType::kQ3_K, "Q3_K"},   {GgmlType::kIQ4_NL, "IQ4_NL"}, {GgmlType::kIQ4_XS, "IQ4_XS"},
    {GgmlType::kMXFP4, "MXFP4"}, {GgmlType::kF32, "F32"},       {GgmlType::kF16, "F16"},
    {GgmlType::kBF16, "BF16"},
};

bool IsFloat(GgmlType t) {
  return t == GgmlType::kF32 || t == GgmlType::kF16 || t == GgmlType::kBF16;
}

struct Fixture {
  int64_t rows, cols;
  std::vector<uint8_t> raw;  // GGUF rows
  std::vector<float> dense;  // dequantized [rows, cols]
  WeightMatrix w;
};

// The types without a quantizer here (Q2_K, Q3_K, IQ4_NL, IQ4_XS) and MXFP4 as random blocks:
// every quant, index and scale bit random, the half scales (d, and Q2_K's dmin) in
// [1e-3, 1e-1]; MXFP4's exponents 2^-11 .. 2^2, and 0 .. 3 (the subnormal scales 2^-128,
// 2^-127 and the smallest normal ones) in every block of a `tiny` row (where no larger block
// hides them).
bool IsRandomBlockType(GgmlType t) {
  return t == GgmlType::kQ2_K || t == GgmlType::kQ3_K || t == GgmlType::kIQ4_NL ||
         t == GgmlType::kIQ4_XS || t == GgmlType::kMXFP4;
}
void RandomBlocks(GgmlType type, std::mt19937& rng, uint8_t* row, size_t row_bytes, bool tiny) {
  for (size_t i = 0; i < row_bytes; ++i) row[i] = static_cast<uint8_t>(rng());
  const bool block32 = type == GgmlType::kIQ4_NL || type == GgmlType::kMXFP4;
  const size_t block = RowBytes(type, block32 ? 32 : 256);
  std::vector<size_t> halves = {0};  // offsets of the half scales in a block
  if (type == GgmlType::kQ2_K) halves = {offsetof(BlockQ2K, d), offsetof(BlockQ2K, dmin)};
  if (type == GgmlType::kQ3_K) halves = {offsetof(BlockQ3K, d)};
  std::uniform_real_distribution<float> exponent(-3.0f, -1.0f);
  for (size_t b = 0; b < row_bytes / block; ++b) {
    uint8_t* p = row + b * block;
    if (type == GgmlType::kMXFP4) {
      p[0] = static_cast<uint8_t>(tiny ? rng() % 4 : 117 + rng() % 14);
      continue;
    }
    for (size_t o : halves) {
      const uint16_t h = F32ToF16(std::pow(10.0f, exponent(rng)));
      std::memcpy(p + o, &h, 2);
    }
  }
}

Fixture MakeWeights(GgmlType type, int64_t rows, int64_t cols, uint32_t seed) {
  Fixture f{rows, cols, {}, {}, {}};
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> src(rows * cols);
  for (auto& v : src) v = dist(rng) + 0.3f;  // an offset, so mins matter
  const size_t row_bytes = RowBytes(type, cols);
  f.raw.resize(row_bytes * rows);
  f.dense.resize(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    if (IsRandomBlockType(type)) {
      RandomBlocks(type, rng, f.raw.data() + r * row_bytes, row_bytes, r % 5 == 2);
    } else {
      QuantizeRow(type, src.data() + r * cols, f.raw.data() + r * row_bytes, cols);
    }
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
  for (int64_t c = 0; c < 32; ++c) x[c] = 0.0f;  // an all-zero block (scale 0)
  return x;
}

// Every SIMD implementation this binary has and this CPU runs, whatever the dispatch picks.
struct SimdPath {
  const char* name;
  void (*gemm)(const PackedWeights&, const PackedActivations&, int64_t, int64_t, int64_t, float*,
               int64_t);
};

// The float-weight kernels (F32, F16, BF16) this CPU runs.
std::vector<SimdPath> FloatPathsOnThisCpu() {
  std::vector<SimdPath> paths;
#if defined(RADIXLM_KERNELS_X86)
  if (cpu::CpuHasAvx2()) paths.push_back({"avx2-float", cpu::avx2::FloatGemm});
#endif
#if defined(RADIXLM_KERNELS_AVX512)
  if (cpu::CpuHasAvx512()) paths.push_back({"avx512-float", cpu::avx512::FloatGemm});
#endif
  return paths;
}

std::vector<SimdPath> SimdPathsOnThisCpu() {
  std::vector<SimdPath> paths;
#if defined(RADIXLM_KERNELS_X86)
  if (cpu::CpuHasAvx2()) paths.push_back({"avx2", cpu::avx2::PackedGemm});
#endif
#if defined(RADIXLM_KERNELS_AVX_VNNI)
  if (cpu::CpuHasAvxVnni()) paths.push_back({"avx_vnni", cpu::avxvnni::PackedGemm});
#endif
#if defined(RADIXLM_KERNELS_AVX512_VNNI)
  if (cpu::CpuHasAvx512Vnni()) {
    paths.push_back({"avx512_vnni", [](const PackedWeights& w, const PackedActivations& a,
                                       int64_t n, int64_t g0, int64_t g1, float* y, int64_t ys) {
                       cpu::avx512vnni::PackedGemm(w, a, n, g0, g1, y, ys, false);
                     }});
  }
#endif
#if defined(RADIXLM_KERNELS_AMX)
  if (cpu::CpuHasAvx512Vnni() && cpu::CpuHasAmxInt8()) {
    paths.push_back({"amx", [](const PackedWeights& w, const PackedActivations& a, int64_t n,
                               int64_t g0, int64_t g1, float* y, int64_t ys) {
                       cpu::avx512vnni::PackedGemm(w, a, n, g0, g1, y, ys, cpu::amx::Supports(w));
                     }});
  }
#endif
  return paths;
}

TEST(PackedGemmTest, ReportsTheIsaItExercises) {
  std::string names;
  for (const SimdPath& p : SimdPathsOnThisCpu()) names += std::string(" ") + p.name;
  for (const SimdPath& p : FloatPathsOnThisCpu()) names += std::string(" ") + p.name;
  std::printf("packed GEMM: dispatched %s; SIMD paths tested against the reference:%s\n",
              PackedGemmPathName(ActivePackedGemmPath()), names.empty() ? " none" : names.c_str());
}

TEST(PackedGemmTest, RepackingIsExactForEveryType) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const Fixture f = MakeWeights(c.type, 37, 512, 7);
    const auto p = PackWeights(f.w, nullptr);
    const int n_scales = 32 / p->sub;
    for (int64_t r = 0; r < f.rows; ++r) {
      for (int64_t k = 0; k < f.cols; ++k) {
        const uint8_t* blk = p->Block(r / 16, k / 32);
        const int kk = static_cast<int>(k % 32), lane = static_cast<int>(r % 16);
        if (IsFloat(c.type)) {
          ASSERT_EQ(PackedFloat(*p, blk, lane, kk), f.dense[r * f.cols + k]) << r << " " << k;
          continue;
        }
        const int u = PackedQuant(*p, blk, lane, kk);
        const int s = kk * n_scales / 32;
        float v = p->ScaleD(r / 16, k / 32, s, lane) * static_cast<float>(u - p->offset);
        if (p->has_min) v += p->ScaleM(r / 16, k / 32, lane, s);
        ASSERT_NEAR(v, f.dense[r * f.cols + k], 1e-6f * (1.0f + std::fabs(v)))
            << "row " << r << " col " << k;
      }
    }
  }
}

// Decode reads every packed byte once per token: every type packs to exactly its GGUF bytes per
// weight (the 32-element block types keep their half scales; the K-quants their 6-bit or 8-bit
// scales with the super-block's halves; 5- and 6-bit quants as nibbles plus bit planes).
TEST(PackedGemmTest, EveryTypeKeepsItsGgufBytesPerWeight) {
  const struct {
    GgmlType type;
    double bytes_per_weight;  // the GGUF's block bytes / block elements
  } kSizes[] = {{GgmlType::kQ8_0, 34.0 / 32},   {GgmlType::kQ4_0, 18.0 / 32},
                {GgmlType::kQ5_0, 22.0 / 32},   {GgmlType::kQ4_1, 20.0 / 32},
                {GgmlType::kQ5_1, 24.0 / 32},   {GgmlType::kQ4_K, 144.0 / 256},
                {GgmlType::kQ5_K, 176.0 / 256}, {GgmlType::kQ6_K, 210.0 / 256},
                {GgmlType::kQ2_K, 84.0 / 256},  {GgmlType::kQ3_K, 110.0 / 256},
                {GgmlType::kIQ4_NL, 18.0 / 32}, {GgmlType::kIQ4_XS, 136.0 / 256},
                {GgmlType::kMXFP4, 17.0 / 32}};
  for (const auto& c : kSizes) {
    const Fixture f = MakeWeights(c.type, 32, 512, 3);
    const auto p = PackWeights(f.w, nullptr);
    EXPECT_DOUBLE_EQ(static_cast<double>(p->group_bytes) / (16 * 512), c.bytes_per_weight)
        << static_cast<int>(c.type);
    EXPECT_EQ(static_cast<double>(p->group_bytes) / (16 * 512),
              static_cast<double>(RowBytes(c.type, 512)) / 512)
        << static_cast<int>(c.type);
  }
}

TEST(PackedGemmTest, ScalarAndSimdActivationQuantizersAgreeBitForBit) {
  using QuantizeFn = void (*)(const float*, int64_t, int, int8_t*, float*, int32_t*, float*);
  std::vector<std::pair<const char*, QuantizeFn>> simd;
#if defined(RADIXLM_KERNELS_X86)
  if (cpu::CpuHasAvx2()) simd.push_back({"avx2", cpu::avx2::QuantizeActivationRow});
#endif
#if defined(RADIXLM_KERNELS_AVX512_VNNI)
  if (cpu::CpuHasAvx512Vnni()) {
    simd.push_back({"avx512_vnni", cpu::avx512vnni::QuantizeActivationRow});
  }
#endif
  if (simd.empty()) GTEST_SKIP() << "no SIMD activation quantizer on this CPU";
  const int64_t n = 512;
  const std::vector<float> x = RandomActivations(1, n, 3);
  for (const auto& [name, quantize] : simd) {
    for (int act_block : {32, 256}) {
      SCOPED_TRACE(std::string(name) + " act_block " + std::to_string(act_block));
      std::vector<int8_t> q1(n), q2(n);
      std::vector<float> d1(n / 32), d2(n / 32), s1(n / 32), s2(n / 32);
      std::vector<int32_t> h1(n / 16), h2(n / 16);
      cpu::QuantizeActivationRowScalar(x.data(), n, act_block, q1.data(), d1.data(), h1.data(),
                                       s1.data());
      quantize(x.data(), n, act_block, q2.data(), d2.data(), h2.data(), s2.data());
      EXPECT_EQ(q1, q2);
      EXPECT_EQ(0, std::memcmp(d1.data(), d2.data(), d1.size() * sizeof(float)));
      EXPECT_EQ(h1, h2);
      EXPECT_EQ(0, std::memcmp(s1.data(), s2.data(), s1.size() * sizeof(float)));
      // The same quants as the dot kernels' activation format for that block size.
      const GgmlType act = act_block == 32 ? GgmlType::kQ8_0 : GgmlType::kQ8_K;
      std::vector<uint8_t> ref(RowBytes(act, n));
      QuantizeRow(act, x.data(), ref.data(), n);
      std::vector<float> deq(n);
      DequantizeRow(act, ref.data(), deq.data(), n);
      for (int64_t k = 0; k < n; ++k) {
        ASSERT_EQ(deq[k], d1[k / 32] * static_cast<float>(q1[k])) << k;
      }
    }
  }
}

TEST(PackedGemmTest, EverySimdPathMatchesReferenceBitForBit) {
  const std::vector<SimdPath> quant_paths = SimdPathsOnThisCpu();
  const std::vector<SimdPath> float_paths = FloatPathsOnThisCpu();
  if (quant_paths.empty() && float_paths.empty()) GTEST_SKIP() << "no SIMD packed GEMM here";
  for (const Case& c : kCases) {
    const std::vector<SimdPath>& paths = IsFloat(c.type) ? float_paths : quant_paths;
    // 45 rows: a full group and a partial one (13 rows: one full half, one of 5).
    const Fixture f = MakeWeights(c.type, 45, 512, 21);
    // Float types in the float GEMM's layout even where BF16 packs for the BF16 GEMM
    // (bf16_gemm_test.cc compares that one).
    const auto p = IsFloat(c.type) ? PackFloatWeights(f.w, nullptr) : PackWeights(f.w, nullptr);
    // Token counts around every tile size (2: both halves of a group in one pass; 4, 8, 16)
    // and a longer run.
    for (int64_t n_tokens : {1, 2, 3, 4, 7, 8, 15, 16, 17, 37}) {
      const std::vector<float> x = RandomActivations(n_tokens, f.cols, 9);
      const PackedActivations a =
          QuantizePackedActivations(x.data(), n_tokens, f.cols, p->act_block, nullptr);
      std::vector<float> ref(n_tokens * f.rows);
      PackedGemmReference(*p, a, n_tokens, ref.data(), f.rows);
      for (const SimdPath& path : paths) {
        SCOPED_TRACE(std::string(c.name) + " " + path.name + " tokens " + std::to_string(n_tokens));
        std::vector<float> got(n_tokens * f.rows, -1.0f);
        path.gemm(*p, a, n_tokens, 0, p->groups, got.data(), f.rows);
        ASSERT_EQ(0, std::memcmp(ref.data(), got.data(), ref.size() * sizeof(float)));
      }
    }
  }
}

TEST(PackedGemmTest, DispatchedPathMatchesReferenceAndIsBatchInvariant) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const Fixture f = MakeWeights(c.type, 45, 512, 11);
    const auto p = PackWeights(f.w, nullptr);
    const int64_t n_tokens = 19;
    const std::vector<float> x = RandomActivations(n_tokens, f.cols, 5);
    const PackedActivations a =
        QuantizePackedActivations(x.data(), n_tokens, f.cols, p->act_block, nullptr);
    std::vector<float> ref(n_tokens * f.rows), got(n_tokens * f.rows);
    PackedGemmReference(*p, a, n_tokens, ref.data(), f.rows);
    PackedGemmGroups(*p, a, n_tokens, 0, p->groups, got.data(), f.rows);
    // AMX-BF16 rounds its sums otherwise (bf16_gemm_test.cc bounds it); every other path is
    // the reference's bits.
    if (!(p->bf16_pairs && ActiveBf16GemmPath() == Bf16GemmPath::kAmxBf16)) {
      ASSERT_EQ(0, std::memcmp(ref.data(), got.data(), ref.size() * sizeof(float)));
    }
    // Each token alone gives the same bits as in the batch of 19.
    for (int64_t t = 0; t < n_tokens; ++t) {
      const PackedActivations one =
          QuantizePackedActivations(x.data() + t * f.cols, 1, f.cols, p->act_block, nullptr);
      std::vector<float> y(f.rows);
      PackedGemmGroups(*p, one, 1, 0, p->groups, y.data(), f.rows);
      ASSERT_EQ(0, std::memcmp(y.data(), got.data() + t * f.rows, f.rows * sizeof(float)))
          << "token " << t;
    }
    // Close to the float product with the dequantized weights (activation rounding only).
    for (int64_t t = 0; t < n_tokens; ++t) {
      for (int64_t r = 0; r < f.rows; ++r) {
        double exact = 0.0, mag = 0.0;
        for (int64_t k = 0; k < f.cols; ++k) {
          const double v = static_cast<double>(f.dense[r * f.cols + k]) * x[t * f.cols + k];
          exact += v;
          mag += std::fabs(v);
        }
        ASSERT_NEAR(got[t * f.rows + r], exact, 0.01 * mag) << "token " << t << " row " << r;
      }
    }
  }
}

TEST(PackedGemmTest, MatMulUsesPackedWeightsForAnyThreadCount) {
  const Fixture f = MakeWeights(GgmlType::kQ5_0, 70, 256, 13);
  const auto p = PackWeights(f.w, nullptr);
  WeightMatrix w = f.w;
  w.packed = p.get();
  const int64_t n_tokens = 13;
  const std::vector<float> x = RandomActivations(n_tokens, f.cols, 17);
  std::vector<float> serial(n_tokens * f.rows), threaded(n_tokens * f.rows);
  MatMul(w, x.data(), n_tokens, serial.data(), nullptr);
  ThreadPool pool(3);
  MatMul(w, x.data(), n_tokens, threaded.data(), &pool);
  EXPECT_EQ(0, std::memcmp(serial.data(), threaded.data(), serial.size() * sizeof(float)));
  const PackedActivations a =
      QuantizePackedActivations(x.data(), n_tokens, f.cols, p->act_block, nullptr);
  std::vector<float> ref(n_tokens * f.rows);
  PackedGemmReference(*p, a, n_tokens, ref.data(), f.rows);
  EXPECT_EQ(0, std::memcmp(serial.data(), ref.data(), ref.size() * sizeof(float)));
}

}  // namespace
}  // namespace radixlm::kernels
