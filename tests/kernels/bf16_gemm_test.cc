// The BF16 GEMM over BF16 weights packed in k pairs (kernels/packed_weights.h, bf16_pairs):
// exact repacking; activations rounded to bf16 as llama.cpp rounds them (to nearest even); the
// AVX512-BF16 kernel bit for bit against the scalar reference (which adds each pair's products,
// odd column first, in vdpbf16ps's order); the AMX-BF16 tiles within the float rounding of that
// sum and the same bits for a token whatever its batch; odd shapes (32-column blocks in odd
// numbers, rows that leave a partial group); the dispatch at this process's ISA level.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/isa.h"
#include "kernels/dot.h"
#include "kernels/fp16.h"
#include "kernels/matmul.h"
#include "kernels/packed_weights.h"
#include "util/thread_pool.h"

namespace radixlm::kernels {
namespace {

using gguf::GgmlType;

struct Bf16Matrix {
  int64_t rows, cols;
  std::vector<uint16_t> raw;  // [rows, cols] bf16, as a GGUF or safetensors holds it
  WeightMatrix w;
};

Bf16Matrix RandomBf16(int64_t rows, int64_t cols, uint32_t seed) {
  Bf16Matrix m{rows, cols, std::vector<uint16_t>(rows * cols), {}};
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 0.05f);
  for (auto& v : m.raw) v = F32ToBf16(dist(rng));
  m.w = MakeWeightMatrix(GgmlType::kBF16, m.raw.data(), rows, cols);
  return m;
}

std::vector<float> RandomX(int64_t n_tokens, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  std::vector<float> x(n_tokens * cols);
  for (auto& v : x) v = dist(rng);
  return x;
}

using GemmFn = void (*)(const PackedWeights&, const PackedActivations&, int64_t, int64_t, int64_t,
                        float*, int64_t);
struct Path {
  const char* name;
  GemmFn gemm;
  bool bitwise;  // the reference's bits (else within the rounding bound below)
};

// Every BF16 GEMM this binary has and this CPU runs, whatever RADIXLM_ISA dispatches.
std::vector<Path> PathsOnThisCpu() {
  std::vector<Path> paths;
#if defined(RADIXLM_KERNELS_AVX512_BF16)
  if (cpu::CpuHasAvx512Bf16()) paths.push_back({"avx512_bf16", cpu::avx512bf16::Bf16Gemm, true});
#endif
#if defined(RADIXLM_KERNELS_AMX_BF16)
  if (cpu::CpuHasAmxBf16()) paths.push_back({"amx_bf16", cpu::amxbf16::Bf16Gemm, false});
#endif
  return paths;
}

// sum_k |w x| over row r and token t, with the activations rounded to bf16.
double Magnitude(const Bf16Matrix& m, const std::vector<float>& x, int64_t t, int64_t r) {
  double mag = 0.0;
  for (int64_t k = 0; k < m.cols; ++k) {
    mag += std::fabs(static_cast<double>(Bf16ToF32(m.raw[r * m.cols + k])) *
                     Bf16ToF32(F32ToBf16(x[t * m.cols + k])));
  }
  return mag;
}

TEST(Bf16GemmTest, ReportsThePathsItExercises) {
  std::string names;
  for (const Path& p : PathsOnThisCpu()) names += std::string(" ") + p.name;
  std::printf("BF16 GEMM: dispatched %s (ISA level %s); paths tested:%s\n",
              Bf16GemmPathName(ActiveBf16GemmPath()), IsaName(ActiveIsa()),
              names.empty() ? " none" : names.c_str());
}

TEST(Bf16GemmTest, DispatchFollowsTheIsaLevel) {
  const auto m = RandomBf16(20, 64, 1);
  const auto p = PackWeights(m.w, nullptr);
  const Bf16GemmPath path = ActiveBf16GemmPath();
  EXPECT_EQ(p->bf16_pairs, path != Bf16GemmPath::kNone);
  if (ActiveIsa() < Isa::kAvx512 || !cpu::CpuHasAvx512Bf16()) {
    EXPECT_EQ(path, Bf16GemmPath::kNone);
  }
  if (path == Bf16GemmPath::kAmxBf16) {
    EXPECT_EQ(ActiveIsa(), Isa::kAmx);
    EXPECT_TRUE(cpu::CpuHasAmxBf16());
  }
  // Other types keep their layouts.
  std::vector<float> f32(20 * 64, 0.5f);
  EXPECT_FALSE(
      PackWeights(MakeWeightMatrix(GgmlType::kF32, f32.data(), 20, 64), nullptr)->bf16_pairs);
}

TEST(Bf16GemmTest, PairRepackingIsExactAndKeepsTwoBytesPerWeight) {
  const auto m = RandomBf16(37, 96, 2);
  const auto p = PackBf16PairWeights(m.w, nullptr);
  ASSERT_TRUE(p->bf16_pairs);
  EXPECT_EQ(p->quant_bytes, 32u * 16u * 2u);
  EXPECT_EQ(p->group_bytes, (p->quant_bytes * 3 + 63) / 64 * 64);
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t k = 0; k < m.cols; ++k) {
      const float v = PackedFloat(*p, p->Block(r / 16, k / 32), static_cast<int>(r % 16),
                                  static_cast<int>(k % 32));
      ASSERT_EQ(v, Bf16ToF32(m.raw[r * m.cols + k])) << r << " " << k;
    }
  }
  // Pair p of row r: 64 p + 4 r, the even column first (vdpbf16ps / AMX B layout).
  uint16_t h;
  std::memcpy(&h, p->Block(1, 2) + 64 * 3 + 4 * 5 + 2, 2);
  EXPECT_EQ(h, m.raw[(16 + 5) * m.cols + 64 + 7]);
}

