// AVX-512 VNNI packed GEMM of the codebook types (kernels/packed_codebook.h). Each 32-column
// block of a 16-row group is decoded once per tile of up to 8 tokens into the 8 chunks of 16
// rows x 4 columns that vpdpbusd takes, as u = q + 128 (the magnitudes gathered from the grid,
// signed by the stored sign bits), and multiplied with every token of the tile; the offset comes
// off with 128 times the activation sums, each 16-column half's scale multiplies its sum (or the
// block's one scale the block's sum), and the super-block's sum goes into the float accumulator
// as the scalar definition has it (the same bits). Where the build has AMX-INT8, full tiles
// of 16 tokens can take AMX tile products instead (TileAmx16, the same bits).
#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/iq_grids.h"
#include "kernels/packed_codebook.h"

namespace radixlm::kernels::cpu::avx512vnni {
namespace {

constexpr int kMaxTokens = 8;

inline __m512i Load16x8(const uint8_t* p) {  // 16 bytes -> 16 x int32
  return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m512i Load16x16(const uint8_t* p) {  // 16 x uint16 -> 16 x int32
  return _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline __m512i Load16x32(const uint8_t* p) { return _mm512_loadu_si512(p); }

// 2 s + 1 of the 4-bit s at bit `shift` of each lane.
inline __m512i OddScale(__m512i v, int shift, int bits) {
  const __m512i s =
      _mm512_and_si512(_mm512_srli_epi32(v, shift), _mm512_set1_epi32((1 << bits) - 1));
  return _mm512_add_epi32(_mm512_slli_epi32(s, 1), _mm512_set1_epi32(1));
}

// The 8 sign bits of each lane's 7 stored bits s (low 7 bits of each 32-bit lane, the rest
// zero), bit 7 their parity: s ^ parity(s) << 7.
inline __m512i CompleteSigns(__m512i s) {
  __m512i p = _mm512_xor_si512(s, _mm512_srli_epi32(s, 4));
  p = _mm512_xor_si512(p, _mm512_srli_epi32(p, 2));
  p = _mm512_xor_si512(p, _mm512_srli_epi32(p, 1));
  return _mm512_or_si512(s, _mm512_slli_epi32(_mm512_and_si512(p, _mm512_set1_epi32(1)), 7));
}

// The 8 sign bits of group l (8 columns) from the 7 stored at bits 7 l.. of each lane of aux.
inline __m512i StoredSigns(__m512i aux, int l) {
  return CompleteSigns(_mm512_and_si512(_mm512_srli_epi32(aux, 7 * l), _mm512_set1_epi32(127)));
}

// u = 128 + mag, or 128 - mag where bit i (i < 4) of byte 0 of the lane of `signs` is set for
// byte i of the lane of mag (mag < 128).
inline __m512i SignChunk(__m512i mag, __m512i signs) {
  // Byte 0 of each 32-bit lane into all four of its bytes.
  const __m512i spread = _mm512_set4_epi32(0x0C0C0C0C, 0x08080808, 0x04040404, 0x00000000);
  const __mmask64 neg =
      _mm512_test_epi8_mask(_mm512_shuffle_epi8(signs, spread), _mm512_set1_epi32(0x08040201));
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  return _mm512_mask_sub_epi8(_mm512_xor_si512(mag, flip), neg, flip, mag);
}

// The 16 rows' 8-byte grid entries table[idx] as two chunks: columns 0..3 (*lo) and 4..7 (*hi).
inline void Grid8(__m512i idx, const uint64_t* table, __m512i* lo, __m512i* hi) {
  const auto* base = reinterpret_cast<const long long*>(table);
  const __m512i g0 = _mm512_i32gather_epi64(_mm512_castsi512_si256(idx), base, 8);
  const __m512i g1 = _mm512_i32gather_epi64(_mm512_extracti64x4_epi64(idx, 1), base, 8);
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  *lo = _mm512_permutex2var_epi32(g0, even, g1);
  *hi = _mm512_permutex2var_epi32(g0, odd, g1);
}

// IQ1: u = 128 + 8 g + shift of the int8 grid values g in {-1, 0, 1} of `grid`, shift +1, or -1
// in the lanes of `neg`.
inline __m512i ShiftedChunk(__m512i grid, __mmask16 neg) {
  // 128 + 8 g by g & 3 (0, 1, or 3 for -1).
  const __m512i lut = _mm512_set4_epi32(0, 0, 0, 0x78008880);
  const __m512i base = _mm512_shuffle_epi8(lut, _mm512_and_si512(grid, _mm512_set1_epi8(3)));
  const __m512i shift = _mm512_mask_blend_epi32(neg, _mm512_set1_epi8(1), _mm512_set1_epi8(-1));
  return _mm512_add_epi8(base, shift);
}

// Per type: Decode(blk, sup, j, u, scale) of block j (0..7) of its super-block; kTwoScales:
// scale[0] for columns 0..15 and scale[1] for 16..31, else scale[0] for all 32.
// LoadD(sup): the 16 rows' d.
inline __m512 LoadHalves(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

struct Iq3xxs {
  static constexpr const CodebookLayout& kLayout = kIq3xxsLayout;
  static constexpr bool kTwoScales = false;
  static void Decode(const uint8_t* blk, const uint8_t*, int, __m512i* u, __m512i* scale) {
    const __m512i aux = Load16x32(blk + kLayout.BlockFieldOffset(8));
    scale[0] = OddScale(aux, 28, 4);
    for (int l = 0; l < 4; ++l) {
      const __m512i s8 = StoredSigns(aux, l);
      for (int h = 0; h < 2; ++h) {
        const int c = 2 * l + h;
        const __m512i idx = Load16x8(blk + kLayout.BlockFieldOffset(c));
        const __m512i mag =
            _mm512_i32gather_epi32(idx, reinterpret_cast<const int*>(kIq3xxsGrid), 4);
        u[c] = SignChunk(mag, _mm512_srli_epi32(s8, 4 * h));
      }
    }
  }
  static __m512 LoadD(const uint8_t* sup) { return LoadHalves(sup); }
};

struct Iq2xxs {
  static constexpr const CodebookLayout& kLayout = kIq2xxsLayout;
  static constexpr bool kTwoScales = false;
  static void Decode(const uint8_t* blk, const uint8_t*, int, __m512i* u, __m512i* scale) {
    const __m512i aux = Load16x32(blk + kLayout.BlockFieldOffset(4));
    scale[0] = OddScale(aux, 28, 4);
    for (int l = 0; l < 4; ++l) {
      const __m512i s8 = StoredSigns(aux, l);
      __m512i lo, hi;
      Grid8(Load16x8(blk + kLayout.BlockFieldOffset(l)), kIq2xxsGrid, &lo, &hi);
      u[2 * l] = SignChunk(lo, s8);
      u[2 * l + 1] = SignChunk(hi, _mm512_srli_epi32(s8, 4));
    }
  }
  static __m512 LoadD(const uint8_t* sup) { return LoadHalves(sup); }
};

struct Iq3s {
  static constexpr const CodebookLayout& kLayout = kIq3sLayout;
  static constexpr bool kTwoScales = false;
  static void Decode(const uint8_t* blk, const uint8_t* sup, int j, __m512i* u, __m512i* scale) {
    const __m512i qh = Load16x8(blk + kLayout.BlockFieldOffset(8));
    const __m512i signs = Load16x32(blk + kLayout.BlockFieldOffset(9));
    scale[0] = OddScale(Load16x32(sup + kLayout.SuperFieldOffset(1)), 4 * j, 4);
    for (int c = 0; c < 8; ++c) {
      // The 9th bit of index c (bit c of qh) to bit 8.
      const __m512i high = _mm512_and_si512(_mm512_slli_epi32(qh, 8 - c), _mm512_set1_epi32(256));
      const __m512i idx = _mm512_or_si512(Load16x8(blk + kLayout.BlockFieldOffset(c)), high);
      const __m512i mag = _mm512_i32gather_epi32(idx, reinterpret_cast<const int*>(kIq3sGrid), 4);
      u[c] = SignChunk(mag, _mm512_srli_epi32(signs, 4 * c));
    }
  }
  static __m512 LoadD(const uint8_t* sup) { return LoadHalves(sup); }
};

struct Iq2xs {
  static constexpr const CodebookLayout& kLayout = kIq2xsLayout;
  static constexpr bool kTwoScales = true;
  static void Decode(const uint8_t* blk, const uint8_t*, int, __m512i* u, __m512i* scale) {
    const __m512i sc = Load16x8(blk + kLayout.BlockFieldOffset(4));
    scale[0] = OddScale(sc, 0, 4);
    scale[1] = OddScale(sc, 4, 4);
    for (int l = 0; l < 4; ++l) {
      const __m512i q = Load16x16(blk + kLayout.BlockFieldOffset(l));
      const __m512i s8 = CompleteSigns(_mm512_srli_epi32(q, 9));
      __m512i lo, hi;
      Grid8(_mm512_and_si512(q, _mm512_set1_epi32(511)), kIq2xsGrid, &lo, &hi);
      u[2 * l] = SignChunk(lo, s8);
      u[2 * l + 1] = SignChunk(hi, _mm512_srli_epi32(s8, 4));
    }
  }
  static __m512 LoadD(const uint8_t* sup) { return LoadHalves(sup); }
};

struct Iq2s {
  static constexpr const CodebookLayout& kLayout = kIq2sLayout;
  static constexpr bool kTwoScales = true;
  static void Decode(const uint8_t* blk, const uint8_t*, int, __m512i* u, __m512i* scale) {
    const __m512i signs = Load16x32(blk + kLayout.BlockFieldOffset(4));
    const __m512i qh = Load16x8(blk + kLayout.BlockFieldOffset(5));
    const __m512i sc = Load16x8(blk + kLayout.BlockFieldOffset(6));
    scale[0] = OddScale(sc, 0, 4);
    scale[1] = OddScale(sc, 4, 4);
    for (int l = 0; l < 4; ++l) {
      // Bits 2 l, 2 l + 1 of qh to bits 8, 9.
      const __m512i high =
          _mm512_and_si512(_mm512_slli_epi32(qh, 8 - 2 * l), _mm512_set1_epi32(0x300));
      const __m512i idx = _mm512_or_si512(Load16x8(blk + kLayout.BlockFieldOffset(l)), high);
      const __m512i s8 = _mm512_srli_epi32(signs, 8 * l);
      __m512i lo, hi;
      Grid8(idx, kIq2sGrid, &lo, &hi);
      u[2 * l] = SignChunk(lo, s8);
      u[2 * l + 1] = SignChunk(hi, _mm512_srli_epi32(s8, 4));
    }
  }
  static __m512 LoadD(const uint8_t* sup) { return LoadHalves(sup); }
};

struct Iq1s {
  static constexpr const CodebookLayout& kLayout = kIq1sLayout;
  static constexpr bool kTwoScales = false;
  static void Decode(const uint8_t* blk, const uint8_t*, int, __m512i* u, __m512i* scale) {
    const __m512i qh = Load16x16(blk + kLayout.BlockFieldOffset(4));
    scale[0] = OddScale(qh, 12, 3);
    const __mmask16 neg = _mm512_test_epi32_mask(qh, _mm512_set1_epi32(0x8000));
    for (int l = 0; l < 4; ++l) {
      const __m512i high = _mm512_slli_epi32(
          _mm512_and_si512(_mm512_srli_epi32(qh, 3 * l), _mm512_set1_epi32(7)), 8);
      __m512i lo, hi;
      Grid8(_mm512_or_si512(Load16x8(blk + kLayout.BlockFieldOffset(l)), high), kIq1sGrid, &lo,
            &hi);
      u[2 * l] = ShiftedChunk(lo, neg);
      u[2 * l + 1] = ShiftedChunk(hi, neg);
    }
  }
  static __m512 LoadD(const uint8_t* sup) { return LoadHalves(sup); }
};

struct Iq1m {
  static constexpr const CodebookLayout& kLayout = kIq1mLayout;
  static constexpr bool kTwoScales = true;
  static void Decode(const uint8_t* blk, const uint8_t* sup, int j, __m512i* u, __m512i* scale) {
    const __m512i qh = Load16x16(blk + kLayout.BlockFieldOffset(4));
    const __m512i sc = Load16x16(sup + kLayout.SuperFieldOffset(j / 2));
    scale[0] = OddScale(sc, 6 * (j % 2), 3);
    scale[1] = OddScale(sc, 6 * (j % 2) + 3, 3);
    for (int l = 0; l < 4; ++l) {
      const __m512i h = _mm512_srli_epi32(qh, 4 * l);
      const __m512i high = _mm512_slli_epi32(_mm512_and_si512(h, _mm512_set1_epi32(7)), 8);
      const __mmask16 neg = _mm512_test_epi32_mask(h, _mm512_set1_epi32(8));
      __m512i lo, hi;
      Grid8(_mm512_or_si512(Load16x8(blk + kLayout.BlockFieldOffset(l)), high), kIq1sGrid, &lo,
            &hi);
      u[2 * l] = ShiftedChunk(lo, neg);
      u[2 * l + 1] = ShiftedChunk(hi, neg);
    }
  }
  // The half d from the top nibbles of the 4 scale words.
  static __m512 LoadD(const uint8_t* sup) {
    __m512i d = _mm512_setzero_si512();
    for (int k = 0; k < 4; ++k) {
      const __m512i top = _mm512_srli_epi32(Load16x16(sup + kLayout.SuperFieldOffset(k)), 12);
      d = _mm512_or_si512(d, _mm512_slli_epi32(top, 4 * k));
    }
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(d));
  }
};

inline __m512i Broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

template <typename Type, int kTokens>
void Tile(const PackedWeights& w, const PackedActivations& a, int64_t t0, int64_t g, bool prefetch,
          float* y, int64_t y_stride) {
  const int64_t nb = a.nb;
  __m512 facc[kTokens];
  for (int t = 0; t < kTokens; ++t) facc[t] = _mm512_setzero_ps();
  for (int64_t s = 0; s < nb / 8; ++s) {
    const uint8_t* sup = w.Supers(g, 8 * s);
    __m512i isum[kTokens];
    for (int t = 0; t < kTokens; ++t) isum[t] = _mm512_setzero_si512();
    for (int64_t b = 8 * s; b < 8 * s + 8; ++b) {
      const uint8_t* blk = w.Block(g, b);
      if (prefetch) PrefetchAhead(w.Block(g, 0), b * w.stream_bytes, w.stream_bytes);
      __m512i u[8], scale[2];
      Type::Decode(blk, sup, static_cast<int>(b - 8 * s), u, scale);
      for (int t = 0; t < kTokens; ++t) {
        const int64_t tok = t0 + t;
        const int8_t* xq = a.qs + tok * static_cast<int64_t>(a.stride) + 32 * b;
        const int64_t tb = tok * nb + b;
        __m512i dot0 = _mm512_setzero_si512(), dot1 = _mm512_setzero_si512();
        __m512i& dot_hi = Type::kTwoScales ? dot1 : dot0;  // columns 16..31
        for (int c = 0; c < 4; ++c) dot0 = _mm512_dpbusd_epi32(dot0, u[c], Broadcast4(xq + 4 * c));
        for (int c = 4; c < 8; ++c)
          dot_hi = _mm512_dpbusd_epi32(dot_hi, u[c], Broadcast4(xq + 4 * c));
        if constexpr (Type::kTwoScales) {
          dot0 = _mm512_sub_epi32(dot0, _mm512_set1_epi32(128 * a.sum16[2 * tb]));
          dot1 = _mm512_sub_epi32(dot1, _mm512_set1_epi32(128 * a.sum16[2 * tb + 1]));
          isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(dot0, scale[0]));
          isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(dot1, scale[1]));
        } else {
          const int32_t xsum = a.sum16[2 * tb] + a.sum16[2 * tb + 1];
          dot0 = _mm512_sub_epi32(dot0, _mm512_set1_epi32(128 * xsum));
          isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(dot0, scale[0]));
        }
      }
    }
    const __m512 dw = Type::LoadD(sup);
    for (int t = 0; t < kTokens; ++t) {
      const __m512 d = _mm512_mul_ps(dw, _mm512_set1_ps(a.dx[(t0 + t) * nb + 8 * s]));
      facc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), d, facc[t]);
    }
  }
  const __m512 out_scale = _mm512_set1_ps(Type::kLayout.out_scale);
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

