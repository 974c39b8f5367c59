// 256-bit int8 GEMM over PackedWeights (kernels/packed_weights.h), included by gemm_avx2.cc
// (AVX2: vpmaddubsw + vpmaddwd) and gemm_avxvnni.cc (AVX-VNNI: vpdpbusd on ymm). Everything
// here has internal linkage, so the two translation units, compiled with different flags,
// never share a function body.
//
// A 16-row group is handled as two halves of 8 rows (one row per 32-bit lane); a tile is one
// half against up to kMaxTile tokens, so each weight block is unpacked once per tile. Integer
// sums are exact, and per element the float operations are those of PackedGemmReference in
// the same order, so results are bit-identical to it whatever the tile (batch invariance).
//
// Without VNNI, vpmaddubsw (u8 x s8 pairs, saturating int16) takes sums of several chunks
// before widening: |x| <= 127, so a pair is at most 2 * 127 * u_max: 3810 for 4-bit u (8 chunks
// fit in int16), 7874 for 5-bit (4 chunks), 16002 for Q6_K's 6 bits (2 chunks). Q8_0 (u up to
// 255) uses the sign trick instead: |q| (<= 128) times x carrying q's sign, one chunk at a time
// (2 * 128 * 127 = 32512), with q = u - 128 recovered as u ^ 0x80, so no offset correction.
// The lookup types (IQ4_NL, IQ4_XS, MXFP4) look their 4-bit indices up (vpshufb) in a table of
// u = v + 128 with VNNI, and of the signed levels v themselves for the sign trick (IQ4_NL's
// |v| <= 127: one chunk at a time; MXFP4's |v| <= 12: 2 * 127 * 12 * 8 = 24384, 8 chunks).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/gemm_packed.h"
#include "kernels/packed_weights.h"

namespace radixlm::kernels::cpu {
namespace {

constexpr int kMaxTile = 4;
// Batches of up to this many tokens run both halves of a group in one pass (Tile's kHalves).
constexpr int kMaxBothTile = 2;

inline __m256i Broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// 8 IEEE halves at p, widened exactly.
inline __m256 LoadHalves8(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Negated floats (exact).
inline __m256 Negate8(__m256 v) {
  return _mm256_xor_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN)));
}

// kK4 (Q4_K, Q5_K): half h's d = dsup * sc and m = -(dmin * mn) of the block whose 24 scale
// bytes are at sp, given its super-block's halves of rows 8h.. widened, dsup and
// neg_dmin = -dmin (the product of the negated half is the negated product: the same float).
inline void K4Scales8(const uint8_t* sp, int h, __m256 dsup, __m256 neg_dmin, __m256* d,
                      __m256* m) {
  const __m256i lo =
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sp + 8 * h)));
  int32_t word;  // row 8h + r's high nibble: nibble r of this word
  std::memcpy(&word, sp + 16 + 4 * h, 4);
  const __m256i hi =
      _mm256_srlv_epi32(_mm256_set1_epi32(word), _mm256_set_epi32(28, 24, 20, 16, 12, 8, 4, 0));
  const __m256i n15 = _mm256_set1_epi32(15), n3 = _mm256_set1_epi32(3);
  const __m256i sc = _mm256_or_si256(_mm256_and_si256(lo, n15),
                                     _mm256_slli_epi32(_mm256_and_si256(hi, n3), 4));
  const __m256i mn =
      _mm256_or_si256(_mm256_srli_epi32(lo, 4),
                      _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(hi, 2), n3), 4));
  d[0] = _mm256_mul_ps(dsup, _mm256_cvtepi32_ps(sc));
  *m = _mm256_mul_ps(neg_dmin, _mm256_cvtepi32_ps(mn));
}