TEST(Bf16GemmTest, ActivationsAreRoundedToNearestEven) {
  const std::vector<float> x = {1.0f + 0x1p-8f,    // halfway, even below: down
                                1.0f + 0x3p-8f,    // halfway, odd below: up
                                1.0f + 0x1.2p-8f,  // above halfway: up
                                -3.0f - 0x1p-7f};  // halfway, negative
  std::vector<float> row(32, 0.0f);
  std::copy(x.begin(), x.end(), row.begin());
  const PackedActivations a = QuantizePackedActivations(row.data(), 1, 32, kActBf16, nullptr);
  ASSERT_NE(a.xb, nullptr);
  EXPECT_EQ(Bf16ToF32(a.xb[0]), 1.0f);
  EXPECT_EQ(Bf16ToF32(a.xb[1]), 1.0f + 0x1p-6f);
  EXPECT_EQ(Bf16ToF32(a.xb[2]), 1.0f + 0x1p-7f);
  EXPECT_EQ(Bf16ToF32(a.xb[3]), -3.0f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.xb) % 64, 0u);
}

TEST(Bf16GemmTest, EveryPathMatchesTheReference) {
  const std::vector<Path> paths = PathsOnThisCpu();
  if (paths.empty()) GTEST_SKIP() << "no AVX512-BF16 on this CPU";
  // 45 rows (a partial group); 96 and 480 columns (3 and 15 blocks: odd counts), and 512.
  for (int64_t cols : {96, 480, 512}) {
    const auto m = RandomBf16(45, cols, 3);
    const auto p = PackBf16PairWeights(m.w, nullptr);
    for (int64_t n_tokens : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 37}) {
      const std::vector<float> x = RandomX(n_tokens, cols, 4);
      const PackedActivations a =
          QuantizePackedActivations(x.data(), n_tokens, cols, kActBf16, nullptr);
      std::vector<float> ref(n_tokens * m.rows);
      PackedGemmReference(*p, a, n_tokens, ref.data(), m.rows);
      for (const Path& path : paths) {
        SCOPED_TRACE(std::string(path.name) + " cols " + std::to_string(cols) + " tokens " +
                     std::to_string(n_tokens));
        std::vector<float> got(n_tokens * m.rows + 16, -7.0f);  // past the end: untouched
        path.gemm(*p, a, n_tokens, 0, p->groups, got.data(), m.rows);
        for (size_t i = ref.size(); i < got.size(); ++i) ASSERT_EQ(got[i], -7.0f);
        if (path.bitwise) {
          ASSERT_EQ(0, std::memcmp(ref.data(), got.data(), ref.size() * sizeof(float)));
          continue;
        }
        // Both sum the same exact products, each with a float rounding per addition at most:
        // apart by at most 2 cols 2^-24 sum |w x|.
        for (int64_t t = 0; t < n_tokens; ++t) {
          for (int64_t r = 0; r < m.rows; ++r) {
            const double bound = 2.0 * static_cast<double>(cols) * 0x1p-24 * Magnitude(m, x, t, r);
            ASSERT_NEAR(got[t * m.rows + r], ref[t * m.rows + r], bound) << t << " " << r;
          }
        }
      }
    }
  }
}

