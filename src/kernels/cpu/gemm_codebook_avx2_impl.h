// 256-bit packed GEMM of the codebook types (kernels/packed_codebook.h), included by
// gemm_codebook_avx2.cc (AVX2: vpmaddubsw + vpmaddwd) and gemm_codebook_avxvnni.cc (AVX-VNNI:
// vpdpbusd on ymm). Everything here has internal linkage, so the two translation units,
// compiled with different flags, never share a function body.
//
// A 16-row group is handled as two halves of 8 rows (one row per 32-bit lane, as
// gemm_avx2_impl.h does); a tile is one half against up to kCodebookTile tokens. Each 32-column
// block of the half is decoded once per tile into the 8 chunks of 8 rows x 4 columns, as
// u = q + kOffset (the magnitudes gathered from the grid, signed by the stored sign bits; IQ1's
// q = 8 g +- 1 gathered whole from avx2::Iq1mScaledGrid, the dot kernels' table), and
// multiplied with every token of the tile; the offset comes off with kOffset times the
// activation sums, each 16-column half's scale multiplies its sum (or the block's one scale the
// block's sum), and the super-block's exact integer sum goes into the float accumulator as the
// scalar definition has it: the same bits as CodebookReferenceGroups and the AVX-512 kernel.
//
// Saturation: vpdpbusd adds its u8 x s8 products into int32 exactly, so AVX-VNNI takes u = q + 128
// as the AVX-512 kernel does. vpmaddubsw adds pairs of them into a saturating int16: with
// u = q + 128 (up to 190) a pair reaches 2 * 190 * 127 = 48260 and would saturate. Every
// codebook q has |q| <= 62 (IQ3_XXS's grid; IQ2's <= 43, IQ3_S's <= 15, IQ1's 8 g +- 1 <= 9),
// so AVX2 takes u = q + 64 in [2, 126]: a pair is at most 2 * 126 * 127 = 32004 in magnitude
// (|xq| <= 127), and each chunk's pairs are widened (vpmaddwd by ones) before any addition.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/iq_grids.h"
#include "kernels/cpu/iquant_avx2.h"
#include "kernels/packed_codebook.h"

