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

// Table lookups go through vpgatherdq / vpgatherdd: four (eight) scalar loads and inserts
// would queue on the one shuffle port that the sign and scale shuffles need too.

// 32 sign bytes (+1 or -1) of the 4 stored 7-bit sign groups of a 32-bit word (bits 7l..7l+6).
inline __m256i SignsFrom7BitGroups(uint32_t aux) {
  const __m128i idx = _mm_and_si128(
      _mm_srlv_epi32(_mm_set1_epi32(static_cast<int>(aux)), _mm_set_epi32(21, 14, 7, 0)),
      _mm_set1_epi32(127));
  return _mm256_i32gather_epi64(reinterpret_cast<const long long*>(kSignBytes.data()), idx, 8);
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

// The 4 grid entries (8 bytes each) at the 4 int32 indices of idx.
inline __m256i Grid4x64(const uint64_t* grid, __m128i idx) {
  return _mm256_i32gather_epi64(reinterpret_cast<const long long*>(grid), idx, 8);
}

// 4 bytes at p, zero-extended to 4 int32.
inline __m128i BytesToI32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return _mm_cvtepu8_epi32(_mm_cvtsi32_si128(v));
}

// The 8 grid entries (4 bytes each) at the 8 int32 indices of idx.
inline __m256i Grid8x32(const uint32_t* grid, __m256i idx) {
  return _mm256_i32gather_epi32(reinterpret_cast<const int*>(grid), idx, 4);
}

// Unsigned magnitudes q times the activations y with signs s applied: 16 int16 pair sums.
inline __m256i SignedProducts(__m256i q, __m256i y, __m256i s) {
  return _mm256_maddubs_epi16(q, _mm256_sign_epi8(y, s));
}

// The 16 scales 2 * s + 1 of an IQ2_XS / IQ2_S block (a nibble each, group ib: low nibble of
// scales[ib] for its elements 0..15, high for 16..31) as int16: low lane the low nibbles, high
// lane the high ones, so BroadcastI16Mask(ib) gives group ib's two scales.
inline __m256i Iq2BlockScales(const uint8_t* scales) {
  uint64_t packed;
  std::memcpy(&packed, scales, sizeof(packed));
  const __m128i nibbles =
      _mm_and_si128(_mm_set_epi64x(static_cast<int64_t>(packed >> 4), static_cast<int64_t>(packed)),
                    _mm_set1_epi8(0xF));
  return _mm256_cvtepu8_epi16(_mm_add_epi8(_mm_add_epi8(nibbles, nibbles), _mm_set1_epi8(1)));
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
      const uint8_t* index = reinterpret_cast<const uint8_t*>(a[i].qs + 4 * ib);
      const __m256i q0 = Grid4x64(kIq2xxsGrid, BytesToI32(index));
      const __m256i q1 = Grid4x64(kIq2xxsGrid, BytesToI32(index + 8));
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

// The kernels below take two 32-element groups per iteration into two accumulators (the grid
// loads of one group overlap the arithmetic of the other).

float DotIQ2XS(int64_t n, const void* w, const void* x) {
  const BlockIQ2XS* a = static_cast<const BlockIQ2XS*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m256i scales = Iq2BlockScales(a[i].scales);
    const auto group = [&](int ib) {
      const uint16_t* qs = a[i].qs + 4 * ib;
      const __m128i words =
          _mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(qs)));
      const __m256i q = Grid4x64(kIq2xsGrid, _mm_and_si128(words, _mm_set1_epi32(511)));
      const __m256i s = _mm256_i32gather_epi64(
          reinterpret_cast<const long long*>(kSignBytes.data()), _mm_srli_epi32(words, 9), 8);
      const __m256i p = SignedProducts(q, Load256(y[i].qs + 32 * ib), s);
      return _mm256_madd_epi16(p, _mm256_shuffle_epi8(scales, BroadcastI16Mask(ib)));
    };
    __m256i sumi0 = _mm256_setzero_si256(), sumi1 = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ib += 2) {
      sumi0 = _mm256_add_epi32(sumi0, group(ib));
      sumi1 = _mm256_add_epi32(sumi1, group(ib + 1));
    }
    const float d = y[i].d * HalfToFloat(a[i].d);
    acc =
        _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(_mm256_add_epi32(sumi0, sumi1)), acc);
  }
  return 0.125f * HsumF32(acc);
}