// kK4 for the 8 blocks of a super-block at once (their scale bytes at sp, block i's 24 at
// sp + 24 i): d[i][h] and m[i][h] of both halves h, the floats K4Scales8 gives (the same
// 6-bit values times the same widened halves), the bytes unpacked two blocks per 256-bit
// step, once per super-block rather than per block and half in the block loop.
inline void K4ScalesSuper(const uint8_t* sp, const __m256* dsup, const __m256* neg_dmin,
                          __m256 (*d)[2], __m256 (*m)[2]) {
  const __m256i n15 = _mm256_set1_epi8(15), n3 = _mm256_set1_epi8(3);
  for (int i = 0; i < 8; i += 2) {
    const uint8_t* p = sp + 24 * i;
    const __m256i lo = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(p + 24),
                                           reinterpret_cast<const __m128i*>(p));
    const __m256i hb = _mm256_set_m128i(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 40)),
                                        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 16)));
    // Row r's high bits (nibble r % 2 of byte r / 2) in byte r of each lane.
    const __m256i hn = _mm256_unpacklo_epi8(_mm256_and_si256(hb, n15),
                                            _mm256_and_si256(_mm256_srli_epi16(hb, 4), n15));
    // 16-bit shifts: the masks keep bits of the same byte.
    const __m256i sc = _mm256_or_si256(_mm256_and_si256(lo, n15),
                                       _mm256_slli_epi16(_mm256_and_si256(hn, n3), 4));
    const __m256i mn = _mm256_or_si256(
        _mm256_and_si256(_mm256_srli_epi16(lo, 4), n15),
        _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hn, 2), n3), 4));
    for (int j = 0; j < 2; ++j) {
      const __m128i scj = j == 0 ? _mm256_castsi256_si128(sc) : _mm256_extracti128_si256(sc, 1);
      const __m128i mnj = j == 0 ? _mm256_castsi256_si128(mn) : _mm256_extracti128_si256(mn, 1);
      for (int h = 0; h < 2; ++h) {  // h = 1, rows 8..15: the lane's high 8 bytes
        const __m128i s8 = h == 1 ? _mm_unpackhi_epi64(scj, scj) : scj;
        const __m128i m8 = h == 1 ? _mm_unpackhi_epi64(mnj, mnj) : mnj;
        d[i + j][h] = _mm256_mul_ps(dsup[h], _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(s8)));
        m[i + j][h] = _mm256_mul_ps(neg_dmin[h], _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(m8)));
      }
    }
  }
}

// kI6 (IQ4_XS): half h's d = dh * (ls - 32) of the block whose 12 scale bytes are at sp,
// given its super-block's halves of rows 8h.. widened, dh.
inline __m256 I6Scales8(const uint8_t* sp, int h, __m256 dh) {
  int32_t lo, hi;  // row 8h + r: nibble r of lo, bits 2r..2r+1 of hi
  std::memcpy(&lo, sp + 4 * h, 4);
  uint16_t hi16;
  std::memcpy(&hi16, sp + 8 + 2 * h, 2);
  hi = hi16;
  const __m256i lsv = _mm256_or_si256(
      _mm256_and_si256(
          _mm256_srlv_epi32(_mm256_set1_epi32(lo), _mm256_set_epi32(28, 24, 20, 16, 12, 8, 4, 0)),
          _mm256_set1_epi32(15)),
      _mm256_slli_epi32(
          _mm256_and_si256(
              _mm256_srlv_epi32(_mm256_set1_epi32(hi), _mm256_set_epi32(14, 12, 10, 8, 6, 4, 2, 0)),
              _mm256_set1_epi32(3)),
          4));
  return _mm256_mul_ps(dh, _mm256_cvtepi32_ps(_mm256_sub_epi32(lsv, _mm256_set1_epi32(32))));
}

// kE8M0 (MXFP4): 2^(e - 128) of 8 exponent bytes at p, as E8M0HalfToFloat (e < 2: subnormal).
inline __m256 E8M0Scales8(const uint8_t* p) {
  const __m256i e = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
  const __m256i sub = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
  const __m256i small = _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e);
  return _mm256_castsi256_ps(_mm256_blendv_epi8(normal, sub, small));
}

