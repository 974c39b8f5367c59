// The attention half of bench/order_cost_bench.cc: causal prefill attention of one layer of
// the default model's shape (4 query heads, 1 KV head, head size 256, F16 cache, Q scaled
// before attention), 512 queries over their 512-token prefix, one thread:
//   radixlm     AttentionForSequence (kernels/attention.h): query tiles, fixed 256-key chunks;
//   ggml-order  every query on its own, as llama.cpp's one-query flash attention computes a
//               decoded token (its decode path): Q rounded to F16; per visible key in order,
//               the dot in four 16-lane float accumulators over 64-value steps, reduced
//               (a0+a2)+(a1+a3) and then by halves (GCC's _mm512_reduce_add_ps); an expf
//               online softmax; the output accumulated in F16, rounded at every scale and add:
//     fp16      in AVX512-FP16 half-precision arithmetic, the softmax weight rounded to F16
//               (ggml built for a CPU with AVX512-FP16, as a native build on this one is);
//     f32       in float, rounded to F16 after each operation (ggml built without it).
// Both order kernels keep each query's F16 accumulator in registers and read K and V converted
// to float once per call (exact; the conversion is timed). Each is checked bit for bit against a
// scalar statement of its order on the first 64 queries of every head.
#include <immintrin.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "bench/order_cost.h"
#include "kernels/attention.h"
#include "kernels/fp16.h"

