// Constant tables of the IQ ("importance") quant formats, shared by the dequantizers and the
// dot kernels. The codebooks are part of the GGUF format (a quant is an index into them); their
// values are ggml's (ggml-common.h), in iq_grids.cc.
#pragma once

#include <array>
#include <cstdint>

namespace radixlm::kernels::cpu {

// Codebooks: entry k is the magnitudes of one group of 8 elements (byte j of the uint64_t is
// element j) or, for the IQ3 types, of 4 elements (byte j of the uint32_t).
extern const uint64_t kIq2xxsGrid[256];  // bytes in {8, 25, 43}
extern const uint64_t kIq2xsGrid[512];   // bytes in {8, 25, 43}
extern const uint64_t kIq2sGrid[1024];   // bytes in {8, 25, 43}
extern const uint32_t kIq3xxsGrid[256];  // bytes in {4, 12, ..., 62}
extern const uint32_t kIq3sGrid[512];    // bytes in {1, 3, ..., 15}
extern const uint64_t kIq1sGrid[2048];   // bytes are int8 in {-1, 0, 1}

// The 16 levels of IQ4_NL / IQ4_XS (a non-uniform 4-bit code).
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// IQ1_S / IQ1_M add +-kIq1Delta to every grid value of a group before scaling.
inline constexpr float kIq1Delta = 0.125f;

// IQ2 / IQ3_XXS store 7 sign bits per 8 elements; the 8th is the parity of the 7 (an even
// number of negatives). kIqSigns[s] is the full 8-bit mask for the 7 stored bits s (bit j set:
// element j is negative).
inline constexpr std::array<uint8_t, 128> kIqSigns = [] {
  std::array<uint8_t, 128> t{};
  for (int s = 0; s < 128; ++s) {
    t[s] = static_cast<uint8_t>(s | ((__builtin_popcount(s) & 1) << 7));
  }
  return t;
}();

}  // namespace radixlm::kernels::cpu
