// AVX512-BF16 GEMM over BF16 weights packed in k pairs (kernels/packed_weights.h, bf16_pairs):
// one zmm holds the column pair (2p, 2p + 1) of a 16-row group, and vdpbf16ps adds the pair's
// two products (bf16 activations broadcast as one dword) to 16 float accumulators. Per element:
// acc = (acc + w[2p+1] x[2p+1]) + w[2p] x[2p] over the pairs in ascending order, each product
// exact and each addition rounded to nearest even (denormal inputs and results flushed to
// zero), as PackedGemmReference, whatever the tile.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/gemm_packed.h"

namespace radixlm::kernels::cpu::avx512bf16 {
namespace {

constexpr int kMaxTile = 8;

// Groups [g, g + G) x tokens [t0, t0 + T).
template <int T, int G>
void Tile(const PackedWeights& w, const PackedActivations& a, int64_t g, int64_t t0, float* y,
          int64_t y_stride) {
  __m512 acc[G][T];
  for (int i = 0; i < G; ++i) {
    for (int t = 0; t < T; ++t) acc[i][t] = _mm512_setzero_ps();
  }
  const uint16_t* x[T];
  for (int t = 0; t < T; ++t) x[t] = a.xb + (t0 + t) * a.xb_stride;
  for (int64_t b = 0; b < a.nb; ++b) {
    const uint8_t* blk[G];
    for (int i = 0; i < G; ++i) blk[i] = w.Block(g + i, b);
    for (int p = 0; p < 16; ++p) {
      __m512i xp[T];
      for (int t = 0; t < T; ++t) {
        uint32_t pair;
        std::memcpy(&pair, x[t] + 32 * b + 2 * p, 4);
        xp[t] = _mm512_set1_epi32(static_cast<int>(pair));
      }
      for (int i = 0; i < G; ++i) {
        const __m512bh wv = (__m512bh)_mm512_load_si512(blk[i] + 64 * p);
        for (int t = 0; t < T; ++t) acc[i][t] = _mm512_dpbf16_ps(acc[i][t], wv, (__m512bh)xp[t]);
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
template <int T, int G>
void TokenTile(const PackedWeights& w, const PackedActivations& a, int64_t g0, int64_t g1,
               int64_t t0, float* y, int64_t y_stride) {
  int64_t g = g0;
  if constexpr (G > 1) {
    for (; g + G <= g1; g += G) Tile<T, G>(w, a, g, t0, y, y_stride);
  }
  for (; g < g1; ++g) Tile<T, 1>(w, a, g, t0, y, y_stride);
}

}  // namespace

void Bf16Gemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
              int64_t g1, float* y, int64_t y_stride) {
  int64_t t = 0;
  for (; t + kMaxTile <= n_tokens; t += kMaxTile) {
    TokenTile<kMaxTile, 2>(w, a, g0, g1, t, y, y_stride);
  }
  switch (n_tokens - t) {
    case 7:
      return TokenTile<7, 2>(w, a, g0, g1, t, y, y_stride);
    case 6:
      return TokenTile<6, 2>(w, a, g0, g1, t, y, y_stride);
    case 5:
      return TokenTile<5, 2>(w, a, g0, g1, t, y, y_stride);
    case 4:
      return TokenTile<4, 4>(w, a, g0, g1, t, y, y_stride);
    case 3:
      return TokenTile<3, 4>(w, a, g0, g1, t, y, y_stride);
    case 2:
      return TokenTile<2, 4>(w, a, g0, g1, t, y, y_stride);
    case 1:
      return TokenTile<1, 8>(w, a, g0, g1, t, y, y_stride);
    default:
      return;
  }
}

}  // namespace radixlm::kernels::cpu::avx512bf16
