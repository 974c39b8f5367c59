// Batch invariance: a token's MatMul output must not depend on which (or how many) other tokens
// share the call. MatMul runs tokens in groups of 8 through the 8-row kernels (VecDot8Fn), then of
// 4 through the 4-row kernels (VecDot4Fn) and the rest through the single-row kernel (VecDotFn),
// and decode (1 token) has its own loop; all of
// these must give bit-identical results, so these tests compare floats with EXPECT_EQ, not NEAR.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/dot.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"
#include "test_util.h"

namespace radixlm::kernels {
namespace {

using testing::kWeightTypes;
using testing::MakeActivation;
using testing::RandomFloats;
using testing::RandomWeightRow;
using testing::ScaleKind;

// Element counts for a type: odd and even block counts (the single-row kernels of the 32-element
// types alternate two accumulators, so the block-count parity matters), and a single block.
std::vector<int64_t> Lengths(GgmlType t) {
  const int64_t b = BlockSize(t);
  if (b == 1) return {8, 64, 77, 512};
  return {b, 2 * b, 3 * b, 7 * b, 16 * b, 17 * b};
}

TEST(BatchInvariance, Dot4IsBitIdenticalToFourSingleRowDots) {
  std::mt19937 rng(4242);
  int checked_types = 0;
  for (GgmlType t : kWeightTypes) {
    const VecDot4Fn dot4 = GetVecDot4Fn(t);
    if (dot4 == nullptr) continue;  // MatMul uses the single-row kernel for every token
    ++checked_types;
    const VecDotFn dot = GetVecDotFn(t);
    ASSERT_NE(dot, nullptr);
    const GgmlType act = ActivationType(t);
    for (int64_t n : Lengths(t)) {
      for (ScaleKind kind : {ScaleKind::kNormal, ScaleKind::kMixed, ScaleKind::kTiny}) {
        for (int rep = 0; rep < 4; ++rep) {
          const std::vector<uint8_t> w = RandomWeightRow(rng, t, n, kind);
          // 4 activation rows with a stride larger than one row (as MatMul may use).
          const size_t row_bytes = RowBytes(act, n);
          const size_t stride = row_bytes + 64 * (rep % 2);
          std::vector<uint8_t> x(4 * stride, 0);
          for (int j = 0; j < 4; ++j) {
            const float scale = j == 3 ? 100.0f : 1.0f;
            const auto xf = RandomFloats(rng, n, -scale, scale);
            const auto xq = MakeActivation(t, xf);
            std::copy(xq.begin(), xq.end(), x.begin() + j * stride);
          }
          float out[4] = {-1.0f, -1.0f, -1.0f, -1.0f};
          dot4(n, w.data(), x.data(), stride, out);
          for (int j = 0; j < 4; ++j) {
            EXPECT_EQ(out[j], dot(n, w.data(), x.data() + j * stride))
                << "type " << static_cast<int>(t) << " n " << n << " row " << j << " kind "
                << static_cast<int>(kind) << " rep " << rep;
          }
        }
      }
    }
  }
  // On AVX2 machines (no AVX-512 single-row kernels) every 4-row kernel is in use.
  if (ActiveIsa() == Isa::kAvx2 || ActiveIsa() == Isa::kAvxVnni) {
    EXPECT_EQ(checked_types, 5);
  }
}

TEST(BatchInvariance, Dot8IsBitIdenticalToEightSingleRowDots) {
  std::mt19937 rng(4343);
  int checked_types = 0;
  for (GgmlType t : kWeightTypes) {
    const VecDot8Fn dot8 = GetVecDot8Fn(t);
    if (dot8 == nullptr) continue;
    ++checked_types;
    ASSERT_EQ(ActivationType(t), GgmlType::kQ8_0);
    const VecDotFn dot = GetVecDotFn(t);
    ASSERT_NE(dot, nullptr);
    for (int64_t n : Lengths(t)) {
      const int64_t nb = n / BlockSize(GgmlType::kQ8_0);
      for (ScaleKind kind : {ScaleKind::kNormal, ScaleKind::kMixed, ScaleKind::kTiny}) {
        for (int rep = 0; rep < 4; ++rep) {
          const std::vector<uint8_t> w = RandomWeightRow(rng, t, n, kind);
          const size_t row_bytes = RowBytes(GgmlType::kQ8_0, n);
          const size_t stride = row_bytes + 64 * (rep % 2);
          std::vector<uint8_t> x(8 * stride, 0);
          for (int j = 0; j < 8; ++j) {
            const float scale = j % 4 == 3 ? 100.0f : j == 5 ? 1e-3f : 1.0f;
            const auto xq = MakeActivation(t, RandomFloats(rng, n, -scale, scale));
            std::copy(xq.begin(), xq.end(), x.begin() + j * stride);
          }
          // Split layout; odd row strides too (alignment is a speed matter only).
          const size_t qs_stride = static_cast<size_t>(n) + (rep % 2 == 0 ? 0 : 5);
          std::vector<int8_t> qs(8 * qs_stride, 0);
          std::vector<float> scales(8 * nb);
          SplitQ8_0x8(n, x.data(), stride, qs.data(), qs_stride, scales.data());
          float out[8];
          std::fill(out, out + 8, -1.0f);
          dot8(n, w.data(), qs.data(), qs_stride, scales.data(), out);
          for (int j = 0; j < 8; ++j) {
            EXPECT_EQ(out[j], dot(n, w.data(), x.data() + j * stride))
                << "type " << static_cast<int>(t) << " n " << n << " row " << j << " kind "
                << static_cast<int>(kind) << " rep " << rep;
          }
        }
      }
    }
  }
  // On AVX2 machines the Q4_0, Q5_0 and Q8_0 8-row kernels are in use.
  if (ActiveIsa() == Isa::kAvx2 || ActiveIsa() == Isa::kAvxVnni) {
    EXPECT_EQ(checked_types, 3);
  }
}

TEST(BatchInvariance, MatMulRowDoesNotDependOnTokenCount) {
  std::mt19937 rng(777);
  ThreadPool pool3(3);
  for (GgmlType t : kWeightTypes) {
    const int64_t b = BlockSize(t);
    // Odd block count for the 32-element types; 3 super-blocks for the K types.
    const int64_t cols = b == 1 ? 96 : b == 32 ? 17 * 32 : 3 * b;
    const int64_t rows = 37;  // not a multiple of the row blocking (16)
    std::vector<uint8_t> wdata(RowBytes(t, cols) * rows);
    for (int64_t r = 0; r < rows; ++r) {
      const auto row = RandomWeightRow(rng, t, cols, ScaleKind::kNormal);
      std::copy(row.begin(), row.end(), wdata.begin() + r * row.size());
    }
    const WeightMatrix w = MakeWeightMatrix(t, wdata.data(), rows, cols);
    // Up to 19 tokens: groups of 8 (VecDot8Fn), of 4 (VecDot4Fn) and single rows.
    constexpr int64_t kMaxTok = 19;
    const auto x = RandomFloats(rng, kMaxTok * cols, -2.0f, 2.0f);
    // Each token alone (the decode path).
    std::vector<float> single(kMaxTok * rows);
    for (int64_t tok = 0; tok < kMaxTok; ++tok) {
      MatMul(w, x.data() + tok * cols, 1, single.data() + tok * rows, nullptr);
    }
    for (int64_t n_tok = 1; n_tok <= kMaxTok; ++n_tok) {
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool3}) {
        // Tokens [off, off + n_tok) of x, so each token also lands at different batch positions.
        for (int64_t off : {int64_t{0}, kMaxTok - n_tok}) {
          std::vector<float> y(n_tok * rows, -1.0f);
          MatMul(w, x.data() + off * cols, n_tok, y.data(), pool);
          for (int64_t tok = 0; tok < n_tok; ++tok) {
            for (int64_t r = 0; r < rows; ++r) {
              ASSERT_EQ(y[tok * rows + r], single[(off + tok) * rows + r])
                  << "type " << static_cast<int>(t) << " n_tok " << n_tok << " off " << off
                  << " token " << tok << " row " << r << (pool ? " pool" : " serial");
            }
          }
        }
      }
    }
  }
}

