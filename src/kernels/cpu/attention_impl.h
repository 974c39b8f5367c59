// Per-ISA inner kernels of attention (internal; dispatched by kernels/attention.cc).
//
// Attention runs as llama.cpp's CPU (non flash-attention) graph does: scores of a whole row of
// keys, then a softmax normalized before P·V, so every step below works on plain arrays.
// No allocation; keys come in blocks of at most kAttendBlockMax (already converted to float).
#pragma once

#include <cstdint>

namespace radixlm::kernels::cpu {

inline constexpr int kAttendBlockMax = 64;

// scores[j] = dot(q, k_j) for j in [0, n); q: [head_dim], k: [n, head_dim]. Float accumulation.
using ScoreBlockFn = void (*)(const float* q, const float* k, int n, int head_dim,
                              float* scores);
// p[j] = exp(s[j] - max) in place for j in [0, n); returns sum_j p[j] (accumulated in double).
using ExpSumFn = double (*)(float* s, int n, float max);
// acc[d] += sum_j p[j] * v_j[d] for d in [0, head_dim); v: [n, head_dim]. Float accumulation.
using AccumulateBlockFn = void (*)(const float* p, const float* v, int n, int head_dim,
                                   float* acc);

struct AttentionKernels {
  ScoreBlockFn score;
  ExpSumFn exp_sum;
  AccumulateBlockFn accumulate;
};

namespace scalar {
void ScoreBlock(const float* q, const float* k, int n, int head_dim, float* scores);
double ExpSum(float* s, int n, float max);
void AccumulateBlock(const float* p, const float* v, int n, int head_dim, float* acc);
}  // namespace scalar
namespace avx2 {
void ScoreBlock(const float* q, const float* k, int n, int head_dim, float* scores);
double ExpSum(float* s, int n, float max);
void AccumulateBlock(const float* p, const float* v, int n, int head_dim, float* acc);
}  // namespace avx2

}  // namespace radixlm::kernels::cpu
