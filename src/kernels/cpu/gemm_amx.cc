// AMX-INT8 tiles for the packed GEMM (kernels/packed_weights.h): 16 tokens x 16 weight rows per
// 32-column block in one tdpbsud (activations s8 as A, the packed chunks — already AMX's B
// layout — as u8 B), then the float epilogue of the AVX-512 VNNI kernel with the same operations
// per element, so results are bit-identical to it and to the scalar reference whatever path a
// token takes. The lookup types (IQ4_NL, IQ4_XS, MXFP4) map their nibbles through w.levels
// first, as the VNNI kernel does. Types with two scales per block (Q6_K, Q2_K, Q3_K) stay on the
// VNNI kernel.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/packed_chunks.h"

namespace radixlm::kernels::cpu::amx {
namespace {

// Tile registers (the intrinsics take literal numbers): C [16 tokens][16 rows] int32,
// A [16 tokens][32 bytes] s8 activations (the tiled layout: 512 contiguous bytes),
// B [8 chunks][16 rows x 4 bytes] u8; two sets.

struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Two sets of tiles (C, A, B = tmm0-2 and tmm3-5) so block b + 1's tile product runs while
// block b's result goes through the float epilogue.
#define RADIXLM_AMX_ISSUE(C, A, B, blk_index, unpacked)                              \
  do {                                                                               \
    const uint8_t* src = w.Block(g, blk_index);                                      \
    if constexpr (kNib) {                                                            \
      __m512i wq[8];                                                                 \
      UnpackChunks<kHigh>(src, wq);                                                  \
      if constexpr (kLut) {                                                          \
        for (int ch = 0; ch < 8; ++ch) wq[ch] = _mm512_shuffle_epi8(lut, wq[ch]);    \
      }                                                                              \
      for (int ch = 0; ch < 8; ++ch) _mm512_store_si512(unpacked + 64 * ch, wq[ch]); \
      src = unpacked;                                                                \
    }                                                                                \
    _tile_zero(C);                                                                   \
    _tile_loadd(A, a.tq + (kb0 + (blk_index)) * kActTile * 32, 32);                  \
    _tile_loadd(B, src, 64);                                                         \
    _tile_dpbsud(C, A, B);                                                           \
  } while (0)

// kLut: the nibbles index w.levels (IQ4_NL, IQ4_XS, MXFP4), looked up with vpshufb as the VNNI
// kernel does; IQ4_XS's 6-bit block scales times its super-block's d.
template <bool kNib, int kHigh, bool kMin, bool kLut = false>
void Tile16(const PackedWeights& w, const PackedActivations& a, int64_t g, int64_t t0, float* y,
            int64_t y_stride, __mmask16 store_mask) {
  __m512i lut = _mm512_setzero_si512();
  if constexpr (kLut) {
    lut = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.levels)));
  }
  const bool i6 = kLut && w.scale_form == ScaleForm::kI6;
  __m512 dsup = _mm512_setzero_ps();
  __m512 acc[16];
  for (int t = 0; t < 16; ++t) acc[t] = _mm512_setzero_ps();
  const int64_t nb = a.nb;
  const int32_t off = w.offset;
  alignas(64) int32_t c[16][16];
  alignas(64) uint8_t unpacked0[512];
  alignas(64) uint8_t unpacked1[512];
  // The float epilogue of block b from its int32 products in c.
  // The tokens' tiled scalars (packed_weights.h; t0 is a multiple of kActTile = 16).
  const int64_t kb0 = t0 / kActTile * nb;
  auto epilogue = [&](int64_t b) {
    __m512 d[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()}, m = _mm512_setzero_ps();
    if (i6) {
      if (b % 8 == 0) dsup = LoadHalves16(w.Supers(g, b));
      d[0] = I6Scales16(w.Scales(g, b), dsup);
    } else {
      BlockScales16(w, g, b, d, &m);
    }
    const int64_t kb = kb0 + b;
    const int32_t* xsum = a.txsum + kb * kActTile;
    const float* dx = a.tdx + kb * kActTile;
    const float* dxs = a.tdxs + kb * kActTile;
    for (int t = 0; t < 16; ++t) {
      const __m512i s =
          _mm512_add_epi32(_mm512_set1_epi32(-off * xsum[t]), _mm512_load_si512(c[t]));
      const __m512 scale = _mm512_mul_ps(d[0], _mm512_set1_ps(dx[t]));
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), scale, acc[t]);
      if constexpr (kMin) acc[t] = _mm512_fmadd_ps(m, _mm512_set1_ps(dxs[t]), acc[t]);
    }
  };
  RADIXLM_AMX_ISSUE(0, 1, 2, 0, unpacked0);
  for (int64_t b = 0; b < nb; b += 2) {
    if (b + 1 < nb) RADIXLM_AMX_ISSUE(3, 4, 5, b + 1, unpacked1);
    _tile_stored(0, c, 64);
    epilogue(b);
    if (b + 1 < nb) {
      if (b + 2 < nb) RADIXLM_AMX_ISSUE(0, 1, 2, b + 2, unpacked0);
      _tile_stored(3, c, 64);
      epilogue(b + 1);
    }
  }
  for (int t = 0; t < 16; ++t) {
    _mm512_mask_storeu_ps(y + (t0 + t) * y_stride + 16 * g, store_mask, acc[t]);
  }
}

#undef RADIXLM_AMX_ISSUE

}  // namespace

bool Supports(const PackedWeights& w) {
  return w.sub == 32 && w.scale_form != ScaleForm::kCodebook && w.low_bits != 2 &&
         (w.levels == nullptr || w.nibbles);
}

// In static storage: GCC 12 drops stores into a local config before ldtilecfg reads it.
// Tiles 0-2 and 3-5: C (16 rows x 64 bytes), A (16 x 32), B (8 x 64).
alignas(64) constexpr TileConfig kTileConfig = {
    .palette = 1,
    .start_row = 0,
    .reserved = {},
    .colsb = {64, 32, 64, 64, 32, 64},
    .rows = {16, 16, 8, 16, 16, 8},
};

void Begin() { _tile_loadconfig(&kTileConfig); }

void End() { _tile_release(); }

void PackedGemm16(const PackedWeights& w, const PackedActivations& a, int64_t g, int64_t t0,
                  float* y, int64_t y_stride, uint16_t store_mask) {
  if (w.levels != nullptr) {  // the lookup types
    return Tile16<true, 0, false, true>(w, a, g, t0, y, y_stride, store_mask);
  }
  if (w.nibbles && w.high_bits == 1) {
    if (w.has_min) return Tile16<true, 1, true>(w, a, g, t0, y, y_stride, store_mask);
    return Tile16<true, 1, false>(w, a, g, t0, y, y_stride, store_mask);
  }
  if (w.nibbles) {
    if (w.has_min) return Tile16<true, 0, true>(w, a, g, t0, y, y_stride, store_mask);
    return Tile16<true, 0, false>(w, a, g, t0, y, y_stride, store_mask);
  }
  Tile16<false, 0, false>(w, a, g, t0, y, y_stride, store_mask);  // Q8_0
}

}  // namespace radixlm::kernels::cpu::amx
