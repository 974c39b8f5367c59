// GatedDeltaChunk (kernels/gated_delta.h) for a vector type V (Reg, kLanes, Zero, Set1, Load,
// Store, Add, Sub, Mul): included by gated_delta.cc (ScalarLanes below), gated_delta_avx2.cc and
// gated_delta_avx512.cc, each compiled with -ffp-contract=off. Every sum runs over its inner
// index in ascending order with separately rounded products and sums, the columns in lanes, so
// every ISA level gives the same floats. Everything here has internal linkage.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/gated_delta.h"

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
};

// The operands of ChunkGemm: y[r][j] = c_scale[r] c[r][j] + Σ_i x[r][i] b[i][j] (c null: no
// first term), for r < rows, i < inner, j < cols. y may be c (each element is read before it is
// written).
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
  for (int64_t i = 0; i < a.inner; ++i) {
    Reg bv[NV];
    for (int u = 0; u < NV; ++u) bv[u] = V::Load(a.b + i * a.b_stride + j0 + V::kLanes * u);
    for (int r = 0; r < R; ++r) {
      const Reg xr = V::Set1(a.x[(r0 + r) * a.x_stride + i]);
      for (int u = 0; u < NV; ++u) acc[r][u] = V::Add(acc[r][u], V::Mul(xr, bv[u]));
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
  int64_t j0 = 0;
  for (; j0 + kWidth <= cols; j0 += kWidth) {
    for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
      GemmRows<V, kRows, kVectors>(a, r0, rows - r0 < kRows ? rows - r0 : kRows, j0);
    }
  }
  for (; j0 + V::kLanes <= cols; j0 += V::kLanes) {
    for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
      GemmRows<V, kRows, 1>(a, r0, rows - r0 < kRows ? rows - r0 : kRows, j0);
    }
  }
  for (; j0 < cols; ++j0) {
    for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
      GemmRows<ScalarLanes, kRows, 1>(a, r0, rows - r0 < kRows ? rows - r0 : kRows, j0);
    }
  }
}

// u[j] -= a w[j] (row update of the forward substitution) and the like: element-wise.
template <class V>
void SubScaled(float* u, const float* w, float a, int64_t n) {
  const typename V::Reg av = V::Set1(a);
  int64_t j = 0;
  for (; j + V::kLanes <= n; j += V::kLanes) {
    V::Store(u + j, V::Sub(V::Load(u + j), V::Mul(av, V::Load(w + j))));
  }
  for (; j < n; ++j) u[j] -= a * w[j];
}

// One chunk of n tokens (1..kGatedDeltaChunk) of one head, state m [S, S] key-major.
//   G_t = Σ_{u<=t} g_u (log decays), Γ_t = exp(G_t);  W = K M₀ᵀ, P = Q M₀ᵀ (rows: tokens);
//   U_t = β_t (v_t - Γ_t W_t) - Σ_{s<t} β_t exp(G_t - G_s) (k_t·k_s) U_s  (forward substitution);
//   o_t = (Γ_t P_t + Σ_{s<=t} exp(G_t - G_s) (q_t·k_s) U_s) / sqrt(S);
//   M = Γ_n M₀ + Σ_s exp(G_n - G_s) U_s k_sᵀ.
template <class V, int kRows, int kVectors>
void GatedDeltaChunkVec(float* m, const GatedDeltaTokens& x, int64_t n, int64_t s, float* scratch) {
  const int64_t c = kGatedDeltaChunk;
  float* kt = scratch;          // [S, c]: kt[i][t] = k_t[i]
  float* kk = kt + s * c;       // [c, c]: k_t · k_s, then the substitution's coefficients
  float* qk = kk + c * c;       // [c, c]: q_t · k_s, then the output's weights
  float* w = qk + c * c;        // [c, S]: W, then exp(G_n - G_t) U_t
  float* p = w + c * s;         // [c, S]: P
  float* u = p + c * s;         // [c, S]: U
  float* gcum = u + c * s;      // [c]
  float* row_scale = gcum + c;  // [max(c, S)]
  const float* kb = x.k;
  const float* qb = x.q;
  const int64_t st = x.qkv_stride;
  float sum = 0.0f;
  for (int64_t t = 0; t < n; ++t) {
    sum += x.log_decay[t * x.gate_stride];
    gcum[t] = sum;
  }
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t i = 0; i < s; ++i) kt[i * c + t] = kb[t * st + i];
  }
  ChunkGemm<V, kRows, kVectors>({kb, st, kt, c, nullptr, 0, nullptr, kk, c, s}, n, n);
  ChunkGemm<V, kRows, kVectors>({qb, st, kt, c, nullptr, 0, nullptr, qk, c, s}, n, n);
  ChunkGemm<V, kRows, kVectors>({kb, st, m, s, nullptr, 0, nullptr, w, s, s}, n, s);
  ChunkGemm<V, kRows, kVectors>({qb, st, m, s, nullptr, 0, nullptr, p, s, s}, n, s);

  const float scale = 1.0f / std::sqrt(static_cast<float>(s));
  for (int64_t t = 0; t < n; ++t) {
    const float beta = x.beta[t * x.gate_stride];
    const float decay = std::exp(gcum[t]);
    const float* v = x.v + t * st;
    float* ut = u + t * s;
    for (int64_t j = 0; j < s; ++j) ut[j] = (v[j] - decay * w[t * s + j]) * beta;
    for (int64_t r = 0; r < t; ++r) {
      SubScaled<V>(ut, u + r * s, beta * std::exp(gcum[t] - gcum[r]) * kk[t * c + r], s);
    }
    for (int64_t r = 0; r <= t; ++r) qk[t * c + r] *= std::exp(gcum[t] - gcum[r]) * scale;
    for (int64_t r = t + 1; r < n; ++r) qk[t * c + r] = 0.0f;
    row_scale[t] = decay * scale;
  }
  ChunkGemm<V, kRows, kVectors>({qk, c, u, s, p, s, row_scale, x.out, x.out_stride, n}, n, s);

  const float last = gcum[n - 1];
  for (int64_t t = 0; t < n; ++t) {
    const float f = std::exp(last - gcum[t]);
    for (int64_t j = 0; j < s; ++j) w[t * s + j] = u[t * s + j] * f;
  }
  const float total = std::exp(last);
  for (int64_t i = 0; i < s; ++i) row_scale[i] = total;
  ChunkGemm<V, kRows, kVectors>({kt, c, w, s, m, s, row_scale, m, s, n}, s, s);
}

}  // namespace
}  // namespace radixlm::kernels::cpu
