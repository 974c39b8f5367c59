// AVX-512 attention kernels: Q·K score tiles and P·V accumulation with the same per-element
// operations as the scalar and AVX2 kernels (attention_impl.h), 16 columns per instruction.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/attention_impl.h"
#include "kernels/cpu/avx2_common.h"

namespace radixlm::kernels::cpu::avx512 {
namespace {

// The lane sums of 4 keys at once (x: keys 0 and 1 in its low and high 8 lanes, y: keys 2 and
// 3), each in HsumF32's tree: s_m = l_m + l_(m+4), then (s_0 + s_2) + (s_1 + s_3).
inline __m128 LaneSums4(__m512 x, __m512 y) {
  // 128-bit quarters: a = the keys' lanes 0-3, b = their lanes 4-7, so quarter k of a + b holds
  // key k's s_0..s_3.
  const __m512 a = _mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(2, 0, 2, 0));
  const __m512 b = _mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(3, 1, 3, 1));
  const __m512 s = _mm512_add_ps(a, b);
  const __m512 t = _mm512_add_ps(s, _mm512_permute_ps(s, _MM_SHUFFLE(1, 0, 3, 2)));
  const __m512 u = _mm512_add_ps(t, _mm512_permute_ps(t, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm512_castps512_ps128(
      _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), u));
}

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
      _mm_storeu_ps(scores + i * score_stride + j, LaneSums4(acc[0][i], acc[1][i]));
    }
  }
  if (j < n) {
    for (int i = 0; i < M; ++i) {
      avx2::ScoreBlock(q + i * hd, k + static_cast<int64_t>(j) * hd, n - j, hd,
                       scores + i * score_stride + j);
    }
  }
}

// Rows [0, R) x columns [d, d + 16 * C) of AccumulateTile (mask: the valid lanes of the last
// vector), accumulators in registers.
template <int R, int C>
void AccumulateMicro(const float* p, int64_t p_stride, const float* v, int n, int width, int d,
                     __mmask16 mask, float* acc, int64_t acc_stride) {
  // Every loop over r and c fully unrolled, so that the R x C accumulators live in registers
  // only (with the loads and stores around the key loop left as loops, the compiler kept a copy
  // on the stack and stored all of them on every key).
  __m512 a[R][C];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) {
      a[r][c] =
          _mm512_maskz_loadu_ps(c == C - 1 ? mask : 0xffff, acc + r * acc_stride + d + 16 * c);
    }
  }
  for (int j = 0; j < n; ++j) {
    const float* vj = v + static_cast<int64_t>(j) * width + d;
    __m512 vv[C];
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c)
      vv[c] = _mm512_maskz_loadu_ps(c == C - 1 ? mask : 0xffff, vj + 16 * c);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 pr = _mm512_set1_ps(p[r * p_stride + j]);
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) a[r][c] = _mm512_fmadd_ps(vv[c], pr, a[r][c]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) {
      _mm512_mask_storeu_ps(acc + r * acc_stride + d + 16 * c, c == C - 1 ? mask : 0xffff, a[r][c]);
    }
  }
}

template <int R>
void AccumulateRows(const float* p, int64_t p_stride, const float* v, int n, int width, float* acc,
                    int64_t acc_stride) {
  int d = 0;
  // 1-16 columns past the last 64 go with those 64 (five vectors: head sizes 72 and 80 of the
  // vision encoders), so each p value is broadcast once for all of them.
  const int rest = width % 64;
  const int full = width / 64 - (width >= 64 && rest > 0 && rest <= 16 ? 1 : 0);
  for (; d < 64 * full; d += 64) {
    AccumulateMicro<R, 4>(p, p_stride, v, n, width, d, 0xffff, acc, acc_stride);
  }
  if (width - d > 64 && width - d <= 80) {
    const int m = width - d - 64;
    AccumulateMicro<R, 5>(p, p_stride, v, n, width, d, static_cast<__mmask16>((1u << m) - 1), acc,
                          acc_stride);
    d = width;
  }
  for (; d < width; d += 16) {
    const int m = std::min(16, width - d);
    AccumulateMicro<R, 1>(p, p_stride, v, n, width, d, static_cast<__mmask16>((1u << m) - 1), acc,
                          acc_stride);
  }
}