#if defined(__AMX_TILE__) && defined(__AMX_INT8__)
constexpr bool kAmxBuilt = true;

// AMX-INT8: 16 tokens x the group's 16 rows per 32-column block. The decoded chunks u[0..7]
// are AMX's B layout as they are (chunk c = tile row c: 16 rows x 4 bytes); the tokens' int8
// activations are A (16 rows of 32 bytes, a.stride apart); tdpbsud gives each (token, row) the
// same integer sum as the VNNI tile's dpbusd chain (exact), and the rest is Tile's integer and
// float epilogue per token, so the bits are Tile's. Two-scale types take each 16-column half
// in its own product (A 16 x 16 bytes, B 4 chunks).
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
// tmm0, tmm1: C (16 tokens x 16 rows int32); tmm2, tmm3: A, B of a whole block;
// tmm4, tmm5 / tmm6, tmm7: A, B of the low / high 16 columns. (Static storage: GCC 12 drops
// stores into a local config before ldtilecfg reads it.)
alignas(64) constexpr TileConfig kAmxConfig = {
    .palette = 1,
    .start_row = 0,
    .reserved = {},
    .colsb = {64, 64, 32, 64, 16, 64, 16, 64},
    .rows = {16, 16, 16, 8, 16, 4, 16, 4},
};

