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

float RowMax(const float* s, int n) {
  int j = 0;
  __m256 m = _mm256_set1_ps(-INFINITY);
  for (; j + 8 <= n; j += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(s + j));
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_movehdup_ps(h));
  float r = _mm_cvtss_f32(h);
  for (; j < n; ++j) r = std::max(r, s[j]);
  return r;
}

void LoadF16Rows(const uint16_t* base, const int32_t* slots, int64_t row_elems, int64_t head_off,
                 int width, int n, int n_ahead, float* dst) {
  constexpr int kAhead = 8;  // rows prefetched ahead of the one converted
  const int64_t bytes = static_cast<int64_t>(width) * 2;
  for (int j = -kAhead; j < n; ++j) {
    if (j + kAhead < n_ahead) {
      const char* p =
          reinterpret_cast<const char*>(base + slots[j + kAhead] * row_elems + head_off);
      for (int64_t b = 0; b < bytes; b += 64) _mm_prefetch(p + b, _MM_HINT_T0);
    }
    if (j < 0) continue;
    const uint16_t* src = base + slots[j] * row_elems + head_off;
    float* d = dst + static_cast<int64_t>(j) * width;
    for (int e = 0; e < width; e += 8) {
      _mm256_storeu_ps(d + e,
                       _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + e))));
    }
  }
}

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

namespace {

// 8 values of a key or value row, as float (F16 converted exactly).
inline __m256 Load8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m256 Load8(const float* p) { return _mm256_loadu_ps(p); }

// Rows [0, R) x columns [d, d + 8 * C) of AccumulateTile (value row j at row_at(j), float or
// F16), accumulators in registers.
template <int R, int C, typename RowAt>
void AccumulateMicro(const float* p, int64_t p_stride, RowAt row_at, int n, int d, float* acc,
                     int64_t acc_stride) {
  __m256 a[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) a[r][c] = _mm256_loadu_ps(acc + r * acc_stride + d + 8 * c);
  }
  for (int j = 0; j < n; ++j) {
    const auto* vj = row_at(j) + d;
    __m256 vv[C];
    for (int c = 0; c < C; ++c) vv[c] = Load8(vj + 8 * c);
    for (int r = 0; r < R; ++r) {
      const __m256 pr = _mm256_set1_ps(p[r * p_stride + j]);
      for (int c = 0; c < C; ++c) a[r][c] = _mm256_fmadd_ps(vv[c], pr, a[r][c]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) _mm256_storeu_ps(acc + r * acc_stride + d + 8 * c, a[r][c]);
  }
}

template <int R>
void AccumulateRows(const float* p, int64_t p_stride, const float* v, int n, int width, float* acc,
                    int64_t acc_stride) {
  const auto row_at = [&](int j) { return v + static_cast<int64_t>(j) * width; };
  int d = 0;
  for (; d + 16 <= width; d += 16)
    AccumulateMicro<R, 2>(p, p_stride, row_at, n, d, acc, acc_stride);
  for (; d + 8 <= width; d += 8) AccumulateMicro<R, 1>(p, p_stride, row_at, n, d, acc, acc_stride);
  if (d < width) {  // the last width % 8 columns
    for (int r = 0; r < R; ++r) {
      float* a = acc + r * acc_stride;
      for (int j = 0; j < n; ++j) {
        const float pj = p[r * p_stride + j];
        const float* vj = v + static_cast<int64_t>(j) * width;
        for (int e = d; e < width; ++e) a[e] = std::fma(vj[e], pj, a[e]);
      }
    }
  }
}

}  // namespace

void AccumulateTile(const float* p, int64_t p_stride, int n_rows, const float* v, int n, int width,
                    float* acc, int64_t acc_stride) {
  ForRowBlocksOf4(n_rows, [&](int r, auto rows) {
    AccumulateRows<decltype(rows)::value>(p + r * p_stride, p_stride, v, n, width,
                                          acc + r * acc_stride, acc_stride);
  });
}

