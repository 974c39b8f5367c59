// AVX2 attention inner kernels: score rows, softmax exponentials and P·V accumulation, in
// ggml's operation order (see attention_impl.h).
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/attention_impl.h"
#include "kernels/cpu/avx2_common.h"

namespace radixlm::kernels::cpu::avx2 {
namespace {

// ggml_v_expf for AVX2+FMA (an Arm optimized-routines expf): n = round(x / ln2) by the
// 1.5 * 2^23 shift, b = x - n ln2 in two steps, exp(b) - 1 by a degree-5 polynomial, scaled by
// 2^n through the exponent bits; |n| > 126 takes a two-factor scale, |n| > 192 saturates.
inline __m256 GgmlExp(__m256 x) {
  const __m256 r = _mm256_set1_ps(0x1.8p23f);
  const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), r);
  const __m256 n = _mm256_sub_ps(z, r);
  const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f),
                                    _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
  const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
  const __m256 k =
      _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_castps_si256(_mm256_set1_ps(1.0f))));
  const __m256 abs_n = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
  const __m256 c = _mm256_cmp_ps(abs_n, _mm256_set1_ps(126.0f), _CMP_GT_OQ);
  const __m256 u = _mm256_mul_ps(b, b);
  const __m256 j = _mm256_fmadd_ps(
      _mm256_fmadd_ps(
          _mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
          _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
      u, _mm256_mul_ps(_mm256_set1_ps(0x1.ffffecp-1f), b));
  const __m256 normal = _mm256_fmadd_ps(k, j, k);
  if (_mm256_movemask_ps(c) == 0) return normal;
  const __m256i g =
      _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ)),
                       _mm256_set1_epi32(static_cast<int>(0x82000000u)));
  const __m256 s1 = _mm256_castsi256_ps(_mm256_add_epi32(g, _mm256_set1_epi32(0x7f000000)));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_sub_epi32(e, g));
  const __m256 d = _mm256_cmp_ps(abs_n, _mm256_set1_ps(192.0f), _CMP_GT_OQ);
  const __m256 scaled = _mm256_mul_ps(_mm256_fmadd_ps(s2, j, s2), s1);
  return _mm256_blendv_ps(_mm256_blendv_ps(normal, scaled, c), _mm256_mul_ps(s1, s1), d);
}

}  // namespace

void ScoreBlock(const float* q, const float* k, int n, int head_dim, float* scores) {
  if (head_dim % kLanes != 0) return scalar::ScoreBlock(q, k, n, head_dim, scores);
  // One accumulator per key (as tinyBLAS); four keys at a time for instruction parallelism.
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const float* k0 = k + static_cast<int64_t>(j) * head_dim;
    const float* k1 = k0 + head_dim;
    const float* k2 = k1 + head_dim;
    const float* k3 = k2 + head_dim;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    __m256 a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    for (int d = 0; d < head_dim; d += kLanes) {
      const __m256 qv = _mm256_loadu_ps(q + d);
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(k0 + d), qv, a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(k1 + d), qv, a1);
      a2 = _mm256_fmadd_ps(_mm256_loadu_ps(k2 + d), qv, a2);
      a3 = _mm256_fmadd_ps(_mm256_loadu_ps(k3 + d), qv, a3);
    }
    scores[j] = HsumF32(a0);
    scores[j + 1] = HsumF32(a1);
    scores[j + 2] = HsumF32(a2);
    scores[j + 3] = HsumF32(a3);
  }
  for (; j < n; ++j) {
    const float* kj = k + static_cast<int64_t>(j) * head_dim;
    __m256 a = _mm256_setzero_ps();
    for (int d = 0; d < head_dim; d += kLanes) {
      a = _mm256_fmadd_ps(_mm256_loadu_ps(kj + d), _mm256_loadu_ps(q + d), a);
    }
    scores[j] = HsumF32(a);
  }
}