float DotIQ2S(int64_t n, const void* w, const void* x) {
  const BlockIQ2S* a = static_cast<const BlockIQ2S*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m256i scales = Iq2BlockScales(a[i].scales);
    const auto group = [&](int ib) {
      const uint8_t* qs = a[i].qs + 4 * ib;
      const int qh = a[i].qh[ib];
      // Index l: qs[l] | (bits 2l, 2l + 1 of qh) << 8.
      const __m128i high =
          _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32(qh << 8), _mm_set_epi32(6, 4, 2, 0)),
                        _mm_set1_epi32(0x300));
      const __m256i q = Grid4x64(kIq2sGrid, _mm_or_si128(BytesToI32(qs), high));
      const __m256i p = SignedProducts(q, Load256(y[i].qs + 32 * ib),
                                       SignsFromBits(a[i].qs + kQK_K / 8 + 4 * ib));
      return _mm256_madd_epi16(p, _mm256_shuffle_epi8(scales, BroadcastI16Mask(ib)));
    };
    __m256i sumi0 = _mm256_setzero_si256(), sumi1 = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ib += 2) {
      sumi0 = _mm256_add_epi32(sumi0, group(ib));
      sumi1 = _mm256_add_epi32(sumi1, group(ib + 1));
    }
    const float d = y[i].d * HalfToFloat(a[i].d);
    acc =
        _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(_mm256_add_epi32(sumi0, sumi1)), acc);
  }
  return 0.125f * HsumF32(acc);
}

float DotIQ3XXS(int64_t n, const void* w, const void* x) {
  const BlockIQ3XXS* a = static_cast<const BlockIQ3XXS*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const auto group = [&](int ib) {
      const uint8_t* qs = a[i].qs + 8 * ib;
      uint32_t aux;
      std::memcpy(&aux, a[i].qs + kQK_K / 4 + 4 * ib, sizeof(aux));
      const __m256i idx =
          _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(qs)));
      const __m256i p = SignedProducts(Grid8x32(kIq3xxsGrid, idx), Load256(y[i].qs + 32 * ib),
                                       SignsFrom7BitGroups(aux));
      const int ls = 2 * static_cast<int>(aux >> 28) + 1;
      return _mm256_madd_epi16(p, _mm256_set1_epi16(static_cast<int16_t>(ls)));
    };
    __m256i sumi0 = _mm256_setzero_si256(), sumi1 = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ib += 2) {
      sumi0 = _mm256_add_epi32(sumi0, group(ib));
      sumi1 = _mm256_add_epi32(sumi1, group(ib + 1));
    }
    const float d = y[i].d * HalfToFloat(a[i].d);
    acc =
        _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(_mm256_add_epi32(sumi0, sumi1)), acc);
  }
  return 0.25f * HsumF32(acc);
}

float DotIQ3S(int64_t n, const void* w, const void* x) {
  const BlockIQ3S* a = static_cast<const BlockIQ3S*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  // Grid index k of a group: qs[k] | (bit k of qh) << 8, computed 8 at a time.
  const __m256i index_shift = _mm256_set_epi32(1, 2, 3, 4, 5, 6, 7, 8);
  const __m256i index_bit = _mm256_set1_epi32(256);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const auto group = [&](int ib) {
      const __m128i low = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(a[i].qs + 8 * ib));
      const __m256i high = _mm256_and_si256(
          _mm256_sllv_epi32(_mm256_set1_epi32(a[i].qh[ib]), index_shift), index_bit);
      const __m256i idx = _mm256_or_si256(_mm256_cvtepu8_epi32(low), high);
      const __m256i p = SignedProducts(Grid8x32(kIq3sGrid, idx), Load256(y[i].qs + 32 * ib),
                                       SignsFromBits(a[i].signs + 4 * ib));
      const int ls = 2 * ((a[i].scales[ib / 2] >> (4 * (ib % 2))) & 0xF) + 1;
      return _mm256_madd_epi16(p, _mm256_set1_epi16(static_cast<int16_t>(ls)));
    };
    __m256i sumi0 = _mm256_setzero_si256(), sumi1 = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ib += 2) {
      sumi0 = _mm256_add_epi32(sumi0, group(ib));
      sumi1 = _mm256_add_epi32(sumi1, group(ib + 1));
    }
    const float d = y[i].d * HalfToFloat(a[i].d);
    acc =
        _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(_mm256_add_epi32(sumi0, sumi1)), acc);
  }
  return HsumF32(acc);
}

