// GatedDeltaChunk (kernels/gated_delta.h) for a vector type V (Reg, kLanes, Zero, Set1, Load,
// Store, Sub, Mul, Fma): included by gated_delta.cc (ScalarLanes below), gated_delta_avx2.cc and
// gated_delta_avx512.cc, each compiled with -ffp-contract=off. Every sum of products runs over
// its inner index in ascending order, one fused multiply-add per term (std::fma in scalar code),
// the columns in lanes, so every ISA level gives the same floats. Everything here has internal
// linkage.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/gated_delta.h"

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace radixlm::kernels::cpu {
namespace {

struct ScalarLanes {
  using Reg = float;
  static constexpr int kLanes = 1;
  static Reg Zero() { return 0.0f; }
  static Reg Set1(float x) { return x; }
  static Reg Load(const float* p) { return *p; }
  static void Store(float* p, Reg x) { *p = x; }
  static Reg Add(Reg a, Reg b) { return a + b; }
  static Reg Sub(Reg a, Reg b) { return a - b; }
  static Reg Mul(Reg a, Reg b) { return a * b; }
  static Reg Fma(Reg a, Reg b, Reg c) { return std::fma(a, b, c); }
};

// The operands of ChunkGemm: y[r][j] = c_scale[r] c[r][j] + Σ_i x[r][i] b[i][j] (c null: no
// first term), for r < rows, i < inner, j < cols. y may be c (each element is read before it is
// written). lower: x is lower triangular (x[r][i] = 0 for i > r; the sum stops after the
// tile's last row) and only y's lower triangle is wanted (columns j <= r; the columns past a
// tile's last row are not written).
struct GemmArgs {
  const float* x;
  int64_t x_stride;
  const float* b;
  int64_t b_stride;
  const float* c;
  int64_t c_stride;
  const float* c_scale;
  float* y;
  int64_t y_stride;
  int64_t inner;
  bool x_lower = false;
  bool y_lower = false;
};

// R rows [r0, r0 + R) x NV vectors of columns from j0.
template <class V, int R, int NV>
void GemmTile(const GemmArgs& a, int64_t r0, int64_t j0) {
  using Reg = typename V::Reg;
  Reg acc[R][NV];
  for (int r = 0; r < R; ++r) {
    for (int u = 0; u < NV; ++u) {
      acc[r][u] = a.c == nullptr
                      ? V::Zero()
                      : V::Mul(V::Set1(a.c_scale[r0 + r]),
                               V::Load(a.c + (r0 + r) * a.c_stride + j0 + V::kLanes * u));
    }
  }
  const int64_t inner = a.x_lower ? std::min(a.inner, r0 + R) : a.inner;
  for (int64_t i = 0; i < inner; ++i) {
    Reg bv[NV];
    for (int u = 0; u < NV; ++u) bv[u] = V::Load(a.b + i * a.b_stride + j0 + V::kLanes * u);
    for (int r = 0; r < R; ++r) {
      const Reg xr = V::Set1(a.x[(r0 + r) * a.x_stride + i]);
      for (int u = 0; u < NV; ++u) acc[r][u] = V::Fma(xr, bv[u], acc[r][u]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int u = 0; u < NV; ++u)
      V::Store(a.y + (r0 + r) * a.y_stride + j0 + V::kLanes * u, acc[r][u]);
  }
}

// Rows [r0, r0 + nr), nr in 1..R.
template <class V, int R, int NV>
void GemmRows(const GemmArgs& a, int64_t r0, int64_t nr, int64_t j0) {
  if constexpr (R > 1) {
    if (nr < R) return GemmRows<V, R - 1, NV>(a, r0, nr, j0);
  }
  GemmTile<V, R, NV>(a, r0, j0);
}

// Tiles of kRows rows x kVectors vectors; the columns past the last whole vector one at a time.
template <class V, int kRows, int kVectors>
void ChunkGemm(const GemmArgs& a, int64_t rows, int64_t cols) {
  constexpr int64_t kWidth = int64_t{V::kLanes} * kVectors;
  // Row tiles whose columns from j0 are wanted: all, or (y_lower) those whose last row >= j0.
  const auto first_row = [&](int64_t j0) -> int64_t {
    return a.y_lower ? std::max<int64_t>(0, j0 - kRows + 1) / kRows * kRows : 0;
  };
  int64_t j0 = 0;
  for (; j0 + kWidth <= cols; j0 += kWidth) {
    for (int64_t r0 = first_row(j0); r0 < rows; r0 += kRows) {
      GemmRows<V, kRows, kVectors>(a, r0, rows - r0 < kRows ? rows - r0 : kRows, j0);
    }
  }
  for (; j0 + V::kLanes <= cols; j0 += V::kLanes) {
    for (int64_t r0 = first_row(j0); r0 < rows; r0 += kRows) {
      GemmRows<V, kRows, 1>(a, r0, rows - r0 < kRows ? rows - r0 : kRows, j0);
    }
  }
  for (; j0 < cols; ++j0) {
    for (int64_t r0 = first_row(j0); r0 < rows; r0 += kRows) {
      GemmRows<ScalarLanes, kRows, 1>(a, r0, rows - r0 < kRows ? rows - r0 : kRows, j0);
    }
  }
}

// u[j] -= a w[j] (row update of the forward substitution) and the like: element-wise.
template <class V>
void SubScaled(float* u, const float* w, float a, int64_t n) {
  int64_t j = 0;
  for (; j + V::kLanes <= n; j += V::kLanes) {
    V::Store(u + j, V::Fma(V::Set1(-a), V::Load(w + j), V::Load(u + j)));
  }
  for (; j < n; ++j) u[j] = std::fma(-a, w[j], u[j]);
}

// One chunk of n tokens (1..kGatedDeltaChunk) of one head, state m [S, S] key-major; with
// a_t = exp(g_t) the step's decay, Γ_t = a_0 ... a_t and D_ts = a_{s+1} ... a_t = Γ_t / Γ_s
// (products, not exponentials of differences of cumulative sums: one exp per token):
//   W = K M₀ᵀ, P = Q M₀ᵀ (rows: tokens);
//   U_t = β_t (v_t - Γ_t W_t) - Σ_{s<t} β_t D_ts (k_t·k_s) U_s  (forward substitution);
//   o_t = (Γ_t P_t + Σ_{s<=t} D_ts (q_t·k_s) U_s) / sqrt(S);
//   M = Γ_n M₀ + Σ_s D_ns U_s k_sᵀ  (n: the last token).
// Subnormal floats flushed to zero (inputs and results) while it lives, on x86: the decays
// between far-apart tokens of a chunk, and products with them, can fall below FLT_MIN, and
// every arithmetic instruction on a subnormal takes a microcode assist (a chunk then runs over
// ten times slower). Values that small are far below the rounding of the sums they enter.
class FlushSubnormals {
 public:
#if defined(__SSE__)
  FlushSubnormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }  // FTZ | DAZ
  ~FlushSubnormals() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
#endif
};

template <class V, int kRows, int kVectors>
void GatedDeltaChunkVec(float* m, const GatedDeltaTokens& x, int64_t n, int64_t s, float* scratch) {
  const FlushSubnormals flush;
  const int64_t c = kGatedDeltaChunk;
  float* kt = scratch;           // [S, c]: kt[i][t] = k_t[i]
  float* kk = kt + s * c;        // [c, c]: k_t · k_s
  float* qk = kk + c * c;        // [c, c]: q_t · k_s, then the output's weights
  float* d = qk + c * c;         // [c, c]: D (lower triangle)
  float* w = d + c * c;          // [c, S]: W, then D_ns U_s
  float* p = w + c * s;          // [c, S]: P
  float* u = p + c * s;          // [c, S]: U
  float* kb = u + c * s;         // [c, S]: the k rows, packed
  float* qb = kb + c * s;        // [c, S]: the q rows, packed
  float* gamma = qb + c * s;     // [c]
  float* row_scale = gamma + c;  // [max(c, S)]
  // The model's rows are far apart (a multiple of 4 KiB in the hybrid models: the same cache
  // sets), so the products read packed copies.
  for (int64_t t = 0; t < n; ++t) {
    std::copy_n(x.k + t * x.qkv_stride, s, kb + t * s);
    std::copy_n(x.q + t * x.qkv_stride, s, qb + t * s);
  }
  const int64_t st = s;
  for (int64_t t = 0; t < n; ++t) {
    const float a = std::exp(x.log_decay[t * x.gate_stride]);
    gamma[t] = t == 0 ? a : gamma[t - 1] * a;
    float* dt = d + t * c;
    for (int64_t r = 0; r < t; ++r) dt[r] = dt[r - c] * a;
    dt[t] = 1.0f;
  }
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t i = 0; i < s; ++i) kt[i * c + t] = kb[t * st + i];
  }
  ChunkGemm<V, kRows, kVectors>({kb, st, kt, c, nullptr, 0, nullptr, kk, c, s, false, true}, n, n);
  ChunkGemm<V, kRows, kVectors>({qb, st, kt, c, nullptr, 0, nullptr, qk, c, s, false, true}, n, n);
  ChunkGemm<V, kRows, kVectors>({kb, st, m, s, nullptr, 0, nullptr, w, s, s}, n, s);
  ChunkGemm<V, kRows, kVectors>({qb, st, m, s, nullptr, 0, nullptr, p, s, s}, n, s);

  const float scale = 1.0f / std::sqrt(static_cast<float>(s));
  for (int64_t t = 0; t < n; ++t) {
    const float beta = x.beta[t * x.gate_stride];
    const float* v = x.v + t * x.qkv_stride;
    const float* dt = d + t * c;
    float* ut = u + t * s;
    for (int64_t j = 0; j < s; ++j) ut[j] = (v[j] - gamma[t] * w[t * s + j]) * beta;
    for (int64_t r = 0; r < t; ++r) SubScaled<V>(ut, u + r * s, beta * dt[r] * kk[t * c + r], s);
    for (int64_t r = 0; r <= t; ++r) qk[t * c + r] *= dt[r] * scale;
    for (int64_t r = t + 1; r < n; ++r) qk[t * c + r] = 0.0f;
    row_scale[t] = gamma[t] * scale;
  }
  ChunkGemm<V, kRows, kVectors>({qk, c, u, s, p, s, row_scale, x.out, x.out_stride, n, true}, n, s);

  const float* dn = d + (n - 1) * c;
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t j = 0; j < s; ++j) w[t * s + j] = u[t * s + j] * dn[t];
  }
  for (int64_t i = 0; i < s; ++i) row_scale[i] = gamma[n - 1];
  ChunkGemm<V, kRows, kVectors>({kt, c, w, s, m, s, row_scale, m, s, n}, s, s);
}

}  // namespace
}  // namespace radixlm::kernels::cpu