// Scores of M queries (rows of q, stride hd) against the 16 V keys of V transposed panels from
// `panel` (mask: the keys of a single panel to read; the others are zero and not stored by the
// caller): query i's at out[i * out_stride + t]. The lane classes of the dot (terms d == l mod 8)
// are accumulators of their own, met in vertical adds in LaneSum's order, as avx2::ScoreKeysT
// does 8 keys at a time.
template <int M, int V>
void ScorePanels(const float* q, int hd, const float* panel, __mmask16 mask, float* out,
                 int64_t out_stride) {
  constexpr int kClass[4] = {0, 2, 1, 3};  // c_l + c_{l+4} for these l, in the tree's order
  const int64_t panel_floats = static_cast<int64_t>(hd) * kPanelKeys;
  // left = (c0 + c4) + (c2 + c6) and right = (c1 + c5) + (c3 + c7), each built as soon as its
  // pairs are, so at most four sets of M x V sums are live (no spills at M = 4, V = 2).
  __m512 left[M][V], right[M][V], pair[M][V];
  for (int g = 0; g < 4; ++g) {
    for (int half = 0; half < 2; ++half) {
      __m512 a[M][V];
      for (int i = 0; i < M; ++i) {
        for (int v = 0; v < V; ++v) a[i][v] = _mm512_setzero_ps();
      }
      for (int d = kClass[g] + 4 * half; d < hd; d += kLanes) {
        __m512 kv[V];
        for (int v = 0; v < V; ++v) {
          kv[v] = _mm512_maskz_loadu_ps(mask, panel + v * panel_floats + d * kPanelKeys);
        }
        for (int i = 0; i < M; ++i) {
          const __m512 qb = _mm512_set1_ps(q[i * hd + d]);
          for (int v = 0; v < V; ++v) a[i][v] = _mm512_fmadd_ps(kv[v], qb, a[i][v]);
        }
      }
      for (int i = 0; i < M; ++i) {
        for (int v = 0; v < V; ++v) {
          pair[i][v] = half == 0 ? a[i][v] : _mm512_add_ps(pair[i][v], a[i][v]);
        }
      }
    }
    for (int i = 0; i < M; ++i) {
      for (int v = 0; v < V; ++v) {
        if (g == 0) left[i][v] = pair[i][v];
        if (g == 1) left[i][v] = _mm512_add_ps(left[i][v], pair[i][v]);
        if (g == 2) right[i][v] = pair[i][v];
        if (g == 3) right[i][v] = _mm512_add_ps(right[i][v], pair[i][v]);
      }
    }
  }
  for (int i = 0; i < M; ++i) {
    for (int v = 0; v < V; ++v) {
      _mm512_storeu_ps(out + i * out_stride + kPanelKeys * v,
                       _mm512_add_ps(left[i][v], right[i][v]));
    }
  }
}

// ScorePanels over the panels from key jp (a multiple of kPanelKeys) clipped to [j0, j1): two
// whole panels inside the range stored in place, one panel at an end of it through a buffer.
template <int M>
void ScoreClipped(const float* q, int hd, const float* kt, int jp, int j0, int j1, float* s,
                  int64_t stride) {
  const float* panel = kt + TransposedAt(jp, 0, hd);
  const int lo = std::max(jp, j0), hi = std::min(jp + kPanelKeys, j1);
  if (lo == jp && hi == jp + kPanelKeys) {
    return ScorePanels<M, 1>(q, hd, panel, 0xffff, s + (jp - j0), stride);
  }
  const auto mask = static_cast<__mmask16>(((1u << (hi - jp)) - 1) & ~((1u << (lo - jp)) - 1));
  alignas(64) float tmp[M * kPanelKeys];
  ScorePanels<M, 1>(q, hd, panel, mask, tmp, kPanelKeys);
  for (int i = 0; i < M; ++i) {
    std::copy(tmp + i * kPanelKeys + (lo - jp), tmp + i * kPanelKeys + (hi - jp),
              s + i * stride + (lo - j0));
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

void AccumulateTile(const float* p, int64_t p_stride, int n_rows, const float* v, int n, int width,
                    float* acc, int64_t acc_stride) {
  ForRowBlocksOf4(n_rows, [&](int r, auto rows) {
    AccumulateRows<decltype(rows)::value>(p + r * p_stride, p_stride, v, n, width,
                                          acc + r * acc_stride, acc_stride);
  });
}

void ScoreKeysT(const float* q, int n_q, const float* kt, int j0, int j1, int head_dim,
                float* scores, int64_t score_stride) {
  // Panels outer, queries inner: a panel is read from L1 by every query. Two whole panels at a
  // time (4 queries x 2 panels: 8 chains, 6 loads per 8 fused multiply-adds), else one.
  constexpr int kM = 4;
  for (int jp = j0 / kPanelKeys * kPanelKeys; jp < j1;) {
    const bool two = jp >= j0 && jp + 2 * kPanelKeys <= j1;
    const float* panel = kt + TransposedAt(jp, 0, head_dim);
    int i = 0;
    for (; i + kM <= n_q; i += kM) {
      const float* qi = q + static_cast<int64_t>(i) * head_dim;
      float* si = scores + i * score_stride;
      two ? ScorePanels<kM, 2>(qi, head_dim, panel, 0xffff, si + (jp - j0), score_stride)
          : ScoreClipped<kM>(qi, head_dim, kt, jp, j0, j1, si, score_stride);
    }
    for (; i < n_q; ++i) {
      const float* qi = q + static_cast<int64_t>(i) * head_dim;
      float* si = scores + i * score_stride;
      two ? ScorePanels<1, 2>(qi, head_dim, panel, 0xffff, si + (jp - j0), score_stride)
          : ScoreClipped<1>(qi, head_dim, kt, jp, j0, j1, si, score_stride);
    }
    jp += two ? 2 * kPanelKeys : kPanelKeys;
  }
}

}  // namespace radixlm::kernels::cpu::avx512