// kQ3K: half h's d[s] = dh * (ls[s] - 32) of the block whose 24 scale bytes are at sp (kK4's
// bytes with the two sub-blocks' ls in place of sc and mn).
inline void Q3KScales8(const uint8_t* sp, int h, __m256 dh, __m256* d) {
  __m256 ls0, ls1;
  K4Scales8(sp, h, _mm256_set1_ps(1.0f), _mm256_set1_ps(1.0f), &ls0, &ls1);
  const __m256 n32 = _mm256_set1_ps(32.0f);
  d[0] = _mm256_mul_ps(dh, _mm256_sub_ps(ls0, n32));  // small integers: exact
  d[1] = _mm256_mul_ps(dh, _mm256_sub_ps(ls1, n32));
}

// kQ2K: half h's d[s] = dh * sc[s] and m[s] = -(dmin * mn[s]) of the block whose 32 scale
// bytes are at sp (neg_dmin = -dmin).
inline void Q2KScales8(const uint8_t* sp, int h, __m256 dh, __m256 neg_dmin, __m256* d, __m256* m) {
  for (int s = 0; s < 2; ++s) {
    const __m256i v = _mm256_cvtepu8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(sp + 16 * s + 8 * h)));
    d[s] = _mm256_mul_ps(dh, _mm256_cvtepi32_ps(_mm256_and_si256(v, _mm256_set1_epi32(15))));
    m[s] = _mm256_mul_ps(neg_dmin, _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 4)));
  }
}

// kQ6K: half h's d[s] = dh * sc[s] of the block whose scale bytes are at sp.
inline void Q6KScales8(const uint8_t* sp, int h, __m256 dh, __m256* d) {
  for (int s = 0; s < 2; ++s) {
    const __m256i sc = _mm256_cvtepi8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(sp + 16 * s + 8 * h)));
    d[s] = _mm256_mul_ps(dh, _mm256_cvtepi32_ps(sc));
  }
}

// Weight chunk c (0..7) of half h of the block at blk, as 8 rows x 4 bytes of u.
template <bool kNib, int kHigh, bool kLow2 = false>
inline __m256i Chunk(const uint8_t* blk, int h, int c) {
  if constexpr (kLow2) {
    // Bits 2 (c / 2)..+1 of the 64 bytes at 64 (c % 2) (16-bit shifts: the mask keeps bits of
    // the same byte); Q3_K's third bit: bit c of the plane byte becomes bit 2.
    const __m256i v =
        _mm256_load_si256(reinterpret_cast<const __m256i*>(blk + 64 * (c % 2) + 32 * h));
    __m256i u = _mm256_and_si256(_mm256_srli_epi16(v, 2 * (c / 2)), _mm256_set1_epi8(3));
    if constexpr (kHigh == 1) {
      const __m256i hb = _mm256_load_si256(reinterpret_cast<const __m256i*>(blk + 128 + 32 * h));
      const __m256i sh = c <= 2 ? _mm256_slli_epi16(hb, 2 - c) : _mm256_srli_epi16(hb, c - 2);
      u = _mm256_or_si256(u, _mm256_and_si256(sh, _mm256_set1_epi8(4)));
    }
    return u;
  } else if constexpr (!kNib) {
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(blk + 64 * c + 32 * h));
  } else {
    const __m256i v =
        _mm256_load_si256(reinterpret_cast<const __m256i*>(blk + 64 * (c % 4) + 32 * h));
    const __m256i low4 = _mm256_set1_epi8(15);
    __m256i u = c < 4 ? _mm256_and_si256(v, low4) : _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
    if constexpr (kHigh == 2) {
      // Bits 2 (c % 4)..+1 of plane c / 4 become bits 4-5 (the mask keeps bits that came
      // from the same byte).
      const __m256i hb =
          _mm256_load_si256(reinterpret_cast<const __m256i*>(blk + 256 + 64 * (c / 4) + 32 * h));
      const int k = 2 * (c % 4);
      const __m256i sh = k <= 4 ? _mm256_slli_epi16(hb, 4 - k) : _mm256_srli_epi16(hb, k - 4);
      u = _mm256_or_si256(u, _mm256_and_si256(sh, _mm256_set1_epi8(0x30)));
    }
    if constexpr (kHigh == 1) {
      // Bit c of the plane byte becomes bit 4 (16-bit shifts: bit 4 of a byte only receives
      // bits of that byte for shifts up to 4).
      const __m256i hb = _mm256_load_si256(reinterpret_cast<const __m256i*>(blk + 256 + 32 * h));
      const __m256i sh = c <= 4 ? _mm256_slli_epi16(hb, 4 - c) : _mm256_srli_epi16(hb, c - 4);
      u = _mm256_or_si256(u, _mm256_and_si256(sh, _mm256_set1_epi8(0x10)));
    }
    return u;
  }
}

