// The rows the K-quant golden files hold quantized (C and C++): kGoldenRows rows of
// kGoldenCols floats, every value an integer times a power of two (exact in any evaluation
// order), covering the quantizers' branches: signed and one-signed rows, outliers, magnitudes
// from 2^-20 to 2^8, all-zero and constant super-blocks and sub-blocks, near-zero sub-blocks.
#ifndef RADIXLM_TESTS_HF_KQUANT_GOLDEN_ROWS_H_
#define RADIXLM_TESTS_HF_KQUANT_GOLDEN_ROWS_H_

#include <stdint.h>

enum { kGoldenRows = 12, kGoldenCols = 512 };

// A uniform integer in [-32768, 32768) from an LCG step.
static inline int32_t GoldenNext(uint32_t* state) {
  *state = *state * 1664525u + 1013904223u;
  return (int32_t)((*state >> 8) & 0xFFFF) - 32768;
}

static inline void GoldenRows(float* out) {
  uint32_t state = 12345u;
  for (int r = 0; r < kGoldenRows; ++r) {
    float* row = out + r * kGoldenCols;
    for (int c = 0; c < kGoldenCols; ++c) {
      const int32_t u = GoldenNext(&state);
      float x = (float)u / 32768.0f;  // [-1, 1)
      switch (r) {
        case 0:  // uniform, signed
          break;
        case 1: {  // bell-shaped: the sum of four uniforms
          const int32_t s = u + GoldenNext(&state) + GoldenNext(&state) + GoldenNext(&state);
          x = (float)s / 65536.0f;
          break;
        }
        case 2:  // positive only, away from zero (the min > 0 branch)
          x = 0.5f + (float)(u + 32768) / 65536.0f;
          break;
        case 3:  // negative only
          x = -0.25f - (float)(u + 32768) / 131072.0f;
          break;
        case 4:  // small values with one outlier every 37
          x = (c % 37 == 5) ? 8.0f * x + (x < 0 ? -4.0f : 4.0f) : x / 64.0f;
          break;
        case 5:  // large magnitudes
          x *= 256.0f;
          break;
        case 6:  // tiny magnitudes
          x /= 1048576.0f;
          break;
        case 7:  // an all-zero super-block, then one of sub-blocks each constant
          x = c < 256 ? 0.0f : (float)((c / 16) % 5 - 2) / 4.0f;
          break;
        case 8:  // alternating zero and non-zero 16-value groups
          x = ((c / 16) % 2 == 0) ? 0.0f : x;
          break;
        case 9:  // coarse levels (many ties between candidate scales)
          x = (float)(u / 4096) / 8.0f;
          break;
        case 10:  // a ramp per sub-block
          x = (float)((c % 32) - 11) / 16.0f + (float)(c / 32) / 64.0f;
          break;
        default:  // mostly zero with sparse values
          x = (u % 7 == 0) ? x : 0.0f;
          break;
      }
      row[c] = x;
    }
  }
}

#endif  // RADIXLM_TESTS_HF_KQUANT_GOLDEN_ROWS_H_
