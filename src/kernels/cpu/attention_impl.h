// Per-ISA inner kernels of attention (internal; dispatched by kernels/attention.cc).
//
// Attention runs as llama.cpp's CPU (non flash-attention) graph does on AVX2: scores of a whole
// row of keys, then a softmax normalized before P·V, so every step below works on plain arrays.
// Every kernel reproduces ggml's float operation order exactly (not just its math), because
// greedy decoding of small models flips on last-bit differences:
//   * dot products (Q·K over head_dim, P·V over keys) as tinyBLAS's F16 GEMM computes them:
//     8 float lanes, lane l accumulating the terms i == l (mod 8) in ascending i with fused
//     multiply-adds, then the lane tree LaneSum below;
//   * exponentials with ggml's ggml_v_expf polynomial, summed per aligned group of 8 keys with
//     the same lane tree, the groups in double.
// The scalar versions compute the same values (std::fma), so all ISAs agree bit for bit.
// No allocation; keys come in blocks of at most kAttendBlockMax (already converted to float).
#pragma once

#include <cstdint>

namespace radixlm::kernels::cpu {

inline constexpr int kAttendBlockMax = 64;
inline constexpr int kLanes = 8;  // lanes of ggml's AVX2 accumulators

// ggml's horizontal sum of 8 lanes (hi + lo halves, then pairs): ((a0+a4)+(a2+a6)) +
// ((a1+a5)+(a3+a7)).
inline float LaneSum(const float* a) {
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

// scores[j] = dot(q, k_j) for j in [0, n); q: [head_dim], k: [n, head_dim]. Lane l sums the
// terms d == l (mod 8).
using ScoreBlockFn = void (*)(const float* q, const float* k, int n, int head_dim, float* scores);
// p[j] = ggml_v_expf(s[j] - max) in place for j in [0, n); s[j] belongs to lane
// (lane0 + j) % 8. Returns the sum of the lane sums of each group of 8 lanes, in double.
using ExpSumFn = double (*)(float* s, int n, int lane0, float max);
// acc[(lane0 + j) % 8][d] = fma(p[j], v_j[d], acc[...][d]) for j ascending in [0, n), d in
// [0, width); v: [n, width], acc: [kLanes, width] lane accumulators.
using AccumulateBlockFn = void (*)(const float* p, const float* v, int n, int width, int lane0,
                                   float* acc);

// ScoreBlockFn for n_q query rows at once (q: [n_q, head_dim]; scores of query i at
// scores + i * score_stride): each value bit-identical to ScoreBlockFn's, with each key row
// loaded once for all the queries (the query heads that share a kv head).
using ScoreTileFn = void (*)(const float* q, int n_q, const float* k, int n, int head_dim,
                             float* scores, int64_t score_stride);

struct AttentionKernels {
  ScoreBlockFn score;
  ScoreTileFn score_tile;
  ExpSumFn exp_sum;
  AccumulateBlockFn accumulate;
};

namespace scalar {
// ggml_v_expf (AVX2) for one value: exp(x) by a degree-5 polynomial after range reduction by
// ln2, with the same special cases for |n| > 126 and > 192.
float GgmlExp(float x);
void ScoreBlock(const float* q, const float* k, int n, int head_dim, float* scores);
double ExpSum(float* s, int n, int lane0, float max);
void AccumulateBlock(const float* p, const float* v, int n, int width, int lane0, float* acc);
}  // namespace scalar
namespace avx2 {
void ScoreBlock(const float* q, const float* k, int n, int head_dim, float* scores);
double ExpSum(float* s, int n, int lane0, float max);
void AccumulateBlock(const float* p, const float* v, int n, int width, int lane0, float* acc);
}  // namespace avx2
namespace avx512 {  // only with RADIXLM_KERNELS_AVX512 and CpuHasAvx512()
void ScoreTile(const float* q, int n_q, const float* k, int n, int head_dim, float* scores,
               int64_t score_stride);
void AccumulateBlock(const float* p, const float* v, int n, int width, int lane0, float* acc);
}  // namespace avx512

}  // namespace radixlm::kernels::cpu