template <typename Type>
void TileAmx16(const PackedWeights& w, const PackedActivations& a, int64_t t0, int64_t g, float* y,
               int64_t y_stride) {
  constexpr int kTokens = 16;
  const int64_t nb = a.nb;
  const auto stride = static_cast<int64_t>(a.stride);
  __m512 facc[kTokens];
  for (int t = 0; t < kTokens; ++t) facc[t] = _mm512_setzero_ps();
  alignas(64) int32_t c0[kTokens][16];
  alignas(64) int32_t c1[kTokens][16];
  alignas(64) uint8_t bt[8 * 64];
  for (int64_t s = 0; s < nb / 8; ++s) {
    const uint8_t* sup = w.Supers(g, 8 * s);
    __m512i isum[kTokens];
    for (int t = 0; t < kTokens; ++t) isum[t] = _mm512_setzero_si512();
    for (int64_t b = 8 * s; b < 8 * s + 8; ++b) {
      __m512i u[8], scale[2];
      Type::Decode(w.Block(g, b), sup, static_cast<int>(b - 8 * s), u, scale);
      for (int c = 0; c < 8; ++c) _mm512_store_si512(bt + 64 * c, u[c]);
      const int8_t* xq = a.qs + t0 * stride + 32 * b;
      if constexpr (Type::kTwoScales) {
        _tile_zero(0);
        _tile_zero(1);
        _tile_loadd(4, xq, stride);
        _tile_loadd(5, bt, 64);
        _tile_loadd(6, xq + 16, stride);
        _tile_loadd(7, bt + 256, 64);
        _tile_dpbsud(0, 4, 5);
        _tile_dpbsud(1, 6, 7);
        _tile_stored(0, c0, 64);
        _tile_stored(1, c1, 64);
        for (int t = 0; t < kTokens; ++t) {
          const int64_t tb = (t0 + t) * nb + b;
          const __m512i dot0 =
              _mm512_sub_epi32(_mm512_load_si512(c0[t]), _mm512_set1_epi32(128 * a.sum16[2 * tb]));
          const __m512i dot1 = _mm512_sub_epi32(_mm512_load_si512(c1[t]),
                                                _mm512_set1_epi32(128 * a.sum16[2 * tb + 1]));
          isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(dot0, scale[0]));
          isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(dot1, scale[1]));
        }
      } else {
        _tile_zero(0);
        _tile_loadd(2, xq, stride);
        _tile_loadd(3, bt, 64);
        _tile_dpbsud(0, 2, 3);
        _tile_stored(0, c0, 64);
        for (int t = 0; t < kTokens; ++t) {
          const int64_t tb = (t0 + t) * nb + b;
          const int32_t xsum = a.sum16[2 * tb] + a.sum16[2 * tb + 1];
          const __m512i dot0 =
              _mm512_sub_epi32(_mm512_load_si512(c0[t]), _mm512_set1_epi32(128 * xsum));
          isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(dot0, scale[0]));
        }
      }
    }
    const __m512 dw = Type::LoadD(sup);
    for (int t = 0; t < kTokens; ++t) {
      const __m512 d = _mm512_mul_ps(dw, _mm512_set1_ps(a.dx[(t0 + t) * nb + 8 * s]));
      facc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), d, facc[t]);
    }
  }
  const __m512 out_scale = _mm512_set1_ps(Type::kLayout.out_scale);
  const int64_t row0 = g * 16;
  const __mmask16 rows_mask =
      static_cast<__mmask16>((1u << std::min<int64_t>(16, w.rows - row0)) - 1);
  for (int t = 0; t < kTokens; ++t) {
    _mm512_mask_storeu_ps(y + (t0 + t) * y_stride + row0, rows_mask,
                          _mm512_mul_ps(out_scale, facc[t]));
  }
}
#else
constexpr bool kAmxBuilt = false;
#endif

