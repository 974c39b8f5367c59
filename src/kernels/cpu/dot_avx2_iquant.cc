// AVX2 dot products of the codebook types (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S,
// IQ1_M) with Q8_K activations. Each group's grid entry is loaded as bytes (4 x 8 or 8 x 4 per
// 32 elements), the signs are applied to the activations (vpsignb), and vpmaddubsw multiplies
// the unsigned magnitudes with them; sub-block scales multiply the int16 pair sums exactly.
#include <array>

#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/iq_grids.h"
#include "kernels/cpu/lowbit_impl.h"

namespace radixlm::kernels::cpu::avx2 {
namespace {

// kSignBytes[s]: the 8 sign bytes (+1 or -1) of 7 stored sign bits s (parity completes 8).
constexpr std::array<uint64_t, 128> kSignBytes = [] {
  std::array<uint64_t, 128> t{};
  for (int s = 0; s < 128; ++s) {
    for (int j = 0; j < 8; ++j) {
      const uint64_t byte = (kIqSigns[s] >> j) & 1 ? 0xFF : 0x01;
      t[s] |= byte << (8 * j);
    }
  }
  return t;
}();

// 32 sign bytes (+1 or -1) of the 4 stored 7-bit sign groups of a 32-bit word (bits 7l..7l+6).
inline __m256i SignsFrom7BitGroups(uint32_t aux) {
  return _mm256_set_epi64x(static_cast<int64_t>(kSignBytes[(aux >> 21) & 127]),
                           static_cast<int64_t>(kSignBytes[(aux >> 14) & 127]),
                           static_cast<int64_t>(kSignBytes[(aux >> 7) & 127]),
                           static_cast<int64_t>(kSignBytes[aux & 127]));
}

// 32 sign bytes (+1 or -1) from 32 sign bits (bit j of the little-endian word: element j).
inline __m256i SignsFromBits(const uint8_t* p) {
  uint32_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ULL));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
  return _mm256_or_si256(set, _mm256_set1_epi8(1));
}

inline __m256i Grid4x64(const uint64_t* grid, int i0, int i1, int i2, int i3) {
  return _mm256_set_epi64x(static_cast<int64_t>(grid[i3]), static_cast<int64_t>(grid[i2]),
                           static_cast<int64_t>(grid[i1]), static_cast<int64_t>(grid[i0]));
}

inline __m256i Grid8x32(const uint32_t* grid, const int* idx) {
  return _mm256_set_epi32(static_cast<int>(grid[idx[7]]), static_cast<int>(grid[idx[6]]),
                          static_cast<int>(grid[idx[5]]), static_cast<int>(grid[idx[4]]),
                          static_cast<int>(grid[idx[3]]), static_cast<int>(grid[idx[2]]),
                          static_cast<int>(grid[idx[1]]), static_cast<int>(grid[idx[0]]));
}

// Unsigned magnitudes q times the activations y with signs s applied: 16 int16 pair sums.
inline __m256i SignedProducts(__m256i q, __m256i y, __m256i s) {
  return _mm256_maddubs_epi16(q, _mm256_sign_epi8(y, s));
}

// A per-lane int16 scale: `lo` for elements 0..15 of a 32-element group, `hi` for 16..31.
inline __m256i LaneScales(int lo, int hi) {
  return _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(hi)),
                          _mm_set1_epi16(static_cast<int16_t>(lo)));
}

}  // namespace

float DotIQ2XXS(int64_t n, const void* w, const void* x) {
  const BlockIQ2XXS* a = static_cast<const BlockIQ2XXS*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const int8_t* q8 = y[i].qs;
    __m256i sumi0 = _mm256_setzero_si256(), sumi1 = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ib += 2, q8 += 64) {
      uint32_t aux[4];
      std::memcpy(aux, a[i].qs + 4 * ib, sizeof(aux));
      const __m256i q0 = Grid4x64(kIq2xxsGrid, aux[0] & 0xFF, (aux[0] >> 8) & 0xFF,
                                  (aux[0] >> 16) & 0xFF, aux[0] >> 24);
      const __m256i q1 = Grid4x64(kIq2xxsGrid, aux[2] & 0xFF, (aux[2] >> 8) & 0xFF,
                                  (aux[2] >> 16) & 0xFF, aux[2] >> 24);
      const __m256i p0 = SignedProducts(q0, Load256(q8), SignsFrom7BitGroups(aux[1]));
      const __m256i p1 = SignedProducts(q1, Load256(q8 + 32), SignsFrom7BitGroups(aux[3]));
      const int ls0 = 2 * static_cast<int>(aux[1] >> 28) + 1;
      const int ls1 = 2 * static_cast<int>(aux[3] >> 28) + 1;
      sumi0 = _mm256_add_epi32(sumi0, _mm256_madd_epi16(p0, _mm256_set1_epi16(ls0)));
      sumi1 = _mm256_add_epi32(sumi1, _mm256_madd_epi16(p1, _mm256_set1_epi16(ls1)));
    }
    const float d = y[i].d * HalfToFloat(a[i].d);
    acc =
        _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(_mm256_add_epi32(sumi0, sumi1)), acc);
  }
  return 0.125f * HsumF32(acc);
}