namespace radixlm::order_cost {
namespace {

using kernels::F16ToF32;
using kernels::F32ToF16;

constexpr int kHeads = 4, kDim = 256, kTokens = 512, kChecked = 64;

struct Inputs {
  std::vector<float> q;         // [kTokens][kHeads][kDim], unscaled (radixlm scales it)
  std::vector<float> q_scaled;  // the same times 1/16, as llama.cpp's graph scales Q
  std::vector<uint16_t> k, v;   // [kTokens][kDim] F16 cache rows
};

Inputs MakeInputs() {
  Inputs in;
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  in.q.resize(static_cast<size_t>(kTokens) * kHeads * kDim);
  for (auto& x : in.q) x = 2.0f * dist(rng);
  in.q_scaled.resize(in.q.size());
  for (size_t i = 0; i < in.q.size(); ++i) in.q_scaled[i] = in.q[i] * (1.0f / 16.0f);
  in.k.resize(static_cast<size_t>(kTokens) * kDim);
  in.v.resize(in.k.size());
  for (auto& x : in.k) x = F32ToF16(2.0f * dist(rng));
  for (auto& x : in.v) x = F32ToF16(dist(rng));
  return in;
}

float RoundF16(float x) { return F16ToF32(F32ToF16(x)); }

// GCC's _mm512_reduce_add_ps: halves of 8, then of 4, then (0+2) + (1+3).
float ReduceLikeGcc(const float* a) {
  float t3[8], t6[4];
  for (int i = 0; i < 8; ++i) t3[i] = a[i + 8] + a[i];
  for (int i = 0; i < 4; ++i) t6[i] = t3[i + 4] + t3[i];
  return (t6[0] + t6[2]) + (t6[1] + t6[3]);
}

// One key of ggml's online softmax for score s: the running maximum m moves up to s (then the
// output so far is scaled by ms = e^(old m - s) and the key weighs vs = 1) or stays (ms = 1,
// vs = e^(s - m)); the caller then adds vs * v and sets sum = sum * ms + vs.
struct SoftmaxStep {
  bool rescale;
  float ms, vs;
};
inline SoftmaxStep NextKey(float s, float& m) {
  if (s > m) {
    const float ms = std::exp(m - s);
    m = s;
    return {true, ms, 1.0f};
  }
  return {false, 1.0f, std::exp(s - m)};
}

#if defined(RADIXLM_ORDER_COST_FP16)
// One IEEE half-precision operation each (a float round trip through F16 is not the same for
// a fused multiply-add: the float sum is a second rounding).
__attribute__((target("avx512f,avx512fp16"))) float FmaF16(float a, float b, float c) {
  const __m128h r =
      _mm_fmadd_sh(_mm_set_sh(static_cast<_Float16>(a)), _mm_set_sh(static_cast<_Float16>(b)),
                   _mm_set_sh(static_cast<_Float16>(c)));
  return static_cast<float>(_mm_cvtsh_h(r));
}
__attribute__((target("avx512f,avx512fp16"))) float MulF16(float a, float b) {
  const __m128h r =
      _mm_mul_sh(_mm_set_sh(static_cast<_Float16>(a)), _mm_set_sh(static_cast<_Float16>(b)));
  return static_cast<float>(_mm_cvtsh_h(r));
}
#else
float FmaF16(float, float, float) { return NAN; }  // never called: no fp16 variant
float MulF16(float, float) { return NAN; }
#endif

// The order, stated plainly, for query i of head h (fp16: the half-precision variant, whose
// operands are rounded to F16 and each operation rounded once, in F16).
void OrderReferenceQuery(const Inputs& in, int i, int h, bool fp16, float* out) {
  float q16[kDim], acc[kDim] = {};
  for (int d = 0; d < kDim; ++d) q16[d] = RoundF16(in.q_scaled[(i * kHeads + h) * kDim + d]);
  float m = -INFINITY, sum = 0.0f;
  for (int j = 0; j <= i; ++j) {
    float a[4][16] = {};
    for (int st = 0; st < kDim / 64; ++st) {
      for (int g = 0; g < 4; ++g) {
        for (int l = 0; l < 16; ++l) {
          const int d = 64 * st + 16 * g + l;
          a[g][l] = std::fma(F16ToF32(in.k[j * kDim + d]), q16[d], a[g][l]);
        }
      }
    }
    for (int l = 0; l < 16; ++l) {
      a[0][l] += a[2][l];
      a[1][l] += a[3][l];
    }
    for (int l = 0; l < 16; ++l) a[0][l] += a[1][l];
    const SoftmaxStep st = NextKey(ReduceLikeGcc(a[0]), m);
    if (st.rescale) {
      for (float& x : acc) x = fp16 ? MulF16(x, st.ms) : RoundF16(x * st.ms);
    }
    for (int d = 0; d < kDim; ++d) {
      const float vd = F16ToF32(in.v[j * kDim + d]);
      acc[d] = fp16 ? FmaF16(vd, st.vs, acc[d]) : RoundF16(std::fma(vd, st.vs, acc[d]));
    }
    sum = std::fma(sum, st.ms, st.vs);
  }
  const float inv = sum == 0.0f ? 0.0f : 1.0f / sum;
  for (int d = 0; d < kDim; ++d) out[d] = acc[d] * inv;
}

__attribute__((target("avx512f,avx512dq"))) inline float ReduceZmm(__m512 a0, __m512 a1, __m512 a2,
                                                                   __m512 a3) {
  a0 = _mm512_add_ps(a0, a2);
  a1 = _mm512_add_ps(a1, a3);
  a0 = _mm512_add_ps(a0, a1);
  const __m256 t3 = _mm256_add_ps(_mm512_extractf32x8_ps(a0, 1), _mm512_castps512_ps256(a0));
  const __m128 t6 = _mm_add_ps(_mm256_extractf128_ps(t3, 1), _mm256_castps256_ps128(t3));
  const __m128 t8 = _mm_add_ps(t6, _mm_shuffle_ps(t6, t6, _MM_SHUFFLE(1, 0, 3, 2)));
  return _mm_cvtss_f32(_mm_add_ss(t8, _mm_movehdup_ps(t8)));
}

// The keys' dot for query row q32 (16 zmm) against the float key row kj.
__attribute__((target("avx512f,avx512dq"))) inline float DotZmm(const __m512* q32,
                                                                const float* kj) {
  __m512 a[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                 _mm512_setzero_ps()};
  for (int st = 0; st < kDim / 64; ++st) {
    for (int g = 0; g < 4; ++g) {
      a[g] = _mm512_fmadd_ps(_mm512_loadu_ps(kj + 64 * st + 16 * g), q32[4 * st + g], a[g]);
    }
  }
  return ReduceZmm(a[0], a[1], a[2], a[3]);
}

__attribute__((target("avx512f,avx512dq,f16c"))) void LoadQuery(const Inputs& in, int i, int h,
                                                                __m512* q32) {
  const float* q = &in.q_scaled[(static_cast<size_t>(i) * kHeads + h) * kDim];
  for (int c = 0; c < kDim / 16; ++c) {
    q32[c] =
        _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_loadu_ps(q + 16 * c), _MM_FROUND_TO_NEAREST_INT));
  }
}

