// AVX2 dot products of the codebook types (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S,
// IQ1_M) with Q8_K activations. Each group's grid entry is loaded as bytes (4 x 8 or 8 x 4 per
// 32 elements), the signs are applied to the activations (vpsignb), and vpmaddubsw multiplies
// the unsigned magnitudes with them; sub-block scales multiply the int16 pair sums exactly.
// The group decoders are in iquant_avx2.h (shared with the multi-row kernels).
#include <array>

#include "kernels/cpu/iquant_avx2.h"

namespace radixlm::kernels::cpu::avx2 {
namespace {

// Unsigned magnitudes q times the activations y with signs s applied: 16 int16 pair sums.
inline __m256i SignedProducts(__m256i q, __m256i y, __m256i s) {
  return _mm256_maddubs_epi16(q, _mm256_sign_epi8(y, s));
}

// IQ1_M's grid with its delta folded in: entry (sign << 11) | k holds 8 * (grid[k] + delta) =
// 8 * grid[k] + 1 (sign 0) or - 1 (sign 1) per byte, a nonzero int8. Indexed by qs | nibble << 8
// (the nibble's bits 0..2 extend the grid index, bit 3 is the delta's sign), one gather gives a
// group's 8 values with their delta.
const uint64_t* Iq1mScaledGrid() {
  static const std::array<uint64_t, 4096> table = [] {
    std::array<uint64_t, 4096> t{};
    for (int sign = 0; sign < 2; ++sign) {
      for (int k = 0; k < 2048; ++k) {
        uint64_t entry = 0;
        for (int j = 0; j < 8; ++j) {
          const int g = static_cast<int8_t>(kIq1sGrid[k] >> (8 * j));
          const int v = 8 * g + (sign ? -1 : 1);
          entry |= static_cast<uint64_t>(static_cast<uint8_t>(v)) << (8 * j);
        }
        t[(sign << 11) | k] = entry;
      }
    }
    return t;
  }();
  return table.data();
}

}  // namespace

float DotIQ2XXS(int64_t n, const void* w, const void* x) {
  return DotIqRow<Iq2xxsDecoder>(n, w, x);
}

float DotIQ2XS(int64_t n, const void* w, const void* x) { return DotIqRow<Iq2xsDecoder>(n, w, x); }

float DotIQ2S(int64_t n, const void* w, const void* x) { return DotIqRow<Iq2sDecoder>(n, w, x); }

float DotIQ3XXS(int64_t n, const void* w, const void* x) {
  return DotIqRow<Iq3xxsDecoder>(n, w, x);
}

float DotIQ3S(int64_t n, const void* w, const void* x) { return DotIqRow<Iq3sDecoder>(n, w, x); }

// IQ1 grids hold signed bytes in {-1, 0, 1}: the sign of the weight moves onto the activation
// and its magnitude (0 or 1) multiplies it.
float DotIQ1S(int64_t n, const void* w, const void* x) {
  const BlockIQ1S* a = static_cast<const BlockIQ1S*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  const __m128i iq1s_shift = _mm_set_epi32(9, 6, 3, 0);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    // Per group ib (qh[ib]): scale ls = 2 * bits 12..14 + 1 and the delta's sign (bit 15), all 8
    // at once; the delta term sum_ib +-ls * (sum of the group's 32 activations) from the bsums.
    const __m128i qh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a[i].qh));
    const __m128i ls =
        _mm_add_epi16(_mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(qh, 12), _mm_set1_epi16(7)), 1),
                      _mm_set1_epi16(1));
    const __m128i negative = _mm_srai_epi16(qh, 15);
    const __m128i signed_ls = _mm_sub_epi16(_mm_xor_si128(ls, negative), negative);
    const __m256i delta =
        _mm256_madd_epi16(_mm256_set_m128i(_mm_unpackhi_epi16(signed_ls, signed_ls),
                                           _mm_unpacklo_epi16(signed_ls, signed_ls)),
                          Load256(y[i].bsums));
    const __m256i scales = _mm256_broadcastsi128_si256(ls);
    const auto group = [&](int ib) {
      const uint8_t* qs = a[i].qs + 4 * ib;
      // Index l: qs[l] | (bits 3l..3l+2 of qh) << 8.
      const __m128i high = _mm_and_si128(
          _mm_srlv_epi32(_mm_set1_epi32(a[i].qh[ib] << 8), iq1s_shift), _mm_set1_epi32(0x700));
      const __m256i q = Grid4x64(kIq1sGrid, _mm_or_si128(BytesToI32(qs), high));
      const __m256i p = SignedProducts(_mm256_sign_epi8(q, q), Load256(y[i].qs + 32 * ib), q);
      return _mm256_madd_epi16(p, _mm256_shuffle_epi8(scales, BroadcastI16Mask(ib)));
    };
    __m256i sumi0 = _mm256_setzero_si256(), sumi1 = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ib += 2) {
      sumi0 = _mm256_add_epi32(sumi0, group(ib));
      sumi1 = _mm256_add_epi32(sumi1, group(ib + 1));
    }
    const float d = y[i].d * HalfToFloat(a[i].d);
    const __m256 total = _mm256_fmadd_ps(_mm256_set1_ps(kIq1Delta), _mm256_cvtepi32_ps(delta),
                                         _mm256_cvtepi32_ps(_mm256_add_epi32(sumi0, sumi1)));
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), total, acc);
  }
  return HsumF32(acc);
}