// Integer sums of chunks wq[c0 .. c1) of a block against the T tokens' quants (token t's 32 at
// x + 32 t, the tiled layout of packed_weights.h), added to s[t]. The chunk loop is outside the
// token loop, so the T accumulations are independent chains. kChunksPer16: chunks summed in
// int16 before widening (0: the Q8_0 sign trick; -n: wq holds signed levels (the lookup
// types), sign trick with n chunks summed in int16).
template <int T, bool kVnni, int kChunksPer16>
inline void DotChunks(const __m256i* wq, int c0, int c1, const int8_t* x, __m256i* s) {
  if constexpr (kVnni) {
    for (int c = c0; c < c1; ++c) {
      for (int t = 0; t < T; ++t) {
        s[t] = _mm256_dpbusd_avx_epi32(s[t], wq[c], Broadcast4(x + 32 * t + 4 * c));
      }
    }
  } else if constexpr (kChunksPer16 < 0) {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int c = c0; c < c1; c += -kChunksPer16) {
      __m256i p[T];
      for (int t = 0; t < T; ++t) p[t] = _mm256_setzero_si256();
      for (int k = c; k < std::min(c1, c - kChunksPer16); ++k) {
        const __m256i aq = _mm256_sign_epi8(wq[k], wq[k]);
        for (int t = 0; t < T; ++t) {
          const __m256i xs = _mm256_sign_epi8(Broadcast4(x + 32 * t + 4 * k), wq[k]);
          p[t] = _mm256_add_epi16(p[t], _mm256_maddubs_epi16(aq, xs));
        }
      }
      for (int t = 0; t < T; ++t) s[t] = _mm256_add_epi32(s[t], _mm256_madd_epi16(p[t], ones));
    }
  } else if constexpr (kChunksPer16 == 0) {
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
    for (int c = c0; c < c1; ++c) {
      const __m256i q = _mm256_xor_si256(wq[c], flip);
      const __m256i aq = _mm256_sign_epi8(q, q);
      for (int t = 0; t < T; ++t) {
        const __m256i xs = _mm256_sign_epi8(Broadcast4(x + 32 * t + 4 * c), q);
        const __m256i p = _mm256_maddubs_epi16(aq, xs);
        s[t] = _mm256_add_epi32(s[t], _mm256_madd_epi16(p, ones));
        // One chain per token in a register: GCC otherwise reassociates the integer adds into
        // a tree whose 8 x T products it spills to the stack (a store and a load each).
        asm("" : "+x"(s[t]));
      }
    }
  } else {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int c = c0; c < c1; c += kChunksPer16) {
      __m256i p[T];
      for (int t = 0; t < T; ++t) p[t] = _mm256_setzero_si256();
      for (int k = c; k < std::min(c1, c + kChunksPer16); ++k) {
        for (int t = 0; t < T; ++t) {
          const __m256i xb = Broadcast4(x + 32 * t + 4 * k);
          p[t] = _mm256_add_epi16(p[t], _mm256_maddubs_epi16(wq[k], xb));
        }
      }
      for (int t = 0; t < T; ++t) s[t] = _mm256_add_epi32(s[t], _mm256_madd_epi16(p[t], ones));
    }
  }
}

// y[t0 + t, 16 g + 8 h + lane] for t < T and h in [h0, h0 + kHalves); valid: the rows of the
// last half to store (1..8; an earlier half stores all 8). With both halves in one pass over the
// group's blocks (kHalves 2, for one or two tokens), the weights stream without the pause of a
// second pass that finds them in cache; per element the operations are the same either way.
template <int T, int kHalves, bool kVnni, bool kNib, int kHigh, bool kMin, bool kSub16,
          int kChunksPer16, bool kLow2, ScaleForm kForm>
