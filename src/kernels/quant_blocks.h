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
