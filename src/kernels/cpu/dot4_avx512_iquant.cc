// AVX-512 (BW) dots of one weight row of a codebook type (IQ3_XXS, IQ3_S, IQ2_XXS, IQ2_XS,
// IQ2_S, IQ1_S, IQ1_M) against 4 or 8 Q8_K activation rows, bit for bit the AVX2 single-row
// kernels (the dispatched ones at every level from AVX2 up). Two groups share a 512-bit
// register (group ib in the low half, ib + 1 in the high), decoded by iquant_avx2.h's decoders;
// the weights' signs go onto the activations as a byte mask (vpmovb2m, then a masked 0 - y:
// vpsignb's result wherever the magnitude is nonzero), halving the multiply-adds per token of
// the AVX2 multi-row kernels. Folding the two halves of an accumulator gives per int32 lane the
// sum the AVX2 kernels hold (integer sums are exact), and the float steps are theirs.
#include <immintrin.h>

#include "kernels/cpu/iquant_avx2.h"
#include "kernels/cpu/lowbit_impl.h"

namespace radixlm::kernels::cpu::avx512 {
namespace {

using avx2::IqGroup;

// Groups ib and ib + 1 of a block: magnitudes, negative-weight mask, scales.
struct IqGroupPair {
  __m512i mag;
  __mmask64 negative;
  __m512i scale;
};

inline __m512i Join(__m256i lo, __m256i hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

template <class Decoder>
inline IqGroupPair DecodePair(const Decoder& dec, int ib) {
  const IqGroup g0 = dec.Group(ib), g1 = dec.Group(ib + 1);
  return {Join(g0.mag, g1.mag), _mm512_movepi8_mask(Join(g0.sign, g1.sign)),
          Join(g0.scale, g1.scale)};
}

template <class Decoder, int N>
void DotIqRows512(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  using Block = typename Decoder::Block;
  const Block* a = static_cast<const Block*>(w);
  const BlockQ8K* y[N];
  for (int j = 0; j < N; ++j) {
    y[j] = reinterpret_cast<const BlockQ8K*>(static_cast<const uint8_t*>(x) + j * x_stride);
  }
  const __m512i zero = _mm512_setzero_si512();
  const typename Decoder::Tables tables{};
  __m256 acc[N];
  for (int j = 0; j < N; ++j) acc[j] = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const Decoder dec(a[i], tables);
    __m512i sumi[N];
    for (int j = 0; j < N; ++j) sumi[j] = _mm512_setzero_si512();
    for (int ib = 0; ib < kQK_K / 32; ib += 2) {
      const IqGroupPair g = DecodePair(dec, ib);
      for (int j = 0; j < N; ++j) {
        const __m512i q8 = _mm512_loadu_si512(y[j][i].qs + 32 * ib);
        const __m512i signed_y = _mm512_mask_sub_epi8(q8, g.negative, zero, q8);
        sumi[j] = _mm512_add_epi32(
            sumi[j], _mm512_madd_epi16(_mm512_maddubs_epi16(g.mag, signed_y), g.scale));
      }
    }
    // As DotIqRows (iquant_avx2.h), on the folded integer sums.
    const float dw = dec.Scale();
    for (int j = 0; j < N; ++j) {
      const __m256i folded =
          _mm256_add_epi32(_mm512_castsi512_si256(sumi[j]), _mm512_extracti64x4_epi64(sumi[j], 1));
      const float d = y[j][i].d * dw;
      __m256 total = _mm256_cvtepi32_ps(folded);
      if constexpr (Decoder::kHasDelta) {
        total = _mm256_fmadd_ps(_mm256_set1_ps(kIq1Delta),
                                _mm256_cvtepi32_ps(dec.DeltaSums(y[j][i].bsums)), total);
      }
      acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(d), total, acc[j]);
    }
  }
  for (int j = 0; j < N; ++j) out[j] = Decoder::kOutScale * avx2::HsumF32(acc[j]);
}

}  // namespace

#define RADIXLM_DEFINE_IQ_ROWS(T, Decoder)                                             \
  void Dot4##T(int64_t n, const void* w, const void* x, size_t x_stride, float* out) { \
    DotIqRows512<avx2::Decoder, 4>(n, w, x, x_stride, out);                            \
  }                                                                                    \
  void Dot8##T(int64_t n, const void* w, const void* x, size_t x_stride, float* out) { \
    DotIqRows512<avx2::Decoder, 8>(n, w, x, x_stride, out);                            \
  }
RADIXLM_DEFINE_IQ_ROWS(IQ3XXS, Iq3xxsDecoder)
RADIXLM_DEFINE_IQ_ROWS(IQ3S, Iq3sDecoder)
RADIXLM_DEFINE_IQ_ROWS(IQ2XXS, Iq2xxsDecoder)
RADIXLM_DEFINE_IQ_ROWS(IQ2XS, Iq2xsDecoder)
RADIXLM_DEFINE_IQ_ROWS(IQ2S, Iq2sDecoder)
RADIXLM_DEFINE_IQ_ROWS(IQ1S, Iq1sDecoder)
RADIXLM_DEFINE_IQ_ROWS(IQ1M, Iq1mDecoder)
#undef RADIXLM_DEFINE_IQ_ROWS

}  // namespace radixlm::kernels::cpu::avx512
