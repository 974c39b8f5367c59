// Kernels of the low-bit weight types (Q2_K, Q3_K and the IQ family): dequantizers and dot
// products, per ISA (internal to the kernels module; dispatched by quant.cc and dot.cc, compared
// with each other by the tests).
//
// Activations (dot.h): IQ4_NL and MXFP4 pair with Q8_0 (as in ggml), every other type here with
// Q8_K.
// Every dot sums each super-block's (or block's) products exactly in integers and scales the
// integer sum in float, so the ISA paths differ only in float summation order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/quant_blocks.h"

namespace radixlm::kernels::cpu {

// Element-order dequantizers (ggml's dequantize_row_* order and float arithmetic).
void DequantizeQ2K(const BlockQ2K* x, float* y, int64_t n);
void DequantizeQ3K(const BlockQ3K* x, float* y, int64_t n);
void DequantizeIQ4NL(const BlockIQ4NL* x, float* y, int64_t n);
void DequantizeIQ4XS(const BlockIQ4XS* x, float* y, int64_t n);
void DequantizeMXFP4(const BlockMXFP4* x, float* y, int64_t n);
void DequantizeIQ2XXS(const BlockIQ2XXS* x, float* y, int64_t n);
void DequantizeIQ2XS(const BlockIQ2XS* x, float* y, int64_t n);
void DequantizeIQ2S(const BlockIQ2S* x, float* y, int64_t n);
void DequantizeIQ3XXS(const BlockIQ3XXS* x, float* y, int64_t n);
void DequantizeIQ3S(const BlockIQ3S* x, float* y, int64_t n);
void DequantizeIQ1S(const BlockIQ1S* x, float* y, int64_t n);
void DequantizeIQ1M(const BlockIQ1M* x, float* y, int64_t n);

// The 16 E2M1 values of MXFP4, doubled (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives, times 2):
// integers, so a block's dot with Q8_0 activations is an exact integer sum.
inline constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// Half the value of an E8M0 exponent byte, 2^(e - 128) (the doubled levels' scale), exactly:
// e < 2 gives the subnormals 2^-128 and 2^-127. e = 255 (NaN in the spec) gives 2^127.
inline float E8M0HalfToFloat(uint8_t e) {
  const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// The 16 signed 6-bit sub-block scales of a Q3_K block (already minus 32).
inline void UnpackQ3KScales(const uint8_t* packed, int8_t* scales) {
  for (int j = 0; j < 16; ++j) {
    const int low = j < 8 ? packed[j] & 0xF : packed[j - 8] >> 4;
    const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
    scales[j] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
}

// The half super-block scale of an IQ1_M block: the top nibbles of its 4 scale words.
inline uint16_t IQ1MHalfScale(const BlockIQ1M& b) {
  uint16_t sc[4];
  for (int k = 0; k < 4; ++k) {
    sc[k] = static_cast<uint16_t>(b.scales[2 * k] | (b.scales[2 * k + 1] << 8));
  }
  return static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) |
                               (sc[3] & 0xF000));
}

#define RADIXLM_DECLARE_LOWBIT_DOTS                         \
  float DotQ2K(int64_t n, const void* w, const void* x);    \
  float DotQ3K(int64_t n, const void* w, const void* x);    \
  float DotIQ4NL(int64_t n, const void* w, const void* x);  \
  float DotIQ4XS(int64_t n, const void* w, const void* x);  \
  float DotMXFP4(int64_t n, const void* w, const void* x);  \
  float DotIQ2XXS(int64_t n, const void* w, const void* x); \
  float DotIQ2XS(int64_t n, const void* w, const void* x);  \
  float DotIQ2S(int64_t n, const void* w, const void* x);   \
  float DotIQ3XXS(int64_t n, const void* w, const void* x); \
  float DotIQ3S(int64_t n, const void* w, const void* x);   \
  float DotIQ1S(int64_t n, const void* w, const void* x);   \
  float DotIQ1M(int64_t n, const void* w, const void* x);

#define RADIXLM_DECLARE_IQ_ROWS_OF(T)                                                 \
  void Dot4##T(int64_t n, const void* w, const void* x, size_t x_stride, float* out); \
  void Dot8##T(int64_t n, const void* w, const void* x, size_t x_stride, float* out);
#define RADIXLM_DECLARE_IQ_ROWS      \
  RADIXLM_DECLARE_IQ_ROWS_OF(IQ3XXS) \
  RADIXLM_DECLARE_IQ_ROWS_OF(IQ3S)   \
  RADIXLM_DECLARE_IQ_ROWS_OF(IQ2XXS) \
  RADIXLM_DECLARE_IQ_ROWS_OF(IQ2XS)  \
  RADIXLM_DECLARE_IQ_ROWS_OF(IQ2S)   \
  RADIXLM_DECLARE_IQ_ROWS_OF(IQ1S)   \
  RADIXLM_DECLARE_IQ_ROWS_OF(IQ1M)

namespace scalar {
RADIXLM_DECLARE_LOWBIT_DOTS
}  // namespace scalar

// Compiled with -mavx2 -mfma -mf16c (RADIXLM_KERNELS_X86); call only if CpuHasAvx2().
namespace avx2 {
RADIXLM_DECLARE_LOWBIT_DOTS
// One weight row against 4 activation rows (x + j * x_stride): out[j] bit for bit the
// single-row kernel's result (dot.h, VecDot4Fn).
void Dot4Q2K(int64_t n, const void* w, const void* x, size_t x_stride, float* out);
void Dot4Q3K(int64_t n, const void* w, const void* x, size_t x_stride, float* out);
void Dot4IQ4XS(int64_t n, const void* w, const void* x, size_t x_stride, float* out);
void Dot4IQ4NL(int64_t n, const void* w, const void* x, size_t x_stride, float* out);  // Q8_0 x
void Dot4MXFP4(int64_t n, const void* w, const void* x, size_t x_stride, float* out);  // Q8_0 x
// The codebook types against 4 and 8 Q8_K rows (dot.h, VecDot4Fn and VecDot8Q8KFn).
RADIXLM_DECLARE_IQ_ROWS
}  // namespace avx2

// Compiled with AVX-512 F/BW/VL/DQ (RADIXLM_KERNELS_AVX512); call only if CpuHasAvx512(). The
// codebook types against 4 and 8 Q8_K rows, bit for bit avx2's single-row kernels.
namespace avx512 {
RADIXLM_DECLARE_IQ_ROWS
}  // namespace avx512

#undef RADIXLM_DECLARE_LOWBIT_DOTS
#undef RADIXLM_DECLARE_IQ_ROWS
#undef RADIXLM_DECLARE_IQ_ROWS_OF

}  // namespace radixlm::kernels::cpu