void Tile(const PackedWeights& w, const PackedActivations& a, int64_t g, int h0, int64_t t0,
          float* y, int64_t y_stride, int valid) {
  // The Q8_0 sign trick computes sum q * x directly: no offset term.
  const int32_t off = (!kVnni && kChunksPer16 <= 0) ? 0 : w.offset;
  // The lookup types' table: u = v + 128 with VNNI, v for the sign trick (the same bytes
  // xor 0x80), in both 128-bit lanes.
  constexpr bool kLut = kChunksPer16 < 0;
  __m256i lut = _mm256_setzero_si256();
  if constexpr (kLut) {
    lut = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.levels)));
    if constexpr (!kVnni) lut = _mm256_xor_si256(lut, _mm256_set1_epi8(static_cast<char>(0x80)));
  }
  const int64_t nb = a.nb;
  // The tokens' tiled activations (packed_weights.h): per block, one pointer each for the
  // quants and the scalars, token t at a fixed offset from it.
  const int64_t i0 = t0 % kActTile;
  const int64_t kb0 = t0 / kActTile * nb;
  __m256 acc[kHalves][T];
  for (int hh = 0; hh < kHalves; ++hh) {
    for (int t = 0; t < T; ++t) acc[hh][t] = _mm256_setzero_ps();
  }
  // The K-quants' (and IQ4_XS's) super-block scales of each half, widened once per 8 blocks.
  constexpr bool k4 = kForm == ScaleForm::kK4;
  constexpr bool i6 = kForm == ScaleForm::kI6;
  // The group's three streams (packed_weights.h), advanced per block: quants, scales, supers.
  const size_t quant_bytes = w.quant_bytes, scale_bytes = w.scale_bytes;
  const size_t super_bytes = w.super_bytes, stream_bytes = w.stream_bytes;
  const uint8_t* blk = w.Block(g, 0);
  const uint8_t* scales = w.Scales(g, 0);
  const uint8_t* supers = w.Supers(g, 0);
  const bool first_pass = t0 == 0 && h0 == 0;
  __m256 dsup[kHalves] = {}, neg_dmin[kHalves] = {};
  // kK4 with both halves in one pass (one or two tokens): the super-block's 8 blocks' scales
  // of each half, widened at its first block (a tile of more tokens widens them per block,
  // where the widening overlaps the products: faster there).
  constexpr bool k4_super = k4 && kHalves == 2;
  __m256 k4d[k4_super ? 8 : 1][kHalves], k4m[k4_super ? 8 : 1][kHalves];
  for (int64_t b = 0; b < nb; ++b, blk += quant_bytes, scales += scale_bytes) {
    if ((k4 || i6 || kLow2) && b % 8 == 0) {
      const uint8_t* sup = supers + (b / 8) * super_bytes;
#pragma GCC unroll 2
      for (int hh = 0; hh < kHalves; ++hh) {
        dsup[hh] = LoadHalves8(sup + 16 * (h0 + hh));
        if (k4 || (kLow2 && kMin)) neg_dmin[hh] = Negate8(LoadHalves8(sup + 32 + 16 * (h0 + hh)));
      }
      if constexpr (k4_super) K4ScalesSuper(scales, dsup, neg_dmin, k4d, k4m);
    }
    // Only the group's first pass streams it: later token tiles and the second half (h = 1)
    // read lines already in cache.
    if (first_pass) PrefetchAheadL2(blk, stream_bytes);
    const int64_t kb = kb0 + b;
    const int8_t* xq = a.tq + (kb * kActTile + i0) * 32;
    const float* dx = a.tdx + kb * kActTile + i0;
    const float* dxs = a.tdxs + kb * kActTile + i0;
#pragma GCC unroll 2
    for (int hh = 0; hh < kHalves; ++hh) {
      const int h = h0 + hh;
      __m256i wq[8];  // unpacked once per block for all T tokens
      for (int c = 0; c < 8; ++c) wq[c] = Chunk<kNib, kHigh, kLow2>(blk, h, c);
      if constexpr (kLut) {
        for (int c = 0; c < 8; ++c) wq[c] = _mm256_shuffle_epi8(lut, wq[c]);
      }
      __m256 d[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
      __m256 m[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
      if constexpr (kLow2 && kMin) {
        Q2KScales8(scales, h, dsup[hh], neg_dmin[hh], d, m);
      } else if constexpr (kLow2) {
        Q3KScales8(scales, h, dsup[hh], d);
      } else if constexpr (kSub16) {
        Q6KScales8(scales, h, LoadHalves8(supers + (b / 8) * super_bytes + 16 * h), d);
      } else if constexpr (i6) {
        d[0] = I6Scales8(scales, h, dsup[hh]);
      } else if constexpr (k4_super) {
        d[0] = k4d[b % 8][hh];
        m[0] = k4m[b % 8][hh];
      } else if constexpr (k4) {
        K4Scales8(scales, h, dsup[hh], neg_dmin[hh], d, m);
      } else if constexpr (kForm == ScaleForm::kE8M0) {
        d[0] = E8M0Scales8(scales + 8 * h);
      } else {
        d[0] = LoadHalves8(scales + 16 * h);
        if constexpr (kMin) m[0] = LoadHalves8(scales + 32 + 16 * h);
      }
      constexpr int kScales = kSub16 ? 2 : 1;
      for (int sc = 0; sc < kScales; ++sc) {
        const int c0 = kSub16 ? 4 * sc : 0, c1 = kSub16 ? c0 + 4 : 8;
        const int32_t* xsum =
            kSub16 ? a.tsum16 + (kb * 2 + sc) * kActTile + i0 : a.txsum + kb * kActTile + i0;
        __m256i s[T];
        for (int t = 0; t < T; ++t) {
          // Types with a min have offset 0.
          s[t] = kMin ? _mm256_setzero_si256() : _mm256_set1_epi32(-off * xsum[t]);
        }
        DotChunks<T, kVnni, kChunksPer16>(wq, c0, c1, xq, s);
        for (int t = 0; t < T; ++t) {
          const __m256 scale = _mm256_mul_ps(d[sc], _mm256_set1_ps(dx[t]));
          acc[hh][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[t]), scale, acc[hh][t]);
          if constexpr (kMin && kSub16) {  // Q2_K: m per 16 columns, times dx * their sum
            const __m256 xs = _mm256_set1_ps(dx[t] * static_cast<float>(xsum[t]));
            acc[hh][t] = _mm256_fmadd_ps(m[sc], xs, acc[hh][t]);
          } else if constexpr (kMin) {
            acc[hh][t] = _mm256_fmadd_ps(m[0], _mm256_set1_ps(dxs[t]), acc[hh][t]);
          }
        }
      }
    }
  }
  for (int hh = 0; hh < kHalves; ++hh) {
    const int n_valid = hh + 1 == kHalves ? valid : 8;
    for (int t = 0; t < T; ++t) {
      float* out = y + (t0 + t) * y_stride + 16 * g + 8 * (h0 + hh);
      if (n_valid == 8) {
        _mm256_storeu_ps(out, acc[hh][t]);
      } else {
        alignas(32) float tmp[8];
        _mm256_store_ps(tmp, acc[hh][t]);
        std::memcpy(out, tmp, sizeof(float) * n_valid);
      }
    }
  }
}