#if defined(RADIXLM_ORDER_COST_FP16)
__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx512fp16,f16c"))) void
OrderAttentionFp16(const Inputs& in, const float* k32, float* out) {
  for (int h = 0; h < kHeads; ++h) {
    for (int i = 0; i < kTokens; ++i) {
      __m512 q32[kDim / 16];
      LoadQuery(in, i, h, q32);
      __m512h acc[kDim / 32];
      for (auto& a : acc) a = _mm512_setzero_ph();
      float m = -INFINITY, sum = 0.0f;
      for (int j = 0; j <= i; ++j) {
        const SoftmaxStep st = NextKey(DotZmm(q32, k32 + static_cast<size_t>(j) * kDim), m);
        if (st.rescale) {
          const __m512h f = _mm512_set1_ph(static_cast<_Float16>(st.ms));
          for (auto& a : acc) a = _mm512_mul_ph(a, f);
        }
        const __m512h w = _mm512_set1_ph(static_cast<_Float16>(st.vs));
        const uint16_t* vj = &in.v[static_cast<size_t>(j) * kDim];
        for (int c = 0; c < kDim / 32; ++c) {
          acc[c] = _mm512_fmadd_ph(_mm512_loadu_ph(vj + 32 * c), w, acc[c]);
        }
        sum = std::fma(sum, st.ms, st.vs);
      }
      const __m512 inv = _mm512_set1_ps(sum == 0.0f ? 0.0f : 1.0f / sum);
      float* o = out + (static_cast<size_t>(i) * kHeads + h) * kDim;
      for (int c = 0; c < kDim / 32; ++c) {
        const __m512i bits = _mm512_castph_si512(acc[c]);
        const __m512 lo = _mm512_cvtph_ps(_mm512_castsi512_si256(bits));
        const __m512 hi = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(bits, 1));
        _mm512_storeu_ps(o + 32 * c, _mm512_mul_ps(lo, inv));
        _mm512_storeu_ps(o + 32 * c + 16, _mm512_mul_ps(hi, inv));
      }
    }
  }
}
#endif

__attribute__((target("avx512f,avx512dq,f16c"))) inline __m512 RoundF16Zmm(__m512 x) {
  return _mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
}

__attribute__((target("avx512f,avx512dq,f16c"))) void OrderAttentionF32(const Inputs& in,
                                                                        const float* k32,
                                                                        const float* v32,
                                                                        float* out) {
  for (int h = 0; h < kHeads; ++h) {
    for (int i = 0; i < kTokens; ++i) {
      __m512 q32[kDim / 16];
      LoadQuery(in, i, h, q32);
      __m512 acc[kDim / 16];
      for (auto& a : acc) a = _mm512_setzero_ps();
      float m = -INFINITY, sum = 0.0f;
      for (int j = 0; j <= i; ++j) {
        const SoftmaxStep st = NextKey(DotZmm(q32, k32 + static_cast<size_t>(j) * kDim), m);
        if (st.rescale) {
          const __m512 f = _mm512_set1_ps(st.ms);
          for (auto& a : acc) a = RoundF16Zmm(_mm512_mul_ps(a, f));
        }
        const __m512 w = _mm512_set1_ps(st.vs);
        const float* vj = v32 + static_cast<size_t>(j) * kDim;
        for (int c = 0; c < kDim / 16; ++c) {
          acc[c] = RoundF16Zmm(_mm512_fmadd_ps(_mm512_loadu_ps(vj + 16 * c), w, acc[c]));
        }
        sum = std::fma(sum, st.ms, st.vs);
      }
      const __m512 inv = _mm512_set1_ps(sum == 0.0f ? 0.0f : 1.0f / sum);
      float* o = out + (static_cast<size_t>(i) * kHeads + h) * kDim;
      for (int c = 0; c < kDim / 16; ++c) _mm512_storeu_ps(o + 16 * c, _mm512_mul_ps(acc[c], inv));
    }
  }
}

