// AVX-512 VNNI packed GEMM of the codebook types (kernels/packed_codebook.h: IQ3_XXS). Each
// 32-column block of a 16-row group is decoded once per tile of up to 8 tokens into the 8
// chunks of 16 rows x 4 columns that vpdpbusd takes, as u = grid * sign + 128 (the magnitudes
// gathered from the grid, the stored 7 sign bits completed by their parity), and multiplied
// with every token of the tile; the offset comes off with 128 times the block's activation sum,
// the block's 2 ls + 1 multiplies the block's sum, and the super-block's sum goes into the float
// accumulator as the scalar definition has it (the same bits).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/iq_grids.h"
#include "kernels/packed_codebook.h"

namespace radixlm::kernels::cpu::avx512vnni {
namespace {

constexpr int kMaxTokens = 8;

inline __m512 LoadHalves(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// The 8 signs bytes of each lane's 7 stored bits s (low 7 bits of each 32-bit lane, the rest
// zero), bit 7 their parity: s ^ parity(s) << 7.
inline __m512i CompleteSigns(__m512i s) {
  __m512i p = _mm512_xor_si512(s, _mm512_srli_epi32(s, 4));
  p = _mm512_xor_si512(p, _mm512_srli_epi32(p, 2));
  p = _mm512_xor_si512(p, _mm512_srli_epi32(p, 1));
  return _mm512_or_si512(s, _mm512_slli_epi32(_mm512_and_si512(p, _mm512_set1_epi32(1)), 7));
}

// Block `blk` of IQ3_XXS (packed_codebook.h) as u[c] = grid * sign + 128 of chunk c of the 16
// rows, and the rows' 2 ls + 1.
inline void DecodeIq3xxs(const uint8_t* blk, __m512i* u, __m512i* scale) {
  const __m512i aux = _mm512_loadu_si512(blk + 128);
  *scale = _mm512_add_epi32(_mm512_slli_epi32(_mm512_srli_epi32(aux, 28), 1), _mm512_set1_epi32(1));
  // Byte 0 of each 32-bit lane into all four of its bytes.
  const __m512i spread = _mm512_set4_epi32(0x0C0C0C0C, 0x08080808, 0x04040404, 0x00000000);
  const __m512i bits = _mm512_set1_epi32(0x08040201);
  const __m512i n127 = _mm512_set1_epi32(127), flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int l = 0; l < 4; ++l) {
    const __m512i s8 = CompleteSigns(_mm512_and_si512(_mm512_srli_epi32(aux, 7 * l), n127));
    for (int h = 0; h < 2; ++h) {
      const int c = 2 * l + h;
      const __m512i idx =
          _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 16 * c)));
      const __m512i mag = _mm512_i32gather_epi32(idx, reinterpret_cast<const int*>(kIq3xxsGrid), 4);
      const __m512i nib = _mm512_srli_epi32(s8, 4 * h);  // bits 0..3: the chunk's signs
      const __mmask64 neg = _mm512_test_epi8_mask(_mm512_shuffle_epi8(nib, spread), bits);
      // 128 + mag (mag < 128), or 128 - mag for the negative weights.
      u[c] = _mm512_mask_sub_epi8(_mm512_xor_si512(mag, flip), neg, flip, mag);
    }
  }
}

inline __m512i Broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

template <int kTokens>
void Iq3xxsTile(const PackedWeights& w, const PackedActivations& a, int64_t t0, int64_t g,
                bool prefetch, float* y, int64_t y_stride) {
  const int64_t nb = a.nb;
  __m512 facc[kTokens];
  for (int t = 0; t < kTokens; ++t) facc[t] = _mm512_setzero_ps();
  for (int64_t s = 0; s < nb / 8; ++s) {
    __m512i isum[kTokens];
    for (int t = 0; t < kTokens; ++t) isum[t] = _mm512_setzero_si512();
    for (int64_t b = 8 * s; b < 8 * s + 8; ++b) {
      const uint8_t* blk = w.Block(g, b);
      if (prefetch) PrefetchAhead(blk, w.stream_bytes);
      __m512i u[8], scale;
      DecodeIq3xxs(blk, u, &scale);
      for (int t = 0; t < kTokens; ++t) {
        const int64_t tok = t0 + t;
        const int8_t* xq = a.qs + tok * static_cast<int64_t>(a.stride) + 32 * b;
        __m512i dot = _mm512_setzero_si512();
        for (int c = 0; c < 8; ++c) dot = _mm512_dpbusd_epi32(dot, u[c], Broadcast4(xq + 4 * c));
        const int64_t tb = tok * nb + b;
        const int32_t xsum = a.sum16[2 * tb] + a.sum16[2 * tb + 1];
        dot = _mm512_sub_epi32(dot, _mm512_set1_epi32(128 * xsum));
        isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(dot, scale));
      }
    }
    const __m512 dw = LoadHalves(w.Supers(g, 8 * s));
    for (int t = 0; t < kTokens; ++t) {
      const __m512 d = _mm512_mul_ps(dw, _mm512_set1_ps(a.dx[(t0 + t) * nb + 8 * s]));
      facc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), d, facc[t]);
    }
  }
  const __m512 out_scale = _mm512_set1_ps(CodebookOutScale(w));
  const int64_t row0 = g * 16;
  const __mmask16 rows_mask =
      static_cast<__mmask16>((1u << std::min<int64_t>(16, w.rows - row0)) - 1);
  for (int t = 0; t < kTokens; ++t) {
    _mm512_mask_storeu_ps(y + (t0 + t) * y_stride + row0, rows_mask,
                          _mm512_mul_ps(out_scale, facc[t]));
  }
}

using TileFn = void (*)(const PackedWeights&, const PackedActivations&, int64_t, int64_t, bool,
                        float*, int64_t);
constexpr TileFn kTiles[kMaxTokens + 1] = {
    nullptr,       Iq3xxsTile<1>, Iq3xxsTile<2>, Iq3xxsTile<3>, Iq3xxsTile<4>,
    Iq3xxsTile<5>, Iq3xxsTile<6>, Iq3xxsTile<7>, Iq3xxsTile<8>,
};

}  // namespace

void CodebookGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
                  int64_t g1, float* y, int64_t y_stride) {
  for (int64_t g = g0; g < g1; ++g) {
    for (int64_t t0 = 0; t0 < n_tokens; t0 += kMaxTokens) {
      const int64_t n = std::min<int64_t>(kMaxTokens, n_tokens - t0);
      kTiles[n](w, a, t0, g, t0 == 0, y, y_stride);
    }
  }
}

}  // namespace radixlm::kernels::cpu::avx512vnni
