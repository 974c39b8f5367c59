// AVX-512 P·V accumulation for attention: the same per-element operations as the scalar and
// AVX2 AccumulateBlock (attention_impl.h), 16 output columns per instruction.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/attention_impl.h"
#include "kernels/cpu/avx2_common.h"

namespace radixlm::kernels::cpu::avx512 {
namespace {

// M queries x 2 keys per zmm (key j in the low 8 lanes, key j + 1 in the high 8): lane l of
// each half accumulates the terms d == l (mod 8) in ascending d with fmas, as ScoreBlock does.
template <int M>
void ScoreTileM(const float* q, const float* k, int n, int hd, float* scores,
                int64_t score_stride) {
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const float* k0 = k + static_cast<int64_t>(j) * hd;
    __m512 acc[2][M];
    for (int p = 0; p < 2; ++p) {
      for (int i = 0; i < M; ++i) acc[p][i] = _mm512_setzero_ps();
    }
    for (int d = 0; d < hd; d += kLanes) {
      __m512 kk[2];
      for (int p = 0; p < 2; ++p) {
        const float* kp = k0 + static_cast<int64_t>(2 * p) * hd + d;
        kk[p] = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(kp)),
                                   _mm256_loadu_ps(kp + hd), 1);
      }
      for (int i = 0; i < M; ++i) {
        const __m512 qv = _mm512_broadcast_f32x8(_mm256_loadu_ps(q + i * hd + d));
        acc[0][i] = _mm512_fmadd_ps(kk[0], qv, acc[0][i]);
        acc[1][i] = _mm512_fmadd_ps(kk[1], qv, acc[1][i]);
      }
    }
    for (int i = 0; i < M; ++i) {
      float* s = scores + i * score_stride + j;
      for (int p = 0; p < 2; ++p) {
        s[2 * p] = avx2::HsumF32(_mm512_castps512_ps256(acc[p][i]));
        s[2 * p + 1] = avx2::HsumF32(_mm512_extractf32x8_ps(acc[p][i], 1));
      }
    }
  }
  if (j < n) {
    for (int i = 0; i < M; ++i) {
      avx2::ScoreBlock(q + i * hd, k + static_cast<int64_t>(j) * hd, n - j, hd,
                       scores + i * score_stride + j);
    }
  }
}

}  // namespace

void ScoreTile(const float* q, int n_q, const float* k, int n, int head_dim, float* scores,
               int64_t score_stride) {
  if (head_dim % kLanes != 0) {
    for (int i = 0; i < n_q; ++i) {
      scalar::ScoreBlock(q + i * head_dim, k, n, head_dim, scores + i * score_stride);
    }
    return;
  }
  for (int i = 0; i < n_q; i += 4) {
    const float* qi = q + static_cast<int64_t>(i) * head_dim;
    float* si = scores + i * score_stride;
    switch (std::min(4, n_q - i)) {
      case 4:
        ScoreTileM<4>(qi, k, n, head_dim, si, score_stride);
        break;
      case 3:
        ScoreTileM<3>(qi, k, n, head_dim, si, score_stride);
        break;
      case 2:
        ScoreTileM<2>(qi, k, n, head_dim, si, score_stride);
        break;
      default:
        ScoreTileM<1>(qi, k, n, head_dim, si, score_stride);
    }
  }
}

void AccumulateBlock(const float* p, const float* v, int n, int width, int lane0, float* acc) {
  if (width % 32 != 0) return avx2::AccumulateBlock(p, v, n, width, lane0, acc);
  // One key straight into its lane's accumulator row (the partial groups at the ends).
  auto one_key = [&](int j) {
    float* a = acc + static_cast<int64_t>((lane0 + j) % kLanes) * width;
    const float* vj = v + static_cast<int64_t>(j) * width;
    const __m512 pj = _mm512_set1_ps(p[j]);
    for (int d = 0; d < width; d += 16) {
      _mm512_storeu_ps(a + d, _mm512_fmadd_ps(_mm512_loadu_ps(vj + d), pj, _mm512_loadu_ps(a + d)));
    }
  };
  int j = 0;
  const int head = std::min(n, (kLanes - lane0 % kLanes) % kLanes);
  for (; j < head; ++j) one_key(j);
  // Whole groups: key g + l goes to lane l. 32 columns x 8 lanes in 16 registers, so every
  // line of V is read once.
  const int full_end = j + (n - j) / kLanes * kLanes;
  if (full_end > j) {
    for (int d = 0; d < width; d += 32) {
      __m512 a[kLanes][2];
      for (int l = 0; l < kLanes; ++l) {
        a[l][0] = _mm512_loadu_ps(acc + l * width + d);
        a[l][1] = _mm512_loadu_ps(acc + l * width + d + 16);
      }
      for (int g = j; g < full_end; g += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
          const float* vk = v + static_cast<int64_t>(g + l) * width + d;
          const __m512 pk = _mm512_set1_ps(p[g + l]);
          a[l][0] = _mm512_fmadd_ps(_mm512_loadu_ps(vk), pk, a[l][0]);
          a[l][1] = _mm512_fmadd_ps(_mm512_loadu_ps(vk + 16), pk, a[l][1]);
        }
      }
      for (int l = 0; l < kLanes; ++l) {
        _mm512_storeu_ps(acc + l * width + d, a[l][0]);
        _mm512_storeu_ps(acc + l * width + d + 16, a[l][1]);
      }
    }
  }
  for (j = full_end; j < n; ++j) one_key(j);
}

}  // namespace radixlm::kernels::cpu::avx512
