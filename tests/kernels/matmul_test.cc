#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <random>
#include <vector>

#include "kernels/dot.h"
#include "kernels/packed_weights.h"
#include "kernels/quant.h"
#include "test_util.h"

namespace radixlm::kernels {
namespace {

using testing::Dequantize;
using testing::RandomFloats;

struct QuantizedMatrix {
  std::vector<uint8_t> data;
  WeightMatrix w;
};

QuantizedMatrix MakeMatrix(std::mt19937& rng, GgmlType t, int64_t rows, int64_t cols) {
  QuantizedMatrix m;
  m.data.resize(RowBytes(t, cols) * rows);
  m.w = MakeWeightMatrix(t, m.data.data(), rows, cols);
  for (int64_t r = 0; r < rows; ++r) {
    const auto f = RandomFloats(rng, cols);
    QuantizeRow(t, f.data(), m.data.data() + r * m.w.row_bytes, cols);
  }
  return m;
}

// Reference: y[t, r] = dot(dequant(W[r]), dequant(quant_act(x[t]))) in double.
std::vector<double> Reference(const WeightMatrix& w, const std::vector<float>& x, int64_t n_tok,
                              std::vector<double>* mag) {
  std::vector<double> y(n_tok * w.rows);
  mag->assign(n_tok * w.rows, 0.0);
  const GgmlType act = ActivationType(w.type);
  for (int64_t t = 0; t < n_tok; ++t) {
    std::vector<float> xt(x.begin() + t * w.cols, x.begin() + (t + 1) * w.cols);
    std::vector<uint8_t> xq(RowBytes(act, w.cols));
    QuantizeRow(act, xt.data(), xq.data(), w.cols);
    const auto xd = Dequantize(act, xq.data(), w.cols);
    for (int64_t r = 0; r < w.rows; ++r) {
      const auto* row = static_cast<const uint8_t*>(w.data) + r * w.row_bytes;
      const auto wd = Dequantize(w.type, row, w.cols);
      double abs_sum;
      y[t * w.rows + r] = testing::RefDot(wd, xd, &abs_sum);
      (*mag)[t * w.rows + r] = abs_sum;
    }
  }
  return y;
}

TEST(MatMul, MatchesReferenceForAllTypesTokenCountsAndThreads) {
  std::mt19937 rng(11);
  ThreadPool pool3(3);
  for (GgmlType t : testing::kWeightTypes) {
    const int64_t cols = 512, rows = 37;  // rows not a multiple of the blocking
    QuantizedMatrix m = MakeMatrix(rng, t, rows, cols);
    for (int64_t n_tok : {1, 2, 5, 33}) {
      const auto x = RandomFloats(rng, n_tok * cols, -2.0f, 2.0f);
      std::vector<double> mag;
      const auto ref = Reference(m.w, x, n_tok, &mag);
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool3}) {
        std::vector<float> y(n_tok * rows, -1.0f);
        MatMul(m.w, x.data(), n_tok, y.data(), pool);
        for (int64_t i = 0; i < n_tok * rows; ++i) {
          // Tolerance covers K-quant min/scale cancellation (see dot_test) generously.
          ASSERT_NEAR(y[i], ref[i], 1e-5 * mag[i] + 1e-5)
              << "type " << static_cast<int>(t) << " n_tok " << n_tok << " i " << i;
        }
      }
    }
  }
}

TEST(MatMul, QuantizedActivationsStayCloseToFloatMath) {
  // Against unquantized activations the error is bounded by the activation quantization.
  std::mt19937 rng(12);
  const int64_t cols = 256, rows = 16, n_tok = 3;
  for (GgmlType t : {GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ6_K}) {
    QuantizedMatrix m = MakeMatrix(rng, t, rows, cols);
    const auto x = RandomFloats(rng, n_tok * cols);
    std::vector<float> y(n_tok * rows);
    MatMul(m.w, x.data(), n_tok, y.data(), nullptr);
    for (int64_t tok = 0; tok < n_tok; ++tok) {
      const std::vector<float> xt(x.begin() + tok * cols, x.begin() + (tok + 1) * cols);
      for (int64_t r = 0; r < rows; ++r) {
        const auto wd =
            Dequantize(t, static_cast<const uint8_t*>(m.w.data) + r * m.w.row_bytes, cols);
        double abs_sum;
        const double ref = testing::RefDot(wd, xt, &abs_sum);
        EXPECT_NEAR(y[tok * rows + r], ref, 0.01 * abs_sum);
      }
    }
  }
}