template <typename Type>
void Gemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
          int64_t g1, float* y, int64_t y_stride, bool use_amx) {
  constexpr TileFn kTiles[kMaxTokens + 1] = {
      nullptr,       Tile<Type, 1>, Tile<Type, 2>, Tile<Type, 3>, Tile<Type, 4>,
      Tile<Type, 5>, Tile<Type, 6>, Tile<Type, 7>, Tile<Type, 8>,
  };
  use_amx = use_amx && kAmxBuilt && n_tokens >= 16;
#if defined(__AMX_TILE__) && defined(__AMX_INT8__)
  if (use_amx) _tile_loadconfig(&kAmxConfig);
#endif
  for (int64_t g = g0; g < g1; ++g) {
    int64_t t0 = 0;
#if defined(__AMX_TILE__) && defined(__AMX_INT8__)
    if (use_amx) {
      for (; t0 + 16 <= n_tokens; t0 += 16) TileAmx16<Type>(w, a, t0, g, y, y_stride);
    }
#endif
    for (; t0 < n_tokens; t0 += kMaxTokens) {
      const int64_t n = std::min<int64_t>(kMaxTokens, n_tokens - t0);
      kTiles[n](w, a, t0, g, t0 == 0, y, y_stride);
    }
  }
#if defined(__AMX_TILE__) && defined(__AMX_INT8__)
  if (use_amx) _tile_release();
#endif
}

}  // namespace