float DotIQ2XS(int64_t n, const void* w, const void* x) {
  const BlockIQ2XS* a = static_cast<const BlockIQ2XS*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const int8_t* q8 = y[i].qs;
    const uint16_t* qs = a[i].qs;
    __m256i sumi = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ++ib, q8 += 32, qs += 4) {
      const __m256i q = Grid4x64(kIq2xsGrid, qs[0] & 511, qs[1] & 511, qs[2] & 511, qs[3] & 511);
      const __m256i s = _mm256_set_epi64x(static_cast<int64_t>(kSignBytes[qs[3] >> 9]),
                                          static_cast<int64_t>(kSignBytes[qs[2] >> 9]),
                                          static_cast<int64_t>(kSignBytes[qs[1] >> 9]),
                                          static_cast<int64_t>(kSignBytes[qs[0] >> 9]));
      const __m256i p = SignedProducts(q, Load256(q8), s);
      const int sc = a[i].scales[ib];
      sumi = _mm256_add_epi32(
          sumi, _mm256_madd_epi16(p, LaneScales(2 * (sc & 0xF) + 1, 2 * (sc >> 4) + 1)));
    }
    const float d = y[i].d * HalfToFloat(a[i].d);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  return 0.125f * HsumF32(acc);
}

float DotIQ2S(int64_t n, const void* w, const void* x) {
  const BlockIQ2S* a = static_cast<const BlockIQ2S*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const int8_t* q8 = y[i].qs;
    const uint8_t* qs = a[i].qs;
    const uint8_t* signs = a[i].qs + kQK_K / 8;
    __m256i sumi = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ++ib, q8 += 32, qs += 4, signs += 4) {
      const int qh = a[i].qh[ib];
      const __m256i q =
          Grid4x64(kIq2sGrid, qs[0] | ((qh << 8) & 0x300), qs[1] | ((qh << 6) & 0x300),
                   qs[2] | ((qh << 4) & 0x300), qs[3] | ((qh << 2) & 0x300));
      const __m256i p = SignedProducts(q, Load256(q8), SignsFromBits(signs));
      const int sc = a[i].scales[ib];
      sumi = _mm256_add_epi32(
          sumi, _mm256_madd_epi16(p, LaneScales(2 * (sc & 0xF) + 1, 2 * (sc >> 4) + 1)));
    }
    const float d = y[i].d * HalfToFloat(a[i].d);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  return 0.125f * HsumF32(acc);
}

float DotIQ3XXS(int64_t n, const void* w, const void* x) {
  const BlockIQ3XXS* a = static_cast<const BlockIQ3XXS*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const int8_t* q8 = y[i].qs;
    const uint8_t* qs = a[i].qs;
    const uint8_t* scales_and_signs = a[i].qs + kQK_K / 4;
    __m256i sumi = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ++ib, q8 += 32, qs += 8) {
      uint32_t aux;
      std::memcpy(&aux, scales_and_signs + 4 * ib, sizeof(aux));
      const int idx[8] = {qs[0], qs[1], qs[2], qs[3], qs[4], qs[5], qs[6], qs[7]};
      const __m256i p =
          SignedProducts(Grid8x32(kIq3xxsGrid, idx), Load256(q8), SignsFrom7BitGroups(aux));
      const int ls = 2 * static_cast<int>(aux >> 28) + 1;
      sumi =
          _mm256_add_epi32(sumi, _mm256_madd_epi16(p, _mm256_set1_epi16(static_cast<int16_t>(ls))));
    }
    const float d = y[i].d * HalfToFloat(a[i].d);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  return 0.25f * HsumF32(acc);
}

float DotIQ3S(int64_t n, const void* w, const void* x) {
  const BlockIQ3S* a = static_cast<const BlockIQ3S*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const int8_t* q8 = y[i].qs;
    const uint8_t* qs = a[i].qs;
    const uint8_t* signs = a[i].signs;
    __m256i sumi = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ++ib, q8 += 32, qs += 8, signs += 4) {
      const int qh = a[i].qh[ib];
      int idx[8];
      for (int k = 0; k < 8; ++k) idx[k] = qs[k] | (((qh >> k) & 1) << 8);
      const __m256i p = SignedProducts(Grid8x32(kIq3sGrid, idx), Load256(q8), SignsFromBits(signs));
      const int ls = 2 * ((a[i].scales[ib / 2] >> (4 * (ib % 2))) & 0xF) + 1;
      sumi =
          _mm256_add_epi32(sumi, _mm256_madd_epi16(p, _mm256_set1_epi16(static_cast<int16_t>(ls))));
    }
    const float d = y[i].d * HalfToFloat(a[i].d);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  return HsumF32(acc);
}