float DotIQ1M(int64_t n, const void* w, const void* x) {
  const BlockIQ1M* a = static_cast<const BlockIQ1M*>(w);
  const BlockQ8K* y = static_cast<const BlockQ8K*>(x);
  static_assert(kIq1Delta == 0.125f, "the kernel scales grid values by 1 / kIq1Delta = 8");
  const uint64_t* grid = Iq1mScaledGrid();
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
    // The 32 indices into the scaled grid, qs[l] | (qh nibble l) << 8, computed 8 at a time
    // into memory; each group then loads its 4.
    alignas(32) int32_t index[32];
    {
      const __m128i qh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a[i].qh));
      const __m128i m15 = _mm_set1_epi8(15);
      const __m128i lo = _mm_and_si128(qh, m15);
      const __m128i hi = _mm_and_si128(_mm_srli_epi16(qh, 4), m15);
      const __m128i high[2] = {_mm_unpacklo_epi8(lo, hi), _mm_unpackhi_epi8(lo, hi)};
      for (int k = 0; k < 4; ++k) {
        const __m128i q8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(a[i].qs + 8 * k));
        const __m128i h8 = k % 2 == 0 ? high[k / 2] : _mm_unpackhi_epi64(high[k / 2], high[k / 2]);
        const __m256i idx = _mm256_or_si256(_mm256_cvtepu8_epi32(q8),
                                            _mm256_slli_epi32(_mm256_cvtepu8_epi32(h8), 8));
        _mm256_store_si256(reinterpret_cast<__m256i*>(index + 8 * k), idx);
      }
    }
    const auto group = [&](int ib) {
      const __m256i scales =
          _mm256_shuffle_epi8(block_scales, BroadcastI16Mask((ib % 2) * 4 + ib / 2));
      const __m256i q8 =
          Grid4x64(grid, _mm_load_si128(reinterpret_cast<const __m128i*>(index + 4 * ib)));
      const __m256i p = SignedProducts(_mm256_sign_epi8(q8, q8), Load256(y[i].qs + 32 * ib), q8);
      return _mm256_madd_epi16(p, scales);
    };
    __m256i sumi0 = _mm256_setzero_si256(), sumi1 = _mm256_setzero_si256();
    for (int ib = 0; ib < kQK_K / 32; ib += 2) {
      sumi0 = _mm256_add_epi32(sumi0, group(ib));
      sumi1 = _mm256_add_epi32(sumi1, group(ib + 1));
    }
    const float d = y[i].d * HalfToFloat(IQ1MHalfScale(a[i]));
    acc =
        _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(_mm256_add_epi32(sumi0, sumi1)), acc);
  }
  return kIq1Delta * HsumF32(acc);  // the sums are of 8 * (grid + delta)
}

}  // namespace radixlm::kernels::cpu::avx2
