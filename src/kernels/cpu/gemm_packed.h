// ISA implementations behind kernels/packed_weights.h. The avx512vnni namespace is compiled with
// -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni and exists only where
// RADIXLM_KERNELS_AVX512_VNNI is defined; call it only if CpuHasAvx512Vnni().
#pragma once

#include <cstdint>

#include "kernels/packed_weights.h"

namespace radixlm::kernels::cpu {

// One row of n (multiple of 32) floats -> int8 quants qs[n] (round to nearest even of
// x / d with d = max|x| / 127 per block of 32), dx[n / 32] = d, sum16[2 * (n / 32)] = quant sums
// per 16, dxs[n / 32] = d * (sum of the block's quants).
void QuantizeActivationRowScalar(const float* x, int64_t n, int8_t* qs, float* dx,
                                 int32_t* sum16, float* dxs);

namespace avx512vnni {
void QuantizeActivationRow(const float* x, int64_t n, int8_t* qs, float* dx, int32_t* sum16,
                           float* dxs);
void PackedGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens,
                int64_t g0, int64_t g1, float* y, int64_t y_stride);
}  // namespace avx512vnni

}  // namespace radixlm::kernels::cpu
