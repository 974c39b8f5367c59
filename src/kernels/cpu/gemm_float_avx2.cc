// AVX2 float GEMM over packed F32 / F16 / BF16 weights (kernels/packed_weights.h): column k of a
// 16-row group is two ymm (rows 0-7, 8-15), so a tile of T tokens is 2T accumulators and two
// weight loads per column. Per element: fma(w, x, acc) over the columns in ascending order, as
// PackedGemmReference (bit for bit, whatever the tile).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "gguf/ggml_types.h"
#include "kernels/cpu/gemm_packed.h"

namespace radixlm::kernels::cpu::avx2 {
namespace {

constexpr int kMaxTile = 6;

// Rows 8h .. 8h + 7 of the column at p.
template <int kBytes, bool kBf16>
inline __m256 LoadHalf(const uint8_t* p, int h) {
  if constexpr (kBytes == 4) {
    return _mm256_load_ps(reinterpret_cast<const float*>(p) + 8 * h);
  } else {
    const __m128i v = _mm_load_si128(reinterpret_cast<const __m128i*>(p + 16 * h));
    if constexpr (kBf16) {
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
    } else {
      return _mm256_cvtph_ps(v);
    }
  }
}

// Groups [g, g + G) x tokens [t0, t0 + T): 2 G T independent accumulator chains (a few tokens
// take several groups at once, so decode is not bound by the latency of one fma chain).
template <int T, int G, int kBytes, bool kBf16>
void Tile(const PackedWeights& w, const PackedActivations& a, int64_t g, int64_t t0, float* y,
          int64_t y_stride) {
  __m256 acc[G][T][2];
  for (int i = 0; i < G; ++i) {
    for (int t = 0; t < T; ++t) acc[i][t][0] = acc[i][t][1] = _mm256_setzero_ps();
  }
  const float* x[T];
  for (int t = 0; t < T; ++t) x[t] = a.xf + (t0 + t) * a.xf_stride;
  for (int64_t b = 0; b < a.nb; ++b) {
    const uint8_t* blk[G];
    for (int i = 0; i < G; ++i) blk[i] = w.Block(g + i, b);
    for (int k = 0; k < 32; ++k) {
      for (int i = 0; i < G; ++i) {
        const uint8_t* col = blk[i] + k * 16 * kBytes;
        const __m256 w0 = LoadHalf<kBytes, kBf16>(col, 0);
        const __m256 w1 = LoadHalf<kBytes, kBf16>(col, 1);
        for (int t = 0; t < T; ++t) {
          const __m256 xv = _mm256_set1_ps(x[t][32 * b + k]);
          acc[i][t][0] = _mm256_fmadd_ps(w0, xv, acc[i][t][0]);
          acc[i][t][1] = _mm256_fmadd_ps(w1, xv, acc[i][t][1]);
        }
      }
    }
  }
  for (int i = 0; i < G; ++i) {
    const int valid = static_cast<int>(std::min<int64_t>(16, w.rows - 16 * (g + i)));
    for (int t = 0; t < T; ++t) {
      float* out = y + (t0 + t) * y_stride + 16 * (g + i);
      if (valid == 16) {
        _mm256_storeu_ps(out, acc[i][t][0]);
        _mm256_storeu_ps(out + 8, acc[i][t][1]);
      } else {
        alignas(32) float tmp[16];
        _mm256_store_ps(tmp, acc[i][t][0]);
        _mm256_store_ps(tmp + 8, acc[i][t][1]);
        std::memcpy(out, tmp, sizeof(float) * valid);
      }
    }
  }
}

// Tokens [t0, t0 + T) for groups [g0, g1): G groups at a time, then one at a time.
template <int T, int G, int kBytes, bool kBf16>
void TokenTile(const PackedWeights& w, const PackedActivations& a, int64_t g0, int64_t g1,
               int64_t t0, float* y, int64_t y_stride) {
  int64_t g = g0;
  if constexpr (G > 1) {
    for (; g + G <= g1; g += G) Tile<T, G, kBytes, kBf16>(w, a, g, t0, y, y_stride);
  }
  for (; g < g1; ++g) Tile<T, 1, kBytes, kBf16>(w, a, g, t0, y, y_stride);
}

template <int kBytes, bool kBf16>
void Gemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
          int64_t g1, float* y, int64_t y_stride) {
  int64_t t = 0;
  for (; t + kMaxTile <= n_tokens; t += kMaxTile) {
    TokenTile<kMaxTile, 1, kBytes, kBf16>(w, a, g0, g1, t, y, y_stride);
  }
  switch (n_tokens - t) {
    case 5:
      return TokenTile<5, 1, kBytes, kBf16>(w, a, g0, g1, t, y, y_stride);
    case 4:
      return TokenTile<4, 1, kBytes, kBf16>(w, a, g0, g1, t, y, y_stride);
    case 3:
      return TokenTile<3, 1, kBytes, kBf16>(w, a, g0, g1, t, y, y_stride);
    case 2:
      return TokenTile<2, 2, kBytes, kBf16>(w, a, g0, g1, t, y, y_stride);
    case 1:
      return TokenTile<1, 4, kBytes, kBf16>(w, a, g0, g1, t, y, y_stride);
    default:
      return;
  }
}

}  // namespace

void FloatGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
               int64_t g1, float* y, int64_t y_stride) {
  if (w.float_bytes == 4) return Gemm<4, false>(w, a, n_tokens, g0, g1, y, y_stride);
  if (w.source_type == gguf::GgmlType::kBF16) {
    return Gemm<2, true>(w, a, n_tokens, g0, g1, y, y_stride);
  }
  Gemm<2, false>(w, a, n_tokens, g0, g1, y, y_stride);
}

}  // namespace radixlm::kernels::cpu::avx2
