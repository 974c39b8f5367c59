// GatedDeltaStep (kernels/gated_delta.h) on a vector ISA: included by gated_delta_avx2.cc and
// gated_delta_avx512.cc, each with its vector type V (Reg, kLanes, Zero, Set1, Load, Store, Add,
// Sub, Mul) and compiled with its flags and -ffp-contract=off (separate multiplies and adds:
// the scalar reference's floats). Everything here has internal linkage, so no copy compiled for
// one ISA stands in for another's.
#pragma once

#include <cmath>
#include <cstdint>

namespace radixlm::kernels::cpu {
namespace {

// NV vectors of value indices (m, v, out offset to the block), their sums in registers: the
// decay and M k over the keys in order, the deltas, the update and M q over the keys in order.
template <class V, int NV>
void GatedDeltaBlock(float* m, const float* q, const float* k, const float* v, float decay,
                     float beta, int64_t s, float scale, float* out) {
  using Reg = typename V::Reg;
  Reg acc[NV];
  for (int u = 0; u < NV; ++u) acc[u] = V::Zero();
  const Reg d = V::Set1(decay);
  for (int64_t i = 0; i < s; ++i) {
    float* row = m + i * s;
    const Reg ki = V::Set1(k[i]);
    for (int u = 0; u < NV; ++u) {
      const Reg x = V::Mul(V::Load(row + V::kLanes * u), d);
      V::Store(row + V::kLanes * u, x);
      acc[u] = V::Add(acc[u], V::Mul(x, ki));
    }
  }
  Reg delta[NV];
  const Reg b = V::Set1(beta);
  for (int u = 0; u < NV; ++u) {
    delta[u] = V::Mul(V::Sub(V::Load(v + V::kLanes * u), acc[u]), b);
    acc[u] = V::Zero();
  }
  for (int64_t i = 0; i < s; ++i) {
    float* row = m + i * s;
    const Reg ki = V::Set1(k[i]);
    const Reg qi = V::Set1(q[i]);
    for (int u = 0; u < NV; ++u) {
      const Reg x = V::Add(V::Load(row + V::kLanes * u), V::Mul(delta[u], ki));
      V::Store(row + V::kLanes * u, x);
      acc[u] = V::Add(acc[u], V::Mul(x, qi));
    }
  }
  const Reg sc = V::Set1(scale);
  for (int u = 0; u < NV; ++u) V::Store(out + V::kLanes * u, V::Mul(acc[u], sc));
}

// GatedDeltaBlock with nv (1..N) vectors.
template <class V, int N>
void GatedDeltaBlockOf(int64_t nv, float* m, const float* q, const float* k, const float* v,
                       float decay, float beta, int64_t s, float scale, float* out) {
  if constexpr (N > 1) {
    if (nv < N) return GatedDeltaBlockOf<V, N - 1>(nv, m, q, k, v, decay, beta, s, scale, out);
  }
  GatedDeltaBlock<V, N>(m, q, k, v, decay, beta, s, scale, out);
}

// s % V::kLanes == 0: blocks of up to kMaxVectors vectors of value indices.
template <class V, int kMaxVectors>
void GatedDeltaStepVec(float* m, const float* q, const float* k, const float* v, float decay,
                       float beta, int64_t s, float* out) {
  constexpr int64_t kWidth = int64_t{V::kLanes} * kMaxVectors;
  const float scale = 1.0f / std::sqrt(static_cast<float>(s));
  for (int64_t jb = 0; jb < s; jb += kWidth) {
    const int64_t nv = (s - jb < kWidth ? s - jb : kWidth) / V::kLanes;
    GatedDeltaBlockOf<V, kMaxVectors>(nv, m + jb, q, k, v + jb, decay, beta, s, scale, out + jb);
  }
}

}  // namespace
}  // namespace radixlm::kernels::cpu
