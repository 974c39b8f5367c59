// ggml quantization block layouts, byte-for-byte as stored in GGUF files (ggml-common.h).
//
// All scales named d / dmin are IEEE half (uint16_t bits) except BlockQ8K::d (float).
// A row of n elements of a block type is n / kBlock consecutive blocks (n % kBlock == 0).
// Dequantized value formulas (x = element, i = index inside the block):
//   Q4_0: x = d * ((nibble) - 8)           nibble i<16: qs[i] & 15, i>=16: qs[i-16] >> 4
//   Q4_1: x = d * nibble + m
//   Q5_0: x = d * ((nibble | hbit << 4) - 16)   hbit i = bit i of qh (little-endian u32)
//   Q5_1: x = d * (nibble | hbit << 4) + m
//   Q8_0: x = d * qs[i]
//   Q4_K: 8 sub-blocks of 32 with 6-bit scale/min (packed in scales[12]);
//         x = d * sc[j] * q - dmin * m[j]; q = 4-bit; 64-element chunks share 32 qs bytes
//         (low nibbles: first 32, high nibbles: next 32)
//   Q5_K: as Q4_K plus a 5th bit from qh[32]
//   Q6_K: 16 sub-blocks of 16 with int8 scales; x = d * scales[j] * (q6 - 32)
//   Q8_K: x = d * qs[i]; bsums[j] = sum of qs[16j .. 16j+15] (activation format only)
//   Q2_K: 16 sub-blocks of 16, 4-bit scale and min per sub-block (scales[j] low / high nibble);
//         x = d * sc * q2 - dmin * m. 128-element halves share 32 qs bytes: bits 2k..2k+1 of
//         qs[l] (l < 16 / l >= 16) are elements 32k + l of the half
//   Q3_K: 16 sub-blocks of 16 with 6-bit scales (packed in scales[12], offset 32);
//         x = d * (sc - 32) * (q2 - (hbit ? 0 : 4)); low 2 bits as in Q2_K, the high bit of
//         element 32k + l of half h is bit (4h + k) of hmask[l] (l < 32)
//   IQ4_NL: blocks of 32; x = d * kIq4nlValues[nibble] (nibbles ordered as in Q4_0)
//   MXFP4: blocks of 32 (OCP microscaling FP4); x = 2^(e - 128) * kMxfp4Values[nibble] (the
//         E2M1 values doubled, so the E8M0 exponent e is halved; nibbles ordered as in Q4_0)
//   IQ4_XS: 8 sub-blocks of 32 with 6-bit scales (low 4 bits in scales_l, high 2 in scales_h);
//         x = d * (sc - 32) * kIq4nlValues[nibble]
//   IQ2_XXS / IQ2_XS / IQ2_S / IQ3_XXS / IQ3_S / IQ1_S / IQ1_M: groups of 8 (IQ3: 4) elements
//         are an index into a codebook of magnitudes (iq_grids.h) with separate sign bits
//         (IQ1: values in {-1, 0, 1} plus a shared +-1/8 shift); see the dequantizers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace radixlm::kernels {

inline constexpr int kQK4_0 = 32;
inline constexpr int kQK4_1 = 32;
inline constexpr int kQK5_0 = 32;
inline constexpr int kQK5_1 = 32;
inline constexpr int kQK8_0 = 32;
inline constexpr int kQK_K = 256;       // super-block size of the K-quants
inline constexpr int kKScaleSize = 12;  // packed 6-bit scales+mins of Q4_K / Q5_K
inline constexpr int kQK4_NL = 32;
inline constexpr int kQK_MXFP4 = 32;

struct BlockQ4_0 {
  uint16_t d;              // half
  uint8_t qs[kQK4_0 / 2];  // nibbles
};
static_assert(sizeof(BlockQ4_0) == 18);

struct BlockQ4_1 {
  uint16_t d;  // half
  uint16_t m;  // half
  uint8_t qs[kQK4_1 / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);

struct BlockQ5_0 {
  uint16_t d;     // half
  uint8_t qh[4];  // 5th bits, little-endian uint32
  uint8_t qs[kQK5_0 / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);

struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK5_1 / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);

struct BlockQ8_0 {
  uint16_t d;  // half
  int8_t qs[kQK8_0];
};
static_assert(sizeof(BlockQ8_0) == 34);

struct BlockQ4K {
  uint16_t d;                   // half: super-block scale for the 6-bit scales
  uint16_t dmin;                // half: super-block scale for the 6-bit mins
  uint8_t scales[kKScaleSize];  // 8 scales + 8 mins, 6 bits each
  uint8_t qs[kQK_K / 2];        // 4-bit quants
};
static_assert(sizeof(BlockQ4K) == 144);

struct BlockQ5K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleSize];
  uint8_t qh[kQK_K / 8];  // 5th bits
  uint8_t qs[kQK_K / 2];  // low 4 bits
};
static_assert(sizeof(BlockQ5K) == 176);