// A token's outputs are the same bits alone, in any batch and at any place in a tile, on every
// path, and through MatMul with or without threads.
TEST(Bf16GemmTest, EveryPathIsBatchInvariant) {
  std::vector<Path> paths = PathsOnThisCpu();
  if (paths.empty()) GTEST_SKIP() << "no AVX512-BF16 on this CPU";
  const auto m = RandomBf16(70, 224, 5);
  const auto p = PackBf16PairWeights(m.w, nullptr);
  const int64_t n_tokens = 37;
  const std::vector<float> x = RandomX(n_tokens, m.cols, 6);
  for (const Path& path : paths) {
    SCOPED_TRACE(path.name);
    const PackedActivations all =
        QuantizePackedActivations(x.data(), n_tokens, m.cols, kActBf16, nullptr);
    std::vector<float> batch(n_tokens * m.rows);
    path.gemm(*p, all, n_tokens, 0, p->groups, batch.data(), m.rows);
    for (int64_t t = 0; t < n_tokens; ++t) {
      for (int64_t n : {int64_t{1}, int64_t{6}, int64_t{16}}) {
        if (t + n > n_tokens) continue;  // token t first in a batch of n
        const PackedActivations a =
            QuantizePackedActivations(x.data() + t * m.cols, n, m.cols, kActBf16, nullptr);
        std::vector<float> y(n * m.rows);
        path.gemm(*p, a, n, 0, p->groups, y.data(), m.rows);
        ASSERT_EQ(0, std::memcmp(y.data(), batch.data() + t * m.rows, m.rows * sizeof(float)))
            << "token " << t << " in a batch of " << n;
      }
    }
    // Groups split across calls (as threads split them) give the same bits (the activations
    // rounded again: each call above reused this thread's scratch).
    const PackedActivations again =
        QuantizePackedActivations(x.data(), n_tokens, m.cols, kActBf16, nullptr);
    std::vector<float> split(n_tokens * m.rows);
    path.gemm(*p, again, n_tokens, 0, 3, split.data(), m.rows);
    path.gemm(*p, again, n_tokens, 3, p->groups, split.data(), m.rows);
    ASSERT_EQ(0, std::memcmp(split.data(), batch.data(), batch.size() * sizeof(float)));
  }
  // MatMul at the dispatched level: serial, threaded, and per token.
  WeightMatrix w = m.w;
  const auto packed = PackWeights(m.w, nullptr);
  w.packed = packed.get();
  std::vector<float> serial(n_tokens * m.rows), threaded(n_tokens * m.rows), one(m.rows);
  MatMul(w, x.data(), n_tokens, serial.data(), nullptr);
  ThreadPool pool(3);
  MatMul(w, x.data(), n_tokens, threaded.data(), &pool);
  EXPECT_EQ(0, std::memcmp(serial.data(), threaded.data(), serial.size() * sizeof(float)));
  for (int64_t t = 0; t < n_tokens; ++t) {
    MatMul(w, x.data() + t * m.cols, 1, one.data(), nullptr);
    ASSERT_EQ(0, std::memcmp(one.data(), serial.data() + t * m.rows, m.rows * sizeof(float)))
        << "token " << t;
  }
  // And close to the exact product of the weights with the unrounded activations (bf16
  // rounding of x: 2^-9 relative per product).
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = 0; r < m.rows; ++r) {
      double exact = 0.0;
      for (int64_t k = 0; k < m.cols; ++k) {
        exact += static_cast<double>(Bf16ToF32(m.raw[r * m.cols + k])) * x[t * m.cols + k];
      }
      ASSERT_NEAR(serial[t * m.rows + r], exact, 0x1p-8 * Magnitude(m, x, t, r));
    }
  }
}

}  // namespace
}  // namespace radixlm::kernels