std::vector<float> ToFloat(const std::vector<uint16_t>& h) {
  std::vector<float> f(h.size());
  kernels::F16ToF32Row(h.data(), f.data(), static_cast<int64_t>(h.size()));
  return f;
}

// Mismatching elements of the first kChecked queries of every head against the statement.
int64_t CheckOrder(const Inputs& in, const std::vector<float>& got, bool fp16) {
  std::vector<float> want(kDim), have(kDim);
  int64_t n = 0;
  for (int h = 0; h < kHeads; ++h) {
    for (int i = 0; i < kChecked; ++i) {
      OrderReferenceQuery(in, i, h, fp16, want.data());
      const float* g = &got[(static_cast<size_t>(i) * kHeads + h) * kDim];
      have.assign(g, g + kDim);
      n += CountMismatches(want, have);
    }
  }
  return n;
}

}  // namespace

bool RunAttentionOrderCost(int reps) {
  const Inputs in = MakeInputs();
  const size_t n_out = static_cast<size_t>(kTokens) * kHeads * kDim;
  std::vector<float> y_r(n_out), y_16(n_out), y_32(n_out);
  std::vector<int64_t> q_pos(kTokens);
  std::vector<int32_t> slots(kTokens);
  for (int i = 0; i < kTokens; ++i) q_pos[i] = slots[i] = i;
  std::vector<uint16_t> k = in.k, v = in.v;  // KvLayerView takes mutable pointers
  const kernels::KvLayerView kv{kernels::KvDtype::kF16, k.data(), v.data(), kDim};
  kernels::AttentionParams params;
  params.n_heads = kHeads;
  params.n_kv_heads = 1;
  params.head_dim = kDim;
  params.scale = 1.0f / 16.0f;
  params.scale_query = true;
  auto radixlm = [&] {
    kernels::AttentionForSequence(params, in.q.data(), q_pos.data(), kTokens, kv, slots.data(),
                                  kTokens, y_r.data(), nullptr);
  };
  auto order32 = [&] {
    const std::vector<float> k32 = ToFloat(in.k), v32 = ToFloat(in.v);
    OrderAttentionF32(in, k32.data(), v32.data(), y_32.data());
  };
  radixlm();
  order32();
  const int64_t miss32 = CheckOrder(in, y_32, false);
  const double r = CallsPerSecond(reps, radixlm), o32 = CallsPerSecond(reps, order32);
  double max_diff = 0.0, max_out = 0.0;
  for (size_t i = 0; i < n_out; ++i) {
    max_diff = std::max(max_diff, std::abs(static_cast<double>(y_r[i]) - y_32[i]));
    max_out = std::max(max_out, std::abs(static_cast<double>(y_32[i])));
  }
  std::printf(
      "| causal attention, 512 queries x 4 heads, head size 256 | ms per layer |"
      " / radixlm | order mismatches (first 64 queries) |\n|---|---|---|---|\n");
  std::printf("| radixlm | %.2f | 1.00x | |\n", 1e3 / r);
  std::printf("| ggml-order, f32 arithmetic | %.2f | %.2fx | %lld |\n", 1e3 / o32, r / o32,
              static_cast<long long>(miss32));
  bool exact = miss32 == 0;
#if defined(RADIXLM_ORDER_COST_FP16)
  if (__builtin_cpu_supports("avx512fp16")) {
    auto order16 = [&] {
      const std::vector<float> k32 = ToFloat(in.k);
      OrderAttentionFp16(in, k32.data(), y_16.data());
    };
    order16();
    const int64_t miss16 = CheckOrder(in, y_16, true);
    const double o16 = CallsPerSecond(reps, order16);
    std::printf("| ggml-order, fp16 arithmetic | %.2f | %.2fx | %lld |\n", 1e3 / o16, r / o16,
                static_cast<long long>(miss16));
    exact = exact && miss16 == 0;
  } else {
    std::printf("| ggml-order, fp16 arithmetic | (no AVX512-FP16 on this CPU) | | |\n");
  }
#else
  std::printf("| ggml-order, fp16 arithmetic | (compiler without -mavx512fp16) | | |\n");
#endif
  std::printf("\nradixlm vs ggml-order (f32): max diff / max output %.2g\n", max_diff / max_out);
  return exact;
}

}  // namespace radixlm::order_cost