namespace {

inline void PrefetchRow(const uint16_t* row, int64_t bytes) {
  const char* c = reinterpret_cast<const char*>(row);
  for (int64_t b = 0; b < bytes; b += 64) _mm_prefetch(c + b, _MM_HINT_T0);
}

// Scores of K keys (rows k[0..K), float or F16) for M queries (q: [M, hd]): query i's score of
// key t at s[i * stride + t]. Per (query, key) one 8-lane accumulator over d ascending, then
// HsumF32: ScoreBlock's operations.
template <int K, int M, typename T>
void ScoreKeys(const float* q, int hd, const T* const* k, float* s, int64_t stride) {
  __m256 acc[K][M];
  for (int t = 0; t < K; ++t) {
    for (int i = 0; i < M; ++i) acc[t][i] = _mm256_setzero_ps();
  }
  for (int d = 0; d < hd; d += kLanes) {
    __m256 kv[K];
    for (int t = 0; t < K; ++t) kv[t] = Load8(k[t] + d);
    for (int i = 0; i < M; ++i) {
      const __m256 qv = _mm256_loadu_ps(q + i * hd + d);
      for (int t = 0; t < K; ++t) acc[t][i] = _mm256_fmadd_ps(kv[t], qv, acc[t][i]);
    }
  }
  for (int i = 0; i < M; ++i) {
    for (int t = 0; t < K; ++t) s[i * stride + t] = HsumF32(acc[t][i]);
  }
}

// ScoreKeys for n_q queries, four at a time.
template <int K, typename T>
void ScoreKeysQueries(const float* q, int n_q, int hd, const T* const* k, float* s,
                      int64_t stride) {
  for (int i = 0; i < n_q; i += 4) {
    const float* qi = q + static_cast<int64_t>(i) * hd;
    float* si = s + i * stride;
    switch (std::min(4, n_q - i)) {
      case 4:
        ScoreKeys<K, 4>(qi, hd, k, si, stride);
        break;
      case 3:
        ScoreKeys<K, 3>(qi, hd, k, si, stride);
        break;
      case 2:
        ScoreKeys<K, 2>(qi, hd, k, si, stride);
        break;
      default:
        ScoreKeys<K, 1>(qi, hd, k, si, stride);
        break;
    }
  }
}

}  // namespace

void ScoreTile(const float* q, int n_q, const float* k, int n, int head_dim, float* scores,
               int64_t score_stride) {
  if (head_dim % kLanes != 0) {
    for (int i = 0; i < n_q; ++i) {
      scalar::ScoreBlock(q + static_cast<int64_t>(i) * head_dim, k, n, head_dim,
                         scores + i * score_stride);
    }
    return;
  }
  int j = 0;
  for (; j + 2 <= n; j += 2) {
    const float* kj[2] = {k + static_cast<int64_t>(j) * head_dim,
                          k + static_cast<int64_t>(j + 1) * head_dim};
    ScoreKeysQueries<2>(q, n_q, head_dim, kj, scores + j, score_stride);
  }
  if (j < n) {
    const float* kj[1] = {k + static_cast<int64_t>(j) * head_dim};
    ScoreKeysQueries<1>(q, n_q, head_dim, kj, scores + j, score_stride);
  }
}

void ScoreF16(const float* q, int n_q, const uint16_t* base, const int32_t* slots,
              int64_t row_elems, int64_t head_off, int n, int n_ahead, int head_dim, float* scores,
              int64_t score_stride) {
  constexpr int kAhead = 8;  // rows prefetched ahead of the pair scored
  const int64_t bytes = static_cast<int64_t>(head_dim) * 2;
  auto row = [&](int j) { return base + slots[j] * row_elems + head_off; };
  for (int j = 0; j < std::min(kAhead, n_ahead); ++j) PrefetchRow(row(j), bytes);
  int j = 0;
  for (; j + 2 <= n; j += 2) {
    for (int t = j + kAhead; t < std::min(j + kAhead + 2, n_ahead); ++t) PrefetchRow(row(t), bytes);
    const uint16_t* k[2] = {row(j), row(j + 1)};
    ScoreKeysQueries<2>(q, n_q, head_dim, k, scores + j, score_stride);
  }
  if (j < n) {
    const uint16_t* k[1] = {row(j)};
    ScoreKeysQueries<1>(q, n_q, head_dim, k, scores + j, score_stride);
  }
}