TEST(BatchInvariance, MatMulMultiMatchesSingleTokenMatMul) {
  std::mt19937 rng(99);
  const int64_t cols = 512, rows = 21;
  std::vector<std::vector<uint8_t>> storage;
  std::vector<WeightMatrix> ws;
  for (GgmlType t : {GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ6_K, GgmlType::kQ5_0}) {
    std::vector<uint8_t> wdata(RowBytes(t, cols) * rows);
    for (int64_t r = 0; r < rows; ++r) {
      const auto row = RandomWeightRow(rng, t, cols, ScaleKind::kNormal);
      std::copy(row.begin(), row.end(), wdata.begin() + r * row.size());
    }
    storage.push_back(std::move(wdata));
    ws.push_back(MakeWeightMatrix(t, storage.back().data(), rows, cols));
  }
  const int64_t n_tok = 13;  // one group of 8, one of 4, one single row
  const auto x = RandomFloats(rng, n_tok * cols, -2.0f, 2.0f);
  std::vector<std::vector<float>> ys(ws.size(), std::vector<float>(n_tok * rows));
  std::vector<MatMulOutput> outs;
  for (size_t k = 0; k < ws.size(); ++k) outs.push_back(MatMulOutput{&ws[k], ys[k].data()});
  MatMulMulti(outs, x.data(), n_tok, nullptr);
  for (size_t k = 0; k < ws.size(); ++k) {
    for (int64_t tok = 0; tok < n_tok; ++tok) {
      std::vector<float> y1(rows);
      MatMul(ws[k], x.data() + tok * cols, 1, y1.data(), nullptr);
      for (int64_t r = 0; r < rows; ++r) {
        ASSERT_EQ(ys[k][tok * rows + r], y1[r]) << "output " << k << " token " << tok;
      }
    }
  }
}

}  // namespace
}  // namespace radixlm::kernels