namespace radixlm::kernels::cpu::codebook256 {
namespace {

// Tokens per tile, as gemm_avx2_impl.h's kernels: a block's 8 decoded chunks and the tile's
// integer sums take 12 of the 16 ymm registers (wider tiles were not measured).
constexpr int kCodebookTile = 4;

// The largest |q| of any codebook type (IQ3_XXS's grid bytes go up to 62).
constexpr int kMaxAbsQ = 62;

inline __m256i Load8x8(const uint8_t* p) {  // 8 bytes -> 8 x int32
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
inline __m256i Load8x16(const uint8_t* p) {  // 8 x uint16 -> 8 x int32
  return _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m256i Load8x32(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// Half h's 8 rows of block field f (of super field f) in a packed block (super-block).
template <const CodebookLayout& kL>
inline const uint8_t* BlockField(const uint8_t* blk, int f, int h) {
  return blk + kL.BlockFieldOffset(f) + static_cast<size_t>(8 * h * kL.block[f].width);
}
template <const CodebookLayout& kL>
inline const uint8_t* SuperField(const uint8_t* sup, int f, int h) {
  return sup + kL.SuperFieldOffset(f) + static_cast<size_t>(8 * h * kL.super[f].width);
}

// 2 s + 1 of the `bits`-bit s at bit `shift` of each lane.
inline __m256i OddScale(__m256i v, int shift, int bits) {
  const __m256i s =
      _mm256_and_si256(_mm256_srli_epi32(v, shift), _mm256_set1_epi32((1 << bits) - 1));
  return _mm256_add_epi32(_mm256_slli_epi32(s, 1), _mm256_set1_epi32(1));
}

// The sign bytes of a lane's 4 groups of 7 stored bits (group l at bits 7 l.. of `bits`, or of
// the 4 lanes of `groups` already one per byte): byte l of each lane = its 7 bits and, as bit 7,
// their parity (the stored groups have an even number of negative weights).
inline __m256i CompleteSignBytes(__m256i groups) {
  __m256i p = _mm256_xor_si256(groups, _mm256_srli_epi32(groups, 4));  // bit 0 of each byte:
  p = _mm256_xor_si256(p, _mm256_srli_epi32(p, 2));                    // the parity of its
  p = _mm256_xor_si256(p, _mm256_srli_epi32(p, 1));                    // bits 0..7
  return _mm256_or_si256(groups,
                         _mm256_slli_epi32(_mm256_and_si256(p, _mm256_set1_epi32(0x01010101)), 7));
}
inline __m256i SignBytesOf7BitGroups(__m256i bits) {
  const __m256i g0 = _mm256_and_si256(bits, _mm256_set1_epi32(0x7F));
  const __m256i g1 = _mm256_and_si256(_mm256_slli_epi32(bits, 1), _mm256_set1_epi32(0x7F00));
  const __m256i g2 = _mm256_and_si256(_mm256_slli_epi32(bits, 2), _mm256_set1_epi32(0x7F0000));
  const __m256i g3 = _mm256_and_si256(_mm256_slli_epi32(bits, 3), _mm256_set1_epi32(0x7F000000));
  return CompleteSignBytes(_mm256_or_si256(_mm256_or_si256(g0, g1), _mm256_or_si256(g2, g3)));
}

// u = kOffset + mag, or kOffset - mag for byte i of each lane of mag (mag <= kMaxAbsQ) where bit
// 4 nibble + i of byte `byte` of the lane of `signs` is set (byte and nibble are constants once
// the callers' loops are unrolled).
template <int kOffset>
inline __m256i SignChunk(__m256i mag, __m256i signs, int byte, int nibble) {
  // Byte `byte` of each 32-bit lane into all four of its bytes (vpshufb works within 128 bits).
  const int b = byte * 0x01010101;
  const __m256i spread = _mm256_setr_epi32(b, b + 0x04040404, b + 0x08080808, b + 0x0C0C0C0C, b,
                                           b + 0x04040404, b + 0x08080808, b + 0x0C0C0C0C);
  const __m256i bit = _mm256_set1_epi32(nibble == 0 ? 0x08040201 : static_cast<int>(0x80402010));
  const __m256i neg =
      _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(signs, spread), bit), bit);
  const __m256i q = _mm256_sub_epi8(_mm256_xor_si256(mag, neg), neg);  // -mag where neg
  return _mm256_add_epi8(q, _mm256_set1_epi8(static_cast<char>(kOffset)));
}

// The 8 rows' 8-byte grid entries table[idx] as two chunks: columns 0..3 (*lo) and 4..7 (*hi).
inline void Grid8(__m256i idx, const uint64_t* table, __m256i* lo, __m256i* hi) {
  const auto* base = reinterpret_cast<const long long*>(table);
  // Rows 0, 1, 4, 5 in one gather and 2, 3, 6, 7 in the other, so that one in-lane shuffle per
  // chunk puts the rows back in order.
  const __m256i p = _mm256_permutevar8x32_epi32(idx, _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7));
  const __m256 g0 = _mm256_castsi256_ps(_mm256_i32gather_epi64(base, _mm256_castsi256_si128(p), 8));
  const __m256 g1 =
      _mm256_castsi256_ps(_mm256_i32gather_epi64(base, _mm256_extracti128_si256(p, 1), 8));
  *lo = _mm256_castps_si256(_mm256_shuffle_ps(g0, g1, _MM_SHUFFLE(2, 0, 2, 0)));
  *hi = _mm256_castps_si256(_mm256_shuffle_ps(g0, g1, _MM_SHUFFLE(3, 1, 3, 1)));
}

inline __m256i Grid4(__m256i idx, const uint32_t* table) {
  return _mm256_i32gather_epi32(reinterpret_cast<const int*>(table), idx, 4);
}

// IQ1: u = kOffset + q of the 8 rows' entries of avx2::Iq1mScaledGrid (q = 8 g +- 1 per
// byte, the shift's sign at bit 11 of idx) as two chunks: columns 0..3 (*lo) and 4..7 (*hi).
template <int kOffset>
inline void ShiftedGrid8(__m256i idx, const uint64_t* scaled_grid, __m256i* lo, __m256i* hi) {
  Grid8(idx, scaled_grid, lo, hi);
  *lo = _mm256_add_epi8(*lo, _mm256_set1_epi8(static_cast<char>(kOffset)));
  *hi = _mm256_add_epi8(*hi, _mm256_set1_epi8(static_cast<char>(kOffset)));
}

// Half h's 8 halves d.
inline __m256 LoadHalves8(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Per type, as the AVX-512 kernel's: Decode<kOffset>(blk, sup, j, h, u, scale, scaled_grid) of
// half h of block j (0..7) of its super-block (scaled_grid: avx2::Iq1mScaledGrid(), for IQ1);
// kTwoScales: scale[0] for columns 0..15 and scale[1] for 16..31, else scale[0] for all 32.
// LoadD(sup, h): half h's 8 rows' d.
struct Iq3xxs {
  static constexpr const CodebookLayout& kLayout = kIq3xxsLayout;
  static constexpr bool kTwoScales = false;
  template <int kOffset>
  static void Decode(const uint8_t* blk, const uint8_t*, int, int h, __m256i* u, __m256i* scale,
                     const uint64_t*) {
    const __m256i aux = Load8x32(BlockField<kLayout>(blk, 8, h));
    scale[0] = OddScale(aux, 28, 4);
    const __m256i signs = SignBytesOf7BitGroups(aux);
    for (int c = 0; c < 8; ++c) {
      const __m256i mag = Grid4(Load8x8(BlockField<kLayout>(blk, c, h)), kIq3xxsGrid);
      u[c] = SignChunk<kOffset>(mag, signs, c / 2, c % 2);
    }
  }
  static __m256 LoadD(const uint8_t* sup, int h) {
    return LoadHalves8(SuperField<kLayout>(sup, 0, h));
  }
};

struct Iq2xxs {
  static constexpr const CodebookLayout& kLayout = kIq2xxsLayout;
  static constexpr bool kTwoScales = false;
  template <int kOffset>
  static void Decode(const uint8_t* blk, const uint8_t*, int, int h, __m256i* u, __m256i* scale,
                     const uint64_t*) {
    const __m256i aux = Load8x32(BlockField<kLayout>(blk, 4, h));
    scale[0] = OddScale(aux, 28, 4);
    const __m256i signs = SignBytesOf7BitGroups(aux);
    for (int l = 0; l < 4; ++l) {
      __m256i lo, hi;
      Grid8(Load8x8(BlockField<kLayout>(blk, l, h)), kIq2xxsGrid, &lo, &hi);
      u[2 * l] = SignChunk<kOffset>(lo, signs, l, 0);
      u[2 * l + 1] = SignChunk<kOffset>(hi, signs, l, 1);
    }
  }
  static __m256 LoadD(const uint8_t* sup, int h) {
    return LoadHalves8(SuperField<kLayout>(sup, 0, h));
  }
};

struct Iq3s {
  static constexpr const CodebookLayout& kLayout = kIq3sLayout;
  static constexpr bool kTwoScales = false;
  template <int kOffset>
  static void Decode(const uint8_t* blk, const uint8_t* sup, int j, int h, __m256i* u,
                     __m256i* scale, const uint64_t*) {
    const __m256i qh = Load8x8(BlockField<kLayout>(blk, 8, h));
    const __m256i signs = Load8x32(BlockField<kLayout>(blk, 9, h));
    scale[0] = OddScale(Load8x32(SuperField<kLayout>(sup, 1, h)), 4 * j, 4);
    for (int c = 0; c < 8; ++c) {
      // The 9th bit of index c (bit c of qh) to bit 8.
      const __m256i high = _mm256_and_si256(_mm256_slli_epi32(qh, 8 - c), _mm256_set1_epi32(256));
      const __m256i idx = _mm256_or_si256(Load8x8(BlockField<kLayout>(blk, c, h)), high);
      u[c] = SignChunk<kOffset>(Grid4(idx, kIq3sGrid), signs, c / 2, c % 2);
    }
  }
  static __m256 LoadD(const uint8_t* sup, int h) {
    return LoadHalves8(SuperField<kLayout>(sup, 0, h));
  }
};

struct Iq2xs {
  static constexpr const CodebookLayout& kLayout = kIq2xsLayout;
  static constexpr bool kTwoScales = true;
  template <int kOffset>
  static void Decode(const uint8_t* blk, const uint8_t*, int, int h, __m256i* u, __m256i* scale,
                     const uint64_t*) {
    const __m256i sc = Load8x8(BlockField<kLayout>(blk, 4, h));
    scale[0] = OddScale(sc, 0, 4);
    scale[1] = OddScale(sc, 4, 4);
    __m256i q[4], groups = _mm256_setzero_si256();
    for (int l = 0; l < 4; ++l) {
      q[l] = Load8x16(BlockField<kLayout>(blk, l, h));
      groups = _mm256_or_si256(groups, _mm256_slli_epi32(_mm256_srli_epi32(q[l], 9), 8 * l));
    }
    const __m256i signs = CompleteSignBytes(groups);
    for (int l = 0; l < 4; ++l) {
      __m256i lo, hi;
      Grid8(_mm256_and_si256(q[l], _mm256_set1_epi32(511)), kIq2xsGrid, &lo, &hi);
      u[2 * l] = SignChunk<kOffset>(lo, signs, l, 0);
      u[2 * l + 1] = SignChunk<kOffset>(hi, signs, l, 1);
    }
  }
  static __m256 LoadD(const uint8_t* sup, int h) {
    return LoadHalves8(SuperField<kLayout>(sup, 0, h));
  }
};

struct Iq2s {
  static constexpr const CodebookLayout& kLayout = kIq2sLayout;
  static constexpr bool kTwoScales = true;
  template <int kOffset>
  static void Decode(const uint8_t* blk, const uint8_t*, int, int h, __m256i* u, __m256i* scale,
                     const uint64_t*) {
    const __m256i signs = Load8x32(BlockField<kLayout>(blk, 4, h));
    const __m256i qh = Load8x8(BlockField<kLayout>(blk, 5, h));
    const __m256i sc = Load8x8(BlockField<kLayout>(blk, 6, h));
    scale[0] = OddScale(sc, 0, 4);
    scale[1] = OddScale(sc, 4, 4);
    for (int l = 0; l < 4; ++l) {
      // Bits 2 l, 2 l + 1 of qh to bits 8, 9.
      const __m256i high =
          _mm256_and_si256(_mm256_slli_epi32(qh, 8 - 2 * l), _mm256_set1_epi32(0x300));
      const __m256i idx = _mm256_or_si256(Load8x8(BlockField<kLayout>(blk, l, h)), high);
      __m256i lo, hi;
      Grid8(idx, kIq2sGrid, &lo, &hi);
      u[2 * l] = SignChunk<kOffset>(lo, signs, l, 0);
      u[2 * l + 1] = SignChunk<kOffset>(hi, signs, l, 1);
    }
  }
  static __m256 LoadD(const uint8_t* sup, int h) {
    return LoadHalves8(SuperField<kLayout>(sup, 0, h));
  }
};

struct Iq1s {
  static constexpr const CodebookLayout& kLayout = kIq1sLayout;
  static constexpr bool kTwoScales = false;
  template <int kOffset>
  static void Decode(const uint8_t* blk, const uint8_t*, int, int h, __m256i* u, __m256i* scale,
                     const uint64_t* scaled_grid) {
    const __m256i qh = Load8x16(BlockField<kLayout>(blk, 4, h));
    scale[0] = OddScale(qh, 12, 3);
    // The shift's sign (bit 15) to bit 11 of every index.
    const __m256i sign = _mm256_srli_epi32(_mm256_and_si256(qh, _mm256_set1_epi32(0x8000)), 4);
    for (int l = 0; l < 4; ++l) {
      const __m256i high = _mm256_or_si256(
          sign, _mm256_slli_epi32(
                    _mm256_and_si256(_mm256_srli_epi32(qh, 3 * l), _mm256_set1_epi32(7)), 8));
      const __m256i idx = _mm256_or_si256(Load8x8(BlockField<kLayout>(blk, l, h)), high);
      ShiftedGrid8<kOffset>(idx, scaled_grid, &u[2 * l], &u[2 * l + 1]);
    }
  }
  static __m256 LoadD(const uint8_t* sup, int h) {
    return LoadHalves8(SuperField<kLayout>(sup, 0, h));
  }
};

struct Iq1m {
  static constexpr const CodebookLayout& kLayout = kIq1mLayout;
  static constexpr bool kTwoScales = true;
  template <int kOffset>
  static void Decode(const uint8_t* blk, const uint8_t* sup, int j, int h, __m256i* u,
                     __m256i* scale, const uint64_t* scaled_grid) {
    const __m256i qh = Load8x16(BlockField<kLayout>(blk, 4, h));
    const __m256i sc = Load8x16(SuperField<kLayout>(sup, j / 2, h));
    scale[0] = OddScale(sc, 6 * (j % 2), 3);
    scale[1] = OddScale(sc, 6 * (j % 2) + 3, 3);
    for (int l = 0; l < 4; ++l) {
      // The nibble (3 high index bits, the shift's sign) to bits 8..11 of the index.
      const __m256i high = _mm256_slli_epi32(
          _mm256_and_si256(_mm256_srli_epi32(qh, 4 * l), _mm256_set1_epi32(15)), 8);
      const __m256i idx = _mm256_or_si256(Load8x8(BlockField<kLayout>(blk, l, h)), high);
      ShiftedGrid8<kOffset>(idx, scaled_grid, &u[2 * l], &u[2 * l + 1]);
    }
  }
  // The half d from the top nibbles of the 4 scale words.
  static __m256 LoadD(const uint8_t* sup, int h) {
    __m256i d = _mm256_setzero_si256();
    for (int k = 0; k < 4; ++k) {
      const __m256i top = _mm256_srli_epi32(Load8x16(SuperField<kLayout>(sup, k, h)), 12);
      d = _mm256_or_si256(d, _mm256_slli_epi32(top, 4 * k));
    }
    const __m128i halves =
        _mm_packus_epi32(_mm256_castsi256_si128(d), _mm256_extracti128_si256(d, 1));
    return _mm256_cvtph_ps(halves);
  }
};

inline __m256i Broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// acc + the 8 lanes' sums of u x x over their 4 bytes (exact: see the saturation note above).
template <bool kVnni>
inline __m256i DotChunk(__m256i acc, __m256i u, __m256i x) {
  if constexpr (kVnni) {
    return _mm256_dpbusd_avx_epi32(acc, u, x);
  } else {
    const __m256i pairs = _mm256_maddubs_epi16(u, x);
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
}

template <typename Type, int kTokens, bool kVnni>
void Tile(const PackedWeights& w, const PackedActivations& a, int64_t t0, int64_t g, int h,
          bool prefetch, const uint64_t* scaled_grid, float* y, int64_t y_stride) {
  constexpr int kOffset = kVnni ? 128 : 64;
  static_assert(kVnni || 2 * (kOffset + kMaxAbsQ) * 127 <= 32767, "vpmaddubsw would saturate");
  static_assert(kOffset - kMaxAbsQ >= 0 && kOffset + kMaxAbsQ <= 255, "u is not a byte");
  const int64_t nb = a.nb;
  __m256 facc[kTokens];
  for (int t = 0; t < kTokens; ++t) facc[t] = _mm256_setzero_ps();
  for (int64_t s = 0; s < nb / 8; ++s) {
    const uint8_t* sup = w.Supers(g, 8 * s);
    __m256i isum[kTokens];
    for (int t = 0; t < kTokens; ++t) isum[t] = _mm256_setzero_si256();
    for (int64_t b = 8 * s; b < 8 * s + 8; ++b) {
      const uint8_t* blk = w.Block(g, b);
      if (prefetch) PrefetchAheadL2(blk, w.stream_bytes);
      __m256i u[8], scale[2];
      Type::template Decode<kOffset>(blk, sup, static_cast<int>(b - 8 * s), h, u, scale,
                                     scaled_grid);
      for (int t = 0; t < kTokens; ++t) {
        const int64_t tok = t0 + t;
        const int8_t* xq = a.qs + tok * static_cast<int64_t>(a.stride) + 32 * b;
        const int64_t tb = tok * nb + b;
        __m256i dot0 = _mm256_setzero_si256(), dot1 = _mm256_setzero_si256();
        __m256i& dot_hi = Type::kTwoScales ? dot1 : dot0;  // columns 16..31
        for (int c = 0; c < 4; ++c) dot0 = DotChunk<kVnni>(dot0, u[c], Broadcast4(xq + 4 * c));
        for (int c = 4; c < 8; ++c) {
          dot_hi = DotChunk<kVnni>(dot_hi, u[c], Broadcast4(xq + 4 * c));
        }
        if constexpr (Type::kTwoScales) {
          dot0 = _mm256_sub_epi32(dot0, _mm256_set1_epi32(kOffset * a.sum16[2 * tb]));
          dot1 = _mm256_sub_epi32(dot1, _mm256_set1_epi32(kOffset * a.sum16[2 * tb + 1]));
          isum[t] = _mm256_add_epi32(isum[t], _mm256_mullo_epi32(dot0, scale[0]));
          isum[t] = _mm256_add_epi32(isum[t], _mm256_mullo_epi32(dot1, scale[1]));
        } else {
          const int32_t xsum = a.sum16[2 * tb] + a.sum16[2 * tb + 1];
          dot0 = _mm256_sub_epi32(dot0, _mm256_set1_epi32(kOffset * xsum));
          isum[t] = _mm256_add_epi32(isum[t], _mm256_mullo_epi32(dot0, scale[0]));
        }
      }
    }
    const __m256 dw = Type::LoadD(sup, h);
    for (int t = 0; t < kTokens; ++t) {
      const __m256 d = _mm256_mul_ps(dw, _mm256_set1_ps(a.dx[(t0 + t) * nb + 8 * s]));
      facc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), d, facc[t]);
    }
  }
  const __m256 out_scale = _mm256_set1_ps(Type::kLayout.out_scale);
  const int64_t row0 = g * 16 + 8 * h;
  const __m256i rows_mask =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::min<int64_t>(8, w.rows - row0))),
                         _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  for (int t = 0; t < kTokens; ++t) {
    _mm256_maskstore_ps(y + (t0 + t) * y_stride + row0, rows_mask,
                        _mm256_mul_ps(out_scale, facc[t]));
  }
}