// Like ggml's AVX2 softmax over a padded row: each aligned group of 8 is summed in float (HsumF32
// is ggml's lane tree), the groups in double. Partial groups at the ends get zeros in the lanes
// outside [0, n), which leaves the tree's other sums unchanged.
double ExpSum(float* s, int n, int lane0, float max) {
  const __m256 vm = _mm256_set1_ps(max);
  double sum = 0.0;
  int j = 0;
  while (j < n) {
    const int l0 = (lane0 + j) % kLanes;
    if (l0 == 0 && j + kLanes <= n) {
      const __m256 e = GgmlExp(_mm256_sub_ps(_mm256_loadu_ps(s + j), vm));
      _mm256_storeu_ps(s + j, e);
      sum += static_cast<double>(HsumF32(e));
      j += kLanes;
      continue;
    }
    const int m = std::min(kLanes - l0, n - j);
    alignas(32) float lanes[kLanes] = {};
    for (int i = 0; i < m; ++i) lanes[l0 + i] = s[j + i] - max;
    alignas(32) float e[kLanes];
    _mm256_store_ps(e, GgmlExp(_mm256_load_ps(lanes)));
    for (int l = 0; l < kLanes; ++l) lanes[l] = (l >= l0 && l < l0 + m) ? e[l] : 0.0f;
    for (int i = 0; i < m; ++i) s[j + i] = lanes[l0 + i];
    sum += static_cast<double>(HsumF32(_mm256_load_ps(lanes)));
    j += m;
  }
  return sum;
}

void AccumulateBlock(const float* p, const float* v, int n, int width, int lane0, float* acc) {
  if (width % kLanes != 0) return scalar::AccumulateBlock(p, v, n, width, lane0, acc);
  // One key straight into its lane's accumulator row (the partial groups at the ends).
  auto one_key = [&](int j) {
    float* a = acc + static_cast<int64_t>((lane0 + j) % kLanes) * width;
    const float* vj = v + static_cast<int64_t>(j) * width;
    const __m256 pj = _mm256_set1_ps(p[j]);
    for (int d = 0; d < width; d += kLanes) {
      _mm256_storeu_ps(a + d, _mm256_fmadd_ps(_mm256_loadu_ps(vj + d), pj, _mm256_loadu_ps(a + d)));
    }
  };
  int j = 0;
  const int head = std::min(n, (kLanes - lane0 % kLanes) % kLanes);
  for (; j < head; ++j) one_key(j);
  // Whole groups: key j + l goes to lane l.
  const int full_end = j + (n - j) / kLanes * kLanes;
  if (full_end > j && width % 16 == 0) {
    // 16 columns (a 64-byte line of each V row) at a time, lanes 0-3 then 4-7: 8 accumulators
    // in registers, and every line of V is read once.
    for (int d = 0; d < width; d += 16) {
      for (int h = 0; h < kLanes; h += 4) {
        __m256 a[4][2];
        for (int l = 0; l < 4; ++l) {
          a[l][0] = _mm256_loadu_ps(acc + (h + l) * width + d);
          a[l][1] = _mm256_loadu_ps(acc + (h + l) * width + d + 8);
        }
        for (int g = j; g < full_end; g += kLanes) {
          for (int l = 0; l < 4; ++l) {
            const float* vk = v + static_cast<int64_t>(g + h + l) * width + d;
            const __m256 pk = _mm256_set1_ps(p[g + h + l]);
            a[l][0] = _mm256_fmadd_ps(_mm256_loadu_ps(vk), pk, a[l][0]);
            a[l][1] = _mm256_fmadd_ps(_mm256_loadu_ps(vk + 8), pk, a[l][1]);
          }
        }
        for (int l = 0; l < 4; ++l) {
          _mm256_storeu_ps(acc + (h + l) * width + d, a[l][0]);
          _mm256_storeu_ps(acc + (h + l) * width + d + 8, a[l][1]);
        }
      }
    }
  } else if (full_end > j) {
    // 8 lane accumulators of one 8-column chunk in registers.
    for (int d = 0; d < width; d += kLanes) {
      __m256 a[kLanes];
      for (int l = 0; l < kLanes; ++l) a[l] = _mm256_loadu_ps(acc + l * width + d);
      for (int g = j; g < full_end; g += kLanes) {
        const float* vg = v + static_cast<int64_t>(g) * width + d;
        for (int l = 0; l < kLanes; ++l) {
          a[l] = _mm256_fmadd_ps(_mm256_loadu_ps(vg + static_cast<int64_t>(l) * width),
                                 _mm256_set1_ps(p[g + l]), a[l]);
        }
      }
      for (int l = 0; l < kLanes; ++l) _mm256_storeu_ps(acc + l * width + d, a[l]);
    }
  }
  for (j = full_end; j < n; ++j) one_key(j);
}

}  // namespace radixlm::kernels::cpu::avx2