using TileFn = void (*)(const PackedWeights&, const PackedActivations&, int64_t, int, int64_t,
                        float*, int64_t, int);

// fns[T]: one half against T tokens; both[T]: both halves of a full group against T tokens.
template <bool kVnni, bool kNib, int kHigh, bool kMin, bool kSub16, int kChunksPer16,
          bool kLow2, ScaleForm kForm>
struct Tiles {
  static constexpr TileFn fns[kMaxTile + 1] = {
      nullptr, Tile<1, 1, kVnni, kNib, kHigh, kMin, kSub16, kChunksPer16, kLow2, kForm>,
      Tile<2, 1, kVnni, kNib, kHigh, kMin, kSub16, kChunksPer16, kLow2, kForm>,
      Tile<3, 1, kVnni, kNib, kHigh, kMin, kSub16, kChunksPer16, kLow2, kForm>,
      Tile<4, 1, kVnni, kNib, kHigh, kMin, kSub16, kChunksPer16, kLow2, kForm>};
  static constexpr TileFn both[kMaxBothTile + 1] = {
      nullptr, Tile<1, 2, kVnni, kNib, kHigh, kMin, kSub16, kChunksPer16, kLow2, kForm>,
      Tile<2, 2, kVnni, kNib, kHigh, kMin, kSub16, kChunksPer16, kLow2, kForm>};
};

