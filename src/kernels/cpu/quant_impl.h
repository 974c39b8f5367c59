// Scalar per-type dequantizers and reference quantizers (internal; dispatched by quant.cc).
// n is the element count (a multiple of the type's block size).
#pragma once

#include <cstdint>

#include "kernels/quant_blocks.h"

namespace radixlm::kernels::cpu {

void DequantizeQ4_0(const BlockQ4_0* x, float* y, int64_t n);
void DequantizeQ4_1(const BlockQ4_1* x, float* y, int64_t n);
void DequantizeQ5_0(const BlockQ5_0* x, float* y, int64_t n);
void DequantizeQ5_1(const BlockQ5_1* x, float* y, int64_t n);
void DequantizeQ8_0(const BlockQ8_0* x, float* y, int64_t n);
void DequantizeQ4K(const BlockQ4K* x, float* y, int64_t n);
void DequantizeQ5K(const BlockQ5K* x, float* y, int64_t n);
void DequantizeQ6K(const BlockQ6K* x, float* y, int64_t n);
void DequantizeQ8K(const BlockQ8K* x, float* y, int64_t n);

void QuantizeRefQ4_0(const float* x, BlockQ4_0* y, int64_t n);
void QuantizeRefQ4_1(const float* x, BlockQ4_1* y, int64_t n);
void QuantizeRefQ5_0(const float* x, BlockQ5_0* y, int64_t n);
void QuantizeRefQ5_1(const float* x, BlockQ5_1* y, int64_t n);
void QuantizeRefQ4K(const float* x, BlockQ4K* y, int64_t n);
void QuantizeRefQ5K(const float* x, BlockQ5K* y, int64_t n);
void QuantizeRefQ6K(const float* x, BlockQ6K* y, int64_t n);
// ggml's quantize_row_mxfp4_ref: e = floor(log2(amax)) - 2 + 127, each value the nearest level.
void QuantizeRefMXFP4(const float* x, BlockMXFP4* y, int64_t n);

}  // namespace radixlm::kernels::cpu