bool CodebookAmxBuilt() { return kAmxBuilt; }

void CodebookGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
                  int64_t g1, float* y, int64_t y_stride, bool use_amx) {
  switch (w.source_type) {
    case gguf::GgmlType::kIQ3_XXS:
      return Gemm<Iq3xxs>(w, a, n_tokens, g0, g1, y, y_stride, use_amx);
    case gguf::GgmlType::kIQ2_XXS:
      return Gemm<Iq2xxs>(w, a, n_tokens, g0, g1, y, y_stride, use_amx);
    case gguf::GgmlType::kIQ3_S:
      return Gemm<Iq3s>(w, a, n_tokens, g0, g1, y, y_stride, use_amx);
    case gguf::GgmlType::kIQ2_XS:
      return Gemm<Iq2xs>(w, a, n_tokens, g0, g1, y, y_stride, use_amx);
    case gguf::GgmlType::kIQ2_S:
      return Gemm<Iq2s>(w, a, n_tokens, g0, g1, y, y_stride, use_amx);
    case gguf::GgmlType::kIQ1_S:
      return Gemm<Iq1s>(w, a, n_tokens, g0, g1, y, y_stride, use_amx);
    case gguf::GgmlType::kIQ1_M:
      return Gemm<Iq1m>(w, a, n_tokens, g0, g1, y, y_stride, use_amx);
    default:
      std::abort();
  }
}

}  // namespace radixlm::kernels::cpu::avx512vnni