void AccumulateF16(const float* p, int64_t p_stride, int n_rows, const uint16_t* base,
                   const int32_t* slots, int64_t row_elems, int64_t head_off, int n, int width,
                   float* acc, int64_t acc_stride) {
  // The column strips below each take one line of every row: ask for the rows whole first.
  for (int j = 0; j < n; ++j) PrefetchRow(base + slots[j] * row_elems + head_off, width * 2);
  ForRowBlocksOf4(n_rows, [&](int r, auto rows) {
    constexpr int R = decltype(rows)::value;
    const float* pr = p + r * p_stride;
    float* ar = acc + r * acc_stride;
    const auto row_at = [&](int j) { return base + slots[j] * row_elems + head_off; };
    int d = 0;
    for (; d + 16 <= width; d += 16)
      AccumulateMicro<R, 2>(pr, p_stride, row_at, n, d, ar, acc_stride);
    for (; d < width; d += 8) AccumulateMicro<R, 1>(pr, p_stride, row_at, n, d, ar, acc_stride);
  });
}

namespace {

constexpr int kKeysT = kPanelKeys;  // a transposed panel's row stride

// dst[e * kKeysT] = value d + e of the 8 rows r[0..8) (row t in lane t): an 8 x 8 transpose.
inline void StoreTransposed8(__m256 r[8], float* dst) {
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int e = 0; e < 4; ++e) {
    _mm256_storeu_ps(dst + e * kKeysT, _mm256_permute2f128_ps(u[e], u[e + 4], 0x20));
    _mm256_storeu_ps(dst + (e + 4) * kKeysT, _mm256_permute2f128_ps(u[e], u[e + 4], 0x31));
  }
}

// Scores of M queries (rows of q, stride hd) against the 8 V keys from column jv of a
// transposed panel kt: query i's at out[i * out_stride + t], t < 8 V. Each lane class of the
// dot (the terms d == l mod 8) is an accumulator of its own, run one class at a time (M V
// chains), so the classes meet in vertical adds in LaneSum's order:
// ((c0 + c4) + (c2 + c6)) + ((c1 + c5) + (c3 + c7)).
template <int M, int V>
void ScoreKeyVectors(const float* q, int hd, const float* kt, int jv, float* out,
                     int64_t out_stride) {
  constexpr int kClass[4] = {0, 2, 1, 3};  // c_l + c_{l+4} for these l, in the tree's order
  __m256 pair[4][M][V];
  for (int g = 0; g < 4; ++g) {
    for (int half = 0; half < 2; ++half) {
      __m256 a[M][V];
      for (int i = 0; i < M; ++i) {
        for (int v = 0; v < V; ++v) a[i][v] = _mm256_setzero_ps();
      }
      for (int d = kClass[g] + 4 * half; d < hd; d += kLanes) {
        __m256 kv[V];
        for (int v = 0; v < V; ++v) kv[v] = _mm256_loadu_ps(kt + d * kKeysT + jv + 8 * v);
        for (int i = 0; i < M; ++i) {
          const __m256 qb = _mm256_broadcast_ss(q + i * hd + d);
          for (int v = 0; v < V; ++v) a[i][v] = _mm256_fmadd_ps(kv[v], qb, a[i][v]);
        }
      }
      for (int i = 0; i < M; ++i) {
        for (int v = 0; v < V; ++v) {
          pair[g][i][v] = half == 0 ? a[i][v] : _mm256_add_ps(pair[g][i][v], a[i][v]);
        }
      }
    }
  }
  for (int i = 0; i < M; ++i) {
    for (int v = 0; v < V; ++v) {
      const __m256 s = _mm256_add_ps(_mm256_add_ps(pair[0][i][v], pair[1][i][v]),
                                     _mm256_add_ps(pair[2][i][v], pair[3][i][v]));
      _mm256_storeu_ps(out + i * out_stride + 8 * v, s);
    }
  }
}