TEST(MatMul, MultiEqualsSeparateCalls) {
  std::mt19937 rng(13);
  ThreadPool pool(2);
  const int64_t cols = 256;
  QuantizedMatrix a = MakeMatrix(rng, GgmlType::kQ5_0, 40, cols);
  QuantizedMatrix b = MakeMatrix(rng, GgmlType::kQ4_K, 17, cols);
  QuantizedMatrix c = MakeMatrix(rng, GgmlType::kF16, 9, cols);
  for (int64_t n_tok : {1, 6}) {
    const auto x = RandomFloats(rng, n_tok * cols);
    std::vector<float> ya(n_tok * 40), yb(n_tok * 17), yc(n_tok * 9);
    const MatMulOutput outs[] = {{&a.w, ya.data()}, {&b.w, yb.data()}, {&c.w, yc.data()}};
    MatMulMulti(outs, x.data(), n_tok, &pool);
    std::vector<float> ra(ya.size()), rb(yb.size()), rc(yc.size());
    MatMul(a.w, x.data(), n_tok, ra.data(), nullptr);
    MatMul(b.w, x.data(), n_tok, rb.data(), nullptr);
    MatMul(c.w, x.data(), n_tok, rc.data(), nullptr);
    EXPECT_EQ(ya, ra);
    EXPECT_EQ(yb, rb);
    EXPECT_EQ(yc, rc);
  }
}

// A prologue (the layer's norm / residual / activation fused into the matmul's quantization
// region) runs exactly once on every row before the matmul reads it: the result equals the
// matmul of the rows it writes, for packed, plain and mixed outputs, inline and parallel.
TEST(MatMul, PrologueRunsOnceOnEveryRowBeforeItIsRead) {
  std::mt19937 rng(15);
  ThreadPool pool(2);
  const int64_t cols = 256;
  QuantizedMatrix a = MakeMatrix(rng, GgmlType::kQ5_0, 40, cols);
  QuantizedMatrix b = MakeMatrix(rng, GgmlType::kQ4_K, 17, cols);
  QuantizedMatrix c = MakeMatrix(rng, GgmlType::kF16, 9, cols);
  std::unique_ptr<PackedWeights> pa, pb;
  if (PackedGemmAvailable()) {
    pa = PackWeights(a.w, &pool);
    pb = PackWeights(b.w, &pool);
  }
  for (bool packed : {false, true}) {
    a.w.packed = packed ? pa.get() : nullptr;
    b.w.packed = packed ? pb.get() : nullptr;
    for (int64_t n_tok : {1, 6, 40}) {
      const auto src = RandomFloats(rng, n_tok * cols);
      std::vector<float> ya(n_tok * 40), yb(n_tok * 17), yc(n_tok * 9);
      std::vector<float> ra(ya.size()), rb(yb.size()), rc(yc.size());
      const MatMulOutput outs[] = {{&a.w, ya.data()}, {&b.w, yb.data()}, {&c.w, yc.data()}};
      const MatMulOutput refs[] = {{&a.w, ra.data()}, {&b.w, rb.data()}, {&c.w, rc.data()}};
      MatMulMulti(refs, src.data(), n_tok, &pool);
      std::vector<float> x(src.size(), 1e30f);  // garbage until the prologue writes a row
      std::vector<std::atomic<int>> calls(n_tok);
      const RowPrologue prologue = [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          std::copy_n(src.data() + t * cols, cols, x.data() + t * cols);
          calls[t].fetch_add(1);
        }
      };
      MatMulMulti(outs, x.data(), n_tok, &pool, &prologue);
      for (int64_t t = 0; t < n_tok; ++t) EXPECT_EQ(calls[t].load(), 1) << t;
      EXPECT_EQ(ya, ra) << packed << " " << n_tok;
      EXPECT_EQ(yb, rb) << packed << " " << n_tok;
      EXPECT_EQ(yc, rc) << packed << " " << n_tok;
    }
  }
}