using TileFn = void (*)(const PackedWeights&, const PackedActivations&, int64_t, int64_t, int, bool,
                        const uint64_t*, float*, int64_t);

template <typename Type, bool kVnni>
void Gemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
          int64_t g1, float* y, int64_t y_stride) {
  static_assert(kCodebookTile == 4);
  constexpr TileFn kTiles[] = {nullptr, Tile<Type, 1, kVnni>, Tile<Type, 2, kVnni>,
                               Tile<Type, 3, kVnni>, Tile<Type, 4, kVnni>};
  const uint64_t* scaled_grid = avx2::Iq1mScaledGrid();
  for (int64_t g = g0; g < g1; ++g) {
    for (int64_t t0 = 0; t0 < n_tokens; t0 += kCodebookTile) {
      const int64_t n = std::min<int64_t>(kCodebookTile, n_tokens - t0);
      for (int h = 0; h < 2 && g * 16 + 8 * h < w.rows; ++h) {
        kTiles[n](w, a, t0, g, h, t0 == 0 && h == 0, scaled_grid, y, y_stride);
      }
    }
  }
}

// y[tokens [0, n_tokens), rows of groups [g0, g1)] of a packed codebook type.
template <bool kVnni>
void CodebookGemm256(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens,
                     int64_t g0, int64_t g1, float* y, int64_t y_stride) {
  switch (w.source_type) {
    case gguf::GgmlType::kIQ3_XXS:
      return Gemm<Iq3xxs, kVnni>(w, a, n_tokens, g0, g1, y, y_stride);
    case gguf::GgmlType::kIQ2_XXS:
      return Gemm<Iq2xxs, kVnni>(w, a, n_tokens, g0, g1, y, y_stride);
    case gguf::GgmlType::kIQ3_S:
      return Gemm<Iq3s, kVnni>(w, a, n_tokens, g0, g1, y, y_stride);
    case gguf::GgmlType::kIQ2_XS:
      return Gemm<Iq2xs, kVnni>(w, a, n_tokens, g0, g1, y, y_stride);
    case gguf::GgmlType::kIQ2_S:
      return Gemm<Iq2s, kVnni>(w, a, n_tokens, g0, g1, y, y_stride);
    case gguf::GgmlType::kIQ1_S:
      return Gemm<Iq1s, kVnni>(w, a, n_tokens, g0, g1, y, y_stride);
    case gguf::GgmlType::kIQ1_M:
      return Gemm<Iq1m, kVnni>(w, a, n_tokens, g0, g1, y, y_stride);
    default:
      std::abort();
  }
}

}  // namespace
}  // namespace radixlm::kernels::cpu::codebook256