// ScoreKeyVectors for M queries against the 8 V keys from jv (a panel's first, or its second
// 8 with V = 1) clipped to [j0, j1): whole vectors inside the range stored in place, a partial
// one at its ends through a buffer.
template <int M, int V>
void ScoreClipped(const float* q, int hd, const float* kt, int jv, int j0, int j1, float* s,
                  int64_t stride) {
  const float* panel = kt + TransposedAt(jv - jv % kKeysT, 0, hd);
  const int lo = std::max(jv, j0), hi = std::min(jv + 8 * V, j1);
  if (lo == jv && hi == jv + 8 * V) {
    return ScoreKeyVectors<M, V>(q, hd, panel, jv % kKeysT, s + (jv - j0), stride);
  }
  alignas(32) float tmp[M * 8 * V];
  ScoreKeyVectors<M, V>(q, hd, panel, jv % kKeysT, tmp, 8 * V);
  for (int i = 0; i < M; ++i) {
    std::copy(tmp + i * 8 * V + (lo - jv), tmp + i * 8 * V + (hi - jv), s + i * stride + (lo - j0));
  }
}

}  // namespace

void LoadF16KeysT(const uint16_t* base, const int32_t* slots, int64_t row_elems, int64_t head_off,
                  int head_dim, int n, int n_ahead, float* dst) {
  constexpr int kAhead = 8;  // rows prefetched ahead of the group converted
  const int64_t bytes = static_cast<int64_t>(head_dim) * 2;
  auto row = [&](int j) { return base + slots[j] * row_elems + head_off; };
  for (int j = 0; j < std::min(kAhead, n_ahead); ++j) PrefetchRow(row(j), bytes);
  for (int j = 0; j < n; j += 8) {
    for (int t = j + kAhead; t < std::min(j + 2 * kAhead, n_ahead); ++t) PrefetchRow(row(t), bytes);
    const uint16_t* rows[8];
    const int m = std::min(8, n - j);
    for (int t = 0; t < 8; ++t) rows[t] = t < m ? row(j + t) : nullptr;
    for (int d = 0; d < head_dim; d += 8) {
      __m256 r[8];
      for (int t = 0; t < 8; ++t) {
        r[t] = rows[t] != nullptr ? Load8(rows[t] + d) : _mm256_setzero_ps();
      }
      StoreTransposed8(r, dst + TransposedAt(j, d, head_dim));
    }
  }
}

void ScoreKeysT(const float* q, int n_q, const float* kt, int j0, int j1, int head_dim,
                float* scores, int64_t score_stride) {
  // Key vectors outer, queries inner: a panel is read from L1 by every query.
  for (int jv = j0 / 8 * 8; jv < j1;) {
    const bool whole_panel = jv % kKeysT == 0 && j1 - jv > 8;  // both vectors of a panel
    constexpr int kM = 4;  // queries per call: 8 chains, 6 loads per 8 fused multiply-adds
    int i = 0;
    for (; i + kM <= n_q; i += kM) {
      const float* qi = q + static_cast<int64_t>(i) * head_dim;
      float* si = scores + i * score_stride;
      whole_panel ? ScoreClipped<kM, 2>(qi, head_dim, kt, jv, j0, j1, si, score_stride)
                  : ScoreClipped<kM, 1>(qi, head_dim, kt, jv, j0, j1, si, score_stride);
    }
    for (; i < n_q; ++i) {
      const float* qi = q + static_cast<int64_t>(i) * head_dim;
      float* si = scores + i * score_stride;
      whole_panel ? ScoreClipped<1, 2>(qi, head_dim, kt, jv, j0, j1, si, score_stride)
                  : ScoreClipped<1, 1>(qi, head_dim, kt, jv, j0, j1, si, score_stride);
    }
    jv += whole_panel ? 16 : 8;
  }
}

}  // namespace radixlm::kernels::cpu::avx2
