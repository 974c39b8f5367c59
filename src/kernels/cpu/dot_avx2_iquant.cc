// AVX2 dot products of the codebook types (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S,
// IQ1_M) with Q8_K activations. Each group's grid entry is loaded as bytes (4 x 8 or 8 x 4 per
// 32 elements), the signs are applied to the activations (vpsignb), and vpmaddubsw multiplies
// the unsigned magnitudes with them; sub-block scales multiply the int16 pair sums exactly.
// The group decoders are in iquant_avx2.h (shared with the multi-row kernels).
#include <array>

#include "kernels/cpu/iquant_avx2.h"

namespace radixlm::kernels::cpu::avx2 {

// The table of Iq1mScaledGrid (iquant_avx2.h).
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

float DotIQ2XXS(int64_t n, const void* w, const void* x) {
  return DotIqRow<Iq2xxsDecoder>(n, w, x);
}

float DotIQ2XS(int64_t n, const void* w, const void* x) { return DotIqRow<Iq2xsDecoder>(n, w, x); }

float DotIQ2S(int64_t n, const void* w, const void* x) { return DotIqRow<Iq2sDecoder>(n, w, x); }

float DotIQ3XXS(int64_t n, const void* w, const void* x) {
  return DotIqRow<Iq3xxsDecoder>(n, w, x);
}

float DotIQ3S(int64_t n, const void* w, const void* x) { return DotIqRow<Iq3sDecoder>(n, w, x); }

float DotIQ1S(int64_t n, const void* w, const void* x) { return DotIqRow<Iq1sDecoder>(n, w, x); }

float DotIQ1M(int64_t n, const void* w, const void* x) { return DotIqRow<Iq1mDecoder>(n, w, x); }

}  // namespace radixlm::kernels::cpu::avx2