struct BlockQ6K {
  uint8_t ql[kQK_K / 2];      // low 4 bits
  uint8_t qh[kQK_K / 4];      // high 2 bits
  int8_t scales[kQK_K / 16];  // 8-bit sub-block scales
  uint16_t d;                 // half
};
static_assert(sizeof(BlockQ6K) == 210);

struct BlockQ8K {
  float d;
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];  // sums of groups of 16 qs
};
static_assert(sizeof(BlockQ8K) == 292);

struct BlockQ2K {
  uint8_t scales[kQK_K / 16];  // low nibble: scale, high nibble: min, per 16 elements
  uint8_t qs[kQK_K / 4];       // 2-bit quants
  uint16_t d;                  // half: super-block scale for the scales
  uint16_t dmin;               // half: super-block scale for the mins
};
static_assert(sizeof(BlockQ2K) == 84);

struct BlockQ3K {
  uint8_t hmask[kQK_K / 8];     // high bit of each quant
  uint8_t qs[kQK_K / 4];        // low 2 bits
  uint8_t scales[kKScaleSize];  // 16 scales, 6 bits each
  uint16_t d;                   // half
};
static_assert(sizeof(BlockQ3K) == 110);

struct BlockIQ4NL {
  uint16_t d;  // half
  uint8_t qs[kQK4_NL / 2];
};
static_assert(sizeof(BlockIQ4NL) == 18);

struct BlockMXFP4 {
  uint8_t e;  // E8M0 shared exponent (2^(e - 127); 255 is NaN in the spec, not produced)
  uint8_t qs[kQK_MXFP4 / 2];
};
static_assert(sizeof(BlockMXFP4) == 17);

struct BlockIQ4XS {
  uint16_t d;                    // half
  uint16_t scales_h;             // high 2 bits of the 8 sub-block scales
  uint8_t scales_l[kQK_K / 64];  // low 4 bits of the 8 sub-block scales
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockIQ4XS) == 136);

struct BlockIQ2XXS {
  uint16_t d;  // half
  // Per 32 elements, two u32: four 8-bit grid indices; then 4 x 7 sign bits and a 4-bit scale.
  uint16_t qs[kQK_K / 8];
};
static_assert(sizeof(BlockIQ2XXS) == 66);

struct BlockIQ2XS {
  uint16_t d;              // half
  uint16_t qs[kQK_K / 8];  // 9-bit grid index + 7 sign bits per 8 elements
  uint8_t scales[kQK_K / 32];
};
static_assert(sizeof(BlockIQ2XS) == 74);

struct BlockIQ2S {
  uint16_t d;              // half
  uint8_t qs[kQK_K / 4];   // first half: low 8 bits of the grid indices; second half: signs
  uint8_t qh[kQK_K / 32];  // high 2 bits of the 4 grid indices of each 32 elements
  uint8_t scales[kQK_K / 32];
};
static_assert(sizeof(BlockIQ2S) == 82);

struct BlockIQ3XXS {
  uint16_t d;  // half
  // 64 grid indices (4 elements each), then per 32 elements a u32 of 4 x 7 sign bits and a
  // 4-bit scale.
  uint8_t qs[3 * kQK_K / 8];
};
static_assert(sizeof(BlockIQ3XXS) == 98);

struct BlockIQ3S {
  uint16_t d;                  // half
  uint8_t qs[kQK_K / 4];       // low 8 bits of the 9-bit grid indices (4 elements each)
  uint8_t qh[kQK_K / 32];      // 9th bits
  uint8_t signs[kQK_K / 8];    // one sign bit per element
  uint8_t scales[kQK_K / 64];  // 4-bit scales of the 32-element groups
};
static_assert(sizeof(BlockIQ3S) == 110);

struct BlockIQ1S {
  uint16_t d;               // half
  uint8_t qs[kQK_K / 8];    // low 8 bits of the 11-bit grid indices
  uint16_t qh[kQK_K / 32];  // per 32 elements: 4 x 3 high index bits, 3-bit scale, shift sign
};
static_assert(sizeof(BlockIQ1S) == 50);

struct BlockIQ1M {
  uint8_t qs[kQK_K / 8];   // low 8 bits of the 11-bit grid indices
  uint8_t qh[kQK_K / 16];  // per 8 elements: 3 high index bits and a shift sign (a nibble)
  // 16 x 3-bit sub-block scales; the top nibbles of the 4 u16 form the half super-block scale.
  uint8_t scales[kQK_K / 32];
};
static_assert(sizeof(BlockIQ1M) == 56);

// Unpacks the j-th (0..7) 6-bit scale and min of a Q4_K / Q5_K block (ggml get_scale_min_k4).
inline void GetScaleMinK4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
  }
}

}  // namespace radixlm::kernels