struct TileSet {
  const TileFn* fns;
  const TileFn* both;
};

// The scale form is a template argument too (each tile widens its scales without a branch).
template <bool kVnni, bool kNib, int kHigh, bool kMin, bool kSub16, int kChunksPer16,
          bool kLow2 = false, ScaleForm kForm = ScaleForm::kHalf>
TileSet SetOf() {
  using S = Tiles<kVnni, kNib, kHigh, kMin, kSub16, kChunksPer16, kLow2, kForm>;
  return {S::fns, S::both};
}

template <bool kVnni>
TileSet TilesFor(const PackedWeights& w) {
  using F = ScaleForm;
  if (w.levels != nullptr) {  // IQ4_NL, IQ4_XS, MXFP4 (kChunksPer16 < 0: the lookup)
    switch (w.scale_form) {
      case F::kI6: return SetOf<kVnni, true, 0, false, false, -1, false, F::kI6>();  // IQ4_XS
      case F::kE8M0:  // MXFP4: |v| <= 12, 8 chunks per int16 with the sign trick
        return SetOf<kVnni, true, 0, false, false, kVnni ? -1 : -8, false, F::kE8M0>();
      default: return SetOf<kVnni, true, 0, false, false, -1>();  // IQ4_NL
    }
  }
  if (w.low_bits == 2) {  // u <= 7: 2 * 127 * 7 * 4 fits int16
    return w.has_min ? SetOf<kVnni, true, 0, true, true, 4, true, F::kQ2K>()    // Q2_K
                     : SetOf<kVnni, true, 1, false, true, 4, true, F::kQ3K>();  // Q3_K
  }
  if (w.sub == 16) return SetOf<kVnni, true, 2, false, true, 2, false, F::kQ6K>();  // Q6_K
  const bool k4 = w.scale_form == F::kK4;
  if (w.nibbles && w.high_bits == 1) {
    if (!w.has_min) return SetOf<kVnni, true, 1, false, false, 4>();  // Q5_0
    return k4 ? SetOf<kVnni, true, 1, true, false, 4, false, F::kK4>()  // Q5_K
              : SetOf<kVnni, true, 1, true, false, 4>();                // Q5_1
  }
  if (w.nibbles) {
    if (!w.has_min) return SetOf<kVnni, true, 0, false, false, 8>();  // Q4_0
    return k4 ? SetOf<kVnni, true, 0, true, false, 8, false, F::kK4>()  // Q4_K
              : SetOf<kVnni, true, 0, true, false, 8>();                // Q4_1
  }
  return SetOf<kVnni, false, 0, false, false, 0>();  // Q8_0
}

template <bool kVnni>
void PackedGemm256(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
                   int64_t g1, float* y, int64_t y_stride) {
  const TileSet tiles = TilesFor<kVnni>(w);
  const TileFn* fns = tiles.fns;
  for (int64_t g = g0; g < g1; ++g) {
    if (n_tokens <= kMaxBothTile && w.rows - 16 * g >= 16) {
      tiles.both[n_tokens](w, a, g, 0, 0, y, y_stride, 8);
      continue;
    }
    for (int h = 0; h < 2; ++h) {
      const int valid = static_cast<int>(std::min<int64_t>(8, w.rows - 16 * g - 8 * h));
      if (valid <= 0) break;
      int64_t t = 0;
      for (; t + kMaxTile <= n_tokens; t += kMaxTile) {
        fns[kMaxTile](w, a, g, h, t, y, y_stride, valid);
      }
      if (t < n_tokens) fns[n_tokens - t](w, a, g, h, t, y, y_stride, valid);
    }
  }
}

}  // namespace
}  // namespace radixlm::kernels::cpu
