// AVX-512 float GEMM over packed F32 / F16 / BF16 weights (kernels/packed_weights.h): one zmm
// holds column k of a 16-row group, so a tile of T tokens is T accumulators and one weight load
// per column. Per element: fma(w, x, acc) over the columns in ascending order, as
// PackedGemmReference (bit for bit, whatever the tile).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "gguf/ggml_types.h"
#include "kernels/cpu/gemm_packed.h"

namespace radixlm::kernels::cpu::avx512 {
namespace {

constexpr int kMaxTile = 8;

template <int kBytes, bool kBf16>
inline __m512 LoadColumn(const uint8_t* p) {
  if constexpr (kBytes == 4) {
    return _mm512_load_ps(p);
  } else {
    const __m256i h = _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
    if constexpr (kBf16) {
      return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    } else {
      return _mm512_cvtph_ps(h);
    }
  }
}

// Groups [g, g + G) x tokens [t0, t0 + T): G * T independent accumulator chains (a few tokens
// take several groups at once, so decode is not bound by the latency of one fma chain).
template <int T, int G, int kBytes, bool kBf16>
void Tile(const PackedWeights& w, const PackedActivations& a, int64_t g, int64_t t0, float* y,
          int64_t y_stride) {
  __m512 acc[G][T];
  for (int i = 0; i < G; ++i) {
    for (int t = 0; t < T; ++t) acc[i][t] = _mm512_setzero_ps();
  }
  const float* x[T];
  for (int t = 0; t < T; ++t) x[t] = a.xf + (t0 + t) * a.xf_stride;
  for (int64_t b = 0; b < a.nb; ++b) {
    const uint8_t* blk[G];
    for (int i = 0; i < G; ++i) blk[i] = w.Block(g + i, b);
    for (int k = 0; k < 32; ++k) {
      for (int i = 0; i < G; ++i) {
        const __m512 wv = LoadColumn<kBytes, kBf16>(blk[i] + k * 16 * kBytes);
        for (int t = 0; t < T; ++t) {
          acc[i][t] = _mm512_fmadd_ps(wv, _mm512_set1_ps(x[t][32 * b + k]), acc[i][t]);
        }
      }
    }
  }
  for (int i = 0; i < G; ++i) {
    const int64_t valid = std::min<int64_t>(16, w.rows - 16 * (g + i));
    const auto mask = static_cast<__mmask16>((1u << valid) - 1);
    for (int t = 0; t < T; ++t) {
      _mm512_mask_storeu_ps(y + (t0 + t) * y_stride + 16 * (g + i), mask, acc[i][t]);
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
    TokenTile<kMaxTile, 2, kBytes, kBf16>(w, a, g0, g1, t, y, y_stride);
  }
  switch (n_tokens - t) {
    case 7:
      return TokenTile<7, 1, kBytes, kBf16>(w, a, g0, g1, t, y, y_stride);
    case 6:
      return TokenTile<6, 1, kBytes, kBf16>(w, a, g0, g1, t, y, y_stride);
    case 5:
      return TokenTile<5, 1, kBytes, kBf16>(w, a, g0, g1, t, y, y_stride);
    case 4:
      return TokenTile<4, 2, kBytes, kBf16>(w, a, g0, g1, t, y, y_stride);
    case 3:
      return TokenTile<3, 2, kBytes, kBf16>(w, a, g0, g1, t, y, y_stride);
    case 2:
      return TokenTile<2, 4, kBytes, kBf16>(w, a, g0, g1, t, y, y_stride);
    case 1:
      return TokenTile<1, 8, kBytes, kBf16>(w, a, g0, g1, t, y, y_stride);
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

}  // namespace radixlm::kernels::cpu::avx512