// GroupedMatMul (a mixture of experts' GEMMs): each item's rows of the input through its own
// weights give, bit for bit, what MatMulMulti gives for those rows alone, packed or not, for
// segments of 1, 5 and 23 rows with padding between them (padding rows hold 1e30 where the
// prologue does not write them).
TEST(GroupedMatMul, EachItemEqualsItsOwnMatMul) {
  std::mt19937 rng(16);
  ThreadPool pool(2);
  const int64_t cols = 256, rows = 48;
  for (GgmlType type : {GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kF32}) {
    std::vector<QuantizedMatrix> gate, up;
    std::vector<std::unique_ptr<PackedWeights>> packs;
    for (int e = 0; e < 3; ++e) {
      gate.push_back(MakeMatrix(rng, type, rows, cols));
      up.push_back(MakeMatrix(rng, type, rows, cols));
    }
    for (bool packed : {false, true}) {
      if (packed && !PackedGemmAvailable()) continue;
      for (auto* ms : {&gate, &up}) {
        for (QuantizedMatrix& m : *ms) {
          m.w.packed = nullptr;
          if (packed) {
            packs.push_back(PackWeights(m.w, &pool));
            m.w.packed = packs.back().get();
          }
        }
      }
      const int64_t counts[3] = {1, 5, 23};
      const int64_t firsts[3] = {0, 16, 32};
      const int64_t n_tok = 64;  // rows 55..63 and the gaps: padding
      const auto src = RandomFloats(rng, n_tok * cols);
      std::vector<float> x(src.size(), 1e30f);  // written by the prologue
      std::vector<std::atomic<int>> calls(n_tok);
      const RowPrologue prologue = [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          std::copy_n(src.data() + t * cols, cols, x.data() + t * cols);
          calls[t].fetch_add(1);
        }
      };
      std::vector<std::vector<float>> yg(3), yu(3);
      std::vector<GroupedMatMulItem> items(3);
      for (int e = 0; e < 3; ++e) {
        yg[e].assign(counts[e] * rows, 0.0f);
        yu[e].assign(counts[e] * rows, 0.0f);
        items[e].w[0] = &gate[e].w;
        items[e].w[1] = &up[e].w;
        items[e].y[0] = yg[e].data();
        items[e].y[1] = yu[e].data();
        items[e].first = firsts[e];
        items[e].rows = counts[e];
      }
      GroupedMatMul(items, x.data(), n_tok, &pool, &prologue);
      // Int8-quantized activations: the prologue runs over the items' rows only (padding is
      // neither written nor quantized); float activations: over every row, as x is read.
      const bool live_only = packed && type != GgmlType::kF32;
      for (int64_t t = 0; t < n_tok; ++t) {
        bool live = false;
        for (int e = 0; e < 3; ++e) live |= t >= firsts[e] && t < firsts[e] + counts[e];
        EXPECT_EQ(calls[t].load(), live || !live_only ? 1 : 0) << t;
      }
      for (int e = 0; e < 3; ++e) {
        std::vector<float> rg(yg[e].size()), ru(yu[e].size());
        const MatMulOutput refs[] = {{&gate[e].w, rg.data()}, {&up[e].w, ru.data()}};
        MatMulMulti(refs, src.data() + firsts[e] * cols, counts[e], &pool);
        EXPECT_EQ(yg[e], rg) << static_cast<int>(type) << " packed " << packed << " item " << e;
        EXPECT_EQ(yu[e], ru) << static_cast<int>(type) << " packed " << packed << " item " << e;
      }
    }
  }
}

TEST(GetRows, DequantizesSelectedRows) {
  std::mt19937 rng(14);
  for (GgmlType t : {GgmlType::kQ8_0, GgmlType::kQ6_K, GgmlType::kF32, GgmlType::kBF16}) {
    QuantizedMatrix m = MakeMatrix(rng, t, 10, 256);
    const int32_t ids[] = {3, 0, 9, 3};
    std::vector<float> out(4 * 256);
    GetRows(m.w, ids, 4, out.data());
    for (int i = 0; i < 4; ++i) {
      const auto ref =
          Dequantize(t, static_cast<const uint8_t*>(m.w.data) + ids[i] * m.w.row_bytes, 256);
      for (int j = 0; j < 256; ++j) ASSERT_EQ(out[i * 256 + j], ref[j]);
    }
  }
}

}  // namespace
}  // namespace radixlm::kernels
