// What the K-quant tables of bench/order_cost_bench.cc share (order_cost_q4k.cc,
// order_cost_q6k.cc): the problem (random weights of one K-quant type, activations quantized to
// Q8_K) and the table loop, which times radixlm's MatMul against an order kernel after checking
// that kernel bit for bit against the scalar statement of its order.
#pragma once

#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "bench/order_cost.h"
#include "kernels/matmul.h"
#include "kernels/packed_weights.h"
#include "kernels/quant.h"
#include "kernels/quant_blocks.h"

namespace radixlm::order_cost {

template <typename Block>
struct KQuantProblem {
  int64_t rows, cols, tokens;
  std::vector<Block> w;              // rows x nb
  std::vector<float> x;              // tokens x cols
  std::vector<kernels::BlockQ8K> a;  // tokens x nb: x quantized as the matmul quantizes it
  int64_t nb() const { return cols / kernels::kQK_K; }
};

template <typename Block>
KQuantProblem<Block> MakeKQuantProblem(gguf::GgmlType type, int64_t rows, int64_t cols,
                                       int64_t tokens, uint32_t seed) {
  KQuantProblem<Block> p{rows, cols, tokens, {}, {}, {}};
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> row(cols);
  p.w.resize(rows * p.nb());
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = dist(rng);
    kernels::QuantizeRow(type, row.data(), p.w.data() + r * p.nb(), cols);
  }
  p.x.resize(tokens * cols);
  for (auto& v : p.x) v = dist(rng);
  p.a.resize(tokens * p.nb());
  for (int64_t t = 0; t < tokens; ++t) {
    kernels::QuantizeRowQ8K(p.x.data() + t * cols, p.a.data() + t * p.nb(), cols);
  }
  return p;
}

// One table over the ffn_down shape: reference(w_row, a_row, nb) states the order for one
// output; pack(p) repacks for gemm(p, packed, y). False when gemm differs from the statement.
template <typename Block, typename RefFn, typename PackFn, typename GemmFn>
bool RunKQuantOrderTable(const char* name, gguf::GgmlType type, uint32_t seed, int reps,
                         RefFn reference, PackFn pack, GemmFn gemm) {
  struct Shape {
    int64_t rows, cols, tokens;
    const char* what;
  };
  const Shape shapes[] = {
      {640, 2048, 64, "ffn_down shape, 64 prefill tokens"},
      {640, 2048, 512, "ffn_down shape, 512 prefill tokens"},
      {640, 2048, 16, "ffn_down shape, 16 decoding sequences"},
  };
  std::printf(
      "| %s matmul, rows x cols, tokens | radixlm GMAC/s | order (zmm) | order / radixlm |"
      " order mismatches |\n|---|---|---|---|---|\n",
      name);
  bool exact = true;
  for (const Shape& s : shapes) {
    const KQuantProblem<Block> p = MakeKQuantProblem<Block>(type, s.rows, s.cols, s.tokens, seed);
    std::vector<float> ref(p.tokens * p.rows), yo(ref.size()), yr(ref.size());
    for (int64_t t = 0; t < p.tokens; ++t) {
      for (int64_t r = 0; r < p.rows; ++r) {
        ref[t * p.rows + r] = reference(&p.w[r * p.nb()], &p.a[t * p.nb()], p.nb());
      }
    }
    kernels::WeightMatrix wm = kernels::MakeWeightMatrix(type, p.w.data(), p.rows, p.cols);
    const auto packed = kernels::PackWeights(wm, nullptr);
    wm.packed = packed.get();
    const auto z = pack(p);
    gemm(p, z, yo.data());
    const int64_t miss = CountMismatches(yo, ref);
    exact = exact && miss == 0;
    const double macs = static_cast<double>(p.rows) * p.cols * p.tokens / 1e9;
    const double g_r = macs * CallsPerSecond(reps, [&] {
                         kernels::MatMul(wm, p.x.data(), p.tokens, yr.data(), nullptr);
                       });
    const double g_o = macs * CallsPerSecond(reps, [&] { gemm(p, z, yo.data()); });
    std::printf("| %lld x %lld, %lld (%s) | %.1f | %.1f | %.2fx | %lld |\n",
                static_cast<long long>(s.rows), static_cast<long long>(s.cols),
                static_cast<long long>(s.tokens), s.what, g_r, g_o, g_o / g_r,
                static_cast<long long>(miss));
  }
  return exact;
}

}  // namespace radixlm::order_cost
