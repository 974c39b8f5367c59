// Dot products of one weight row with one activation row, with runtime ISA dispatch.
//
// Each weight type pairs with exactly one activation format (like ggml's vec_dot_type):
//   weight F32, F16, BF16                 <-> activation F32 (plain float row)
//   weight Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,  <-> activation Q8_0 (QuantizeRowQ8_0)
//          IQ4_NL, MXFP4
//     (ggml pairs Q4_1/Q5_1 with Q8_1; here the kernel sums the Q8_0 activations itself)
//   weight Q2_K, Q3_K, Q4_K, Q5_K, Q6_K,  <-> activation Q8_K (QuantizeRowQ8K)
//          IQ4_XS, IQ3_S, IQ3_XXS, IQ2_S, IQ2_XS, IQ2_XXS, IQ1_S, IQ1_M
// ActivationType() tells which; RowBytes(ActivationType(w), n) sizes the activation row.
//
// Dispatch: at first use the best compiled-in implementation the CPU supports is chosen per
// weight type (AVX-512 for the float types, whose AVX2 code has no multi-row kernel; else
// AVX2+FMA+F16C; else scalar). The scalar code is the reference; SIMD paths agree with it up
// to float summation order (tests check this). Environment variable
// RADIXLM_ISA=scalar|avx2|avx_vnni|avx512|amx caps the level (for benchmarking and debugging).
// From the avx2 level up, quantized model weights of the packable types bypass these kernels
// (packed_weights.h, IsPackableType: Q2_K, Q3_K, IQ4_NL, IQ4_XS and MXFP4 among them, and
// the codebook types packed_codebook.h lays out at the levels its IsCodebookPackable names);
// the other low-bit types (the codebook types at the other levels) run here, reading the weights in
// their GGUF bytes (from AVX2 up with 4- and 8-row kernels: VecDot4Fn, VecDot8Q8KFn).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/ggml_types.h"

namespace radixlm::kernels {

using gguf::GgmlType;

// The activation format a weight type is dotted with (kF32, kQ8_0 or kQ8_K).
// Requires a weight type listed above.
GgmlType ActivationType(GgmlType weight_type);

// sum_i w[i] * x[i] over n elements (n a multiple of the weight type's block size).
// weight_row: n elements of weight_type; x: n elements in ActivationType(weight_type).
using VecDotFn = float (*)(int64_t n, const void* weight_row, const void* x);

// The dispatched implementation for a weight type (resolved once; cheap to call repeatedly).
// Returns nullptr for an unsupported weight type. Hoist it out of hot loops.
VecDotFn GetVecDotFn(GgmlType weight_type);

// One weight row against 4 activation rows at once (x_j = x + j * x_stride bytes, j < 4):
// out[j] = dot(weight_row, x_j), bit-identical to GetVecDotFn(weight_type)(n, weight_row, x_j)
// (same per-block arithmetic, accumulation order and final reduction; batch invariance), but
// the weight block is unpacked once for all 4 rows (prefill / batched decode). nullptr where no
// such kernel matches the dispatched VecDotFn (e.g. AVX-512 or scalar single-row kernels):
// callers then use VecDotFn per row.
using VecDot4Fn = void (*)(int64_t n, const void* weight_row, const void* x, size_t x_stride,
                           float* out);
VecDot4Fn GetVecDot4Fn(GgmlType weight_type);

// One weight row against 8 activation rows, register-tiled (batched decode / prefill): out[j]
// bit-identical to GetVecDotFn(weight_type)(n, weight_row, x_j) for the Q8_0 row x_j, like
// VecDot4Fn. Only for weight types with Q8_0 activations, which it takes split (SplitQ8_0x8):
// the int8 quants of block i of row j at x_qs + j * x_stride + 32 * i (32-byte aligned rows
// avoid cache-line-crossing loads) and the half scale d of that block as float at
// x_scales[8 * i + j] (block-major; converted once per MatMul instead of once per weight row).
// nullptr where no such kernel matches the dispatched VecDotFn; callers then use VecDot4Fn /
// VecDotFn.
using VecDot8Fn = void (*)(int64_t n, const void* weight_row, const void* x_qs, size_t x_stride,
                           const float* x_scales, float* out);
VecDot8Fn GetVecDot8Fn(GgmlType weight_type);
// Splits 8 Q8_0 rows of n elements (row j at x + j * x_stride bytes) into VecDot8Fn's layout:
// quants of block i of row j to qs + j * qs_stride + 32 * i, float(d) to scales[8 * i + j].
void SplitQ8_0x8(int64_t n, const void* x, size_t x_stride, int8_t* qs, size_t qs_stride,
                 float* scales);

// One weight row against 8 Q8_K activation rows in VecDot4Fn's layout (x_j = x + j * x_stride,
// j < 8): out[j] bit-identical to GetVecDotFn(weight_type)(n, weight_row, x_j), like VecDot4Fn.
// For the codebook types (IQ3 / IQ2 / IQ1), whose weight decode (grid lookups) costs more than
// the products: each weight group is decoded once for 8 tokens. nullptr where no such kernel
// matches the dispatched VecDotFn; callers then use VecDot4Fn / VecDotFn.
using VecDot8Q8KFn = void (*)(int64_t n, const void* weight_row, const void* x, size_t x_stride,
                              float* out);
VecDot8Q8KFn GetVecDot8Q8KFn(GgmlType weight_type);

// Convenience: GetVecDotFn(weight_type)(n, weight_row, x).
float VecDot(GgmlType weight_type, int64_t n, const void* weight_row, const void* x);

// kAvxVnni: AVX2 plus AVX-VNNI (ymm vpdpbusd, used by the packed GEMM; the dot kernels are
// AVX2's). kAmx: AVX-512 plus AMX-INT8 tiles (used by the packed GEMM for 16-token tiles).
// An AVX-512 CPU is at kAvx512 or above whether or not it has AVX-VNNI.
enum class Isa { kScalar = 0, kAvx2 = 1, kAvxVnni = 2, kAvx512 = 3, kAmx = 4 };
const char* IsaName(Isa isa);
// The highest level compiled in and supported by this CPU (after the RADIXLM_ISA cap).
Isa ActiveIsa();
// True if code for `isa` was compiled into this binary and the CPU can run it.
bool IsaAvailable(Isa isa);
// The implementation at exactly `isa` level for a weight type, or nullptr if that level has no
// specialized kernel for it (or is unavailable). For tests and benchmarks comparing paths.
VecDotFn GetVecDotFnForIsa(GgmlType weight_type, Isa isa);
// The multi-row kernels MatMul runs at exactly `isa` level (where the dispatched single-row
// kernel is AVX2's), or nullptr; each is bit for bit GetVecDotFnForIsa(weight_type, kAvx2) per
// row. From kAvx512 up the codebook types have AVX-512 ones (two groups per 512-bit register).
VecDot4Fn GetVecDot4FnForIsa(GgmlType weight_type, Isa isa);
VecDot8Q8KFn GetVecDot8Q8KFnForIsa(GgmlType weight_type, Isa isa);

}  // namespace radixlm::kernels