// IQ1 grids hold signed bytes in {-1, 0, 1}: the sign of the weight moves onto the activation
// and its magnitude (0 or 1) multiplies it.
float DotIQ1S(int64_t n, const void* w, const void* x) {
  const BlockIQ1S* a = static_cast<const BlockIQ1S*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  const __m128i iq1s_shift = _mm_set_epi32(9, 6, 3, 0);
  __m256 acc = _mm256_setzero_ps();
  float acc_delta = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi_delta = 0;
    const auto group = [&](int ib) {
      const uint8_t* qs = a[i].qs + 4 * ib;
      const int qh = a[i].qh[ib];
      // Index l: qs[l] | (bits 3l..3l+2 of qh) << 8.
      const __m128i high =
          _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32(qh << 8), iq1s_shift), _mm_set1_epi32(0x700));
      const __m256i q = Grid4x64(kIq1sGrid, _mm_or_si128(BytesToI32(qs), high));
      const __m256i p = SignedProducts(_mm256_sign_epi8(q, q), Load256(y[i].qs + 32 * ib), q);
      const int ls = 2 * ((qh >> 12) & 7) + 1;
      // Branch-free: the sign bit is data.
      sumi_delta += (1 - 2 * (qh >> 15)) * ls * (y[i].bsums[2 * ib] + y[i].bsums[2 * ib + 1]);
      return _mm256_madd_epi16(p, _mm256_set1_epi16(static_cast<int16_t>(ls)));
    };
    __m256i sumi0 = _mm256_setzero_si256(), sumi1 = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ib += 2) {
      sumi0 = _mm256_add_epi32(sumi0, group(ib));
      sumi1 = _mm256_add_epi32(sumi1, group(ib + 1));
    }
    const float d = y[i].d * HalfToFloat(a[i].d);
    acc =
        _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(_mm256_add_epi32(sumi0, sumi1)), acc);
    acc_delta += d * static_cast<float>(sumi_delta);
  }
  return HsumF32(acc) + kIq1Delta * acc_delta;
}

float DotIQ1M(int64_t n, const void* w, const void* x) {
  const BlockIQ1M* a = static_cast<const BlockIQ1M*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  const __m256i ones = _mm256_set1_epi8(1);
  const __m256i delta_bits = _mm256_set_epi64x(1 << 15, 1 << 11, 1 << 7, 1 << 3);
  const __m128i iq1m_shift = _mm_set_epi32(12, 8, 4, 0);
  const __m256i scale_shift = _mm256_set_epi64x(9, 3, 6, 0);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    // The 16 sub-block scales 2 * s + 1: s is bits 3t..3t+2 of scale word k for sub-block
    // 4k + t. Shifting the 4 words by 0, 6 (low lane) and 3, 9 (high lane) puts sub-block
    // 2 * ib (elements 0..15 of group ib) in the low lane and 2 * ib + 1 in the high lane, both
    // at int16 position (ib % 2) * 4 + ib / 2.
    uint64_t words;
    std::memcpy(&words, a[i].scales, sizeof(words));
    __m256i block_scales = _mm256_and_si256(
        _mm256_srlv_epi64(_mm256_set1_epi64x(static_cast<int64_t>(words)), scale_shift),
        _mm256_set1_epi16(7));
    block_scales =
        _mm256_add_epi16(_mm256_add_epi16(block_scales, block_scales), _mm256_set1_epi16(1));
    const auto group = [&](int ib, __m256i* delta) {
      const uint8_t* qs = a[i].qs + 4 * ib;
      const uint8_t* qh = a[i].qh + 2 * ib;
      const __m256i scales =
          _mm256_shuffle_epi8(block_scales, BroadcastI16Mask((ib % 2) * 4 + ib / 2));
      // Index l: qs[l] | (bits 4l..4l+2 of the group's 16 qh bits) << 8.
      const __m128i high =
          _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32((qh[0] | (qh[1] << 8)) << 8), iq1m_shift),
                        _mm_set1_epi32(0x700));
      const __m256i q = Grid4x64(kIq1sGrid, _mm_or_si128(BytesToI32(qs), high));
      // Delta sign per 8 elements g: bit 4g + 3 of the group's 16 qh bits, as 8 bytes of -1 or
      // +1 (computed, not branched on: the sign bits are data).
      const __m256i h = _mm256_set1_epi64x(qh[0] | (qh[1] << 8));
      const __m256i negative = _mm256_cmpeq_epi64(_mm256_and_si256(h, delta_bits), delta_bits);
      const __m256i ds = _mm256_or_si256(negative, ones);
      const __m256i y8 = Load256(y[i].qs + 32 * ib);
      *delta = _mm256_add_epi32(*delta, _mm256_madd_epi16(SignedProducts(ones, y8, ds), scales));
      return _mm256_madd_epi16(SignedProducts(_mm256_sign_epi8(q, q), y8, q), scales);
    };
    __m256i sumi0 = _mm256_setzero_si256(), sumi1 = _mm256_setzero_si256();
    __m256i delta0 = _mm256_setzero_si256(), delta1 = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ib += 2) {
      sumi0 = _mm256_add_epi32(sumi0, group(ib, &delta0));
      sumi1 = _mm256_add_epi32(sumi1, group(ib + 1, &delta1));
    }
    const float d = y[i].d * HalfToFloat(IQ1MHalfScale(a[i]));
    const __m256 total = _mm256_fmadd_ps(_mm256_set1_ps(kIq1Delta),
                                         _mm256_cvtepi32_ps(_mm256_add_epi32(delta0, delta1)),
                                         _mm256_cvtepi32_ps(_mm256_add_epi32(sumi0, sumi1)));
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), total, acc);
  }
  return HsumF32(acc);
}

}  // namespace radixlm::kernels::cpu::avx2