// IQ1 grids hold signed bytes in {-1, 0, 1}: the sign of the weight moves onto the activation
// and its magnitude (0 or 1) multiplies it.
float DotIQ1S(int64_t n, const void* w, const void* x) {
  const BlockIQ1S* a = static_cast<const BlockIQ1S*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const int8_t* q8 = y[i].qs;
    const uint8_t* qs = a[i].qs;
    __m256i sumi = _mm256_setzero_si256();
    int sumi_delta = 0;
    for (int ib = 0; ib < kQK_K / 32; ++ib, q8 += 32, qs += 4) {
      const int qh = a[i].qh[ib];
      const __m256i q =
          Grid4x64(kIq1sGrid, qs[0] | ((qh << 8) & 0x700), qs[1] | ((qh << 5) & 0x700),
                   qs[2] | ((qh << 2) & 0x700), qs[3] | ((qh >> 1) & 0x700));
      const __m256i p = SignedProducts(_mm256_sign_epi8(q, q), Load256(q8), q);
      const int ls = 2 * ((qh >> 12) & 7) + 1;
      sumi =
          _mm256_add_epi32(sumi, _mm256_madd_epi16(p, _mm256_set1_epi16(static_cast<int16_t>(ls))));
      const int ysum = y[i].bsums[2 * ib] + y[i].bsums[2 * ib + 1];
      sumi_delta += (1 - 2 * (qh >> 15)) * ls * ysum;  // branch-free: the sign bit is data
    }
    const float d = y[i].d * HalfToFloat(a[i].d);
    const __m256 total = _mm256_add_ps(
        _mm256_cvtepi32_ps(sumi),
        _mm256_set_ps(0, 0, 0, 0, 0, 0, 0, kIq1Delta * static_cast<float>(sumi_delta)));
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), total, acc);
  }
  return HsumF32(acc);
}

float DotIQ1M(int64_t n, const void* w, const void* x) {
  const BlockIQ1M* a = static_cast<const BlockIQ1M*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  const __m256i ones = _mm256_set1_epi8(1);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const int8_t* q8 = y[i].qs;
    const uint8_t* qs = a[i].qs;
    const uint8_t* qh = a[i].qh;
    __m256i sumi = _mm256_setzero_si256(), sumi_delta = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ++ib, q8 += 32, qs += 4, qh += 2) {
      const int sc = a[i].scales[2 * (ib / 2)] | (a[i].scales[2 * (ib / 2) + 1] << 8);
      const int shift = 6 * (ib % 2);
      const __m256i scales =
          LaneScales(2 * ((sc >> shift) & 7) + 1, 2 * ((sc >> (shift + 3)) & 7) + 1);
      const __m256i q =
          Grid4x64(kIq1sGrid, qs[0] | ((qh[0] << 8) & 0x700), qs[1] | ((qh[0] << 4) & 0x700),
                   qs[2] | ((qh[1] << 8) & 0x700), qs[3] | ((qh[1] << 4) & 0x700));
      // Delta sign per 8 elements: bit 3 of each nibble of qh, as 8 bytes of -1 or +1 (without
      // branches: the sign bits are data).
      const int64_t h = qh[0] | (qh[1] << 8);
      const auto delta = [h](int group) -> int64_t {
        return -((h >> (4 * group + 3)) & 1) | 0x0101010101010101;
      };
      const __m256i ds = _mm256_set_epi64x(delta(3), delta(2), delta(1), delta(0));
      const __m256i y8 = Load256(q8);
      const __m256i p = SignedProducts(_mm256_sign_epi8(q, q), y8, q);
      const __m256i pd = SignedProducts(ones, y8, ds);
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, scales));
      sumi_delta = _mm256_add_epi32(sumi_delta, _mm256_madd_epi16(pd, scales));
    }
    const float d = y[i].d * HalfToFloat(IQ1MHalfScale(a[i]));
    const __m256 total = _mm256_fmadd_ps(_mm256_set1_ps(kIq1Delta), _mm256_cvtepi32_ps(sumi_delta),
                                         _mm256_cvtepi32_ps(sumi));
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), total, acc);
  }
  return HsumF32(acc);
}

}  // namespace radixlm::kernels::cpu::avx2
