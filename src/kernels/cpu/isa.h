// Per-ISA kernel entry points (internal to the kernels module; tests use them to compare the
// SIMD paths with the scalar reference). The public, dispatched API is in kernels/dot.h,
// kernels/quant.h and kernels/fp16.h.
//
// Every dot function has the VecDotFn signature: (n, weight_row, activation_row) -> float, with
// the activation format of dot.h. The avx2 namespace is compiled with -mavx2 -mfma -mf16c and
// exists only on x86-64 (RADIXLM_KERNELS_X86); call it only if CpuHasAvx2(). The avx512
// namespace additionally needs RADIXLM_KERNELS_AVX512 and CpuHasAvx512().
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/quant_blocks.h"

namespace radixlm::kernels::cpu {

bool CpuHasAvx2();        // AVX2 + FMA + F16C (and OS support, via __builtin_cpu_supports)
bool CpuHasAvx512();      // AVX-512 F + BW + VL + DQ
bool CpuHasAvx512Vnni();  // CpuHasAvx512() and AVX512_VNNI (vpdpbusd)
bool CpuHasAvxVnni();     // CpuHasAvx2() and AVX-VNNI (VEX-encoded vpdpbusd on ymm)
// AMX-TILE + AMX-INT8 in CPUID and the tile data state granted to this process by the kernel
// (Linux arch_prctl ARCH_REQ_XCOMP_PERM, requested on the first call).
bool CpuHasAmxInt8();
bool CpuHasAvx512Bf16();  // CpuHasAvx512() and AVX512_BF16 (vdpbf16ps)
// CpuHasAmxInt8() (tile state granted) and AMX-BF16 (tdpbf16ps).
bool CpuHasAmxBf16();

#define RADIXLM_DECLARE_DOTS                                      \
  float DotF32(int64_t n, const void* w, const void* x);          \
  float DotF16(int64_t n, const void* w, const void* x);          \
  float DotBf16(int64_t n, const void* w, const void* x);         \
  float DotQ4_0(int64_t n, const void* w, const void* x);         \
  float DotQ4_1(int64_t n, const void* w, const void* x);         \
  float DotQ5_0(int64_t n, const void* w, const void* x);         \
  float DotQ5_1(int64_t n, const void* w, const void* x);         \
  float DotQ8_0(int64_t n, const void* w, const void* x);         \
  float DotQ4K(int64_t n, const void* w, const void* x);          \
  float DotQ5K(int64_t n, const void* w, const void* x);          \
  float DotQ6K(int64_t n, const void* w, const void* x);          \
  void QuantizeQ8_0(const float* src, BlockQ8_0* dst, int64_t n); \
  void QuantizeQ8K(const float* src, BlockQ8K* dst, int64_t n);   \
  void F16ToF32Row(const uint16_t* src, float* dst, int64_t n);   \
  void F32ToF16Row(const float* src, uint16_t* dst, int64_t n);   \
  void Bf16ToF32Row(const uint16_t* src, float* dst, int64_t n);  \
  void F32ToBf16Row(const float* src, uint16_t* dst, int64_t n);

namespace scalar {
RADIXLM_DECLARE_DOTS
}  // namespace scalar

namespace avx2 {
RADIXLM_DECLARE_DOTS
// One weight row against 4 activation rows (x + j * x_stride, j < 4): out[j] = dot. Only the
// types that dominate prefill have one; MatMul falls back to single dots for the rest.
void Dot4Q4_0(int64_t n, const void* w, const void* x, size_t x_stride, float* out);
void Dot4Q5_0(int64_t n, const void* w, const void* x, size_t x_stride, float* out);
void Dot4Q8_0(int64_t n, const void* w, const void* x, size_t x_stride, float* out);
void Dot4Q4K(int64_t n, const void* w, const void* x, size_t x_stride, float* out);
void Dot4Q6K(int64_t n, const void* w, const void* x, size_t x_stride, float* out);
// One weight row against 8 Q8_0 activation rows, register-tiled: out[j] = dot. Split
// activations (dot.h, VecDot8Fn): quants of block i of row j at x + j * x_stride + 32 * i,
// x_scales[8 * i + j] = float(d) of that block.
void Dot8Q4_0(int64_t n, const void* w, const void* x_qs, size_t x_stride, const float* x_scales,
              float* out);
void Dot8Q5_0(int64_t n, const void* w, const void* x_qs, size_t x_stride, const float* x_scales,
              float* out);
void Dot8Q8_0(int64_t n, const void* w, const void* x_qs, size_t x_stride, const float* x_scales,
              float* out);
}  // namespace avx2

// AVX-512 specializations exist only for the types where 512-bit registers pay off; the
// dispatcher falls back to avx2 for the rest.
namespace avx512 {
float DotF32(int64_t n, const void* w, const void* x);
float DotF16(int64_t n, const void* w, const void* x);
float DotQ8_0(int64_t n, const void* w, const void* x);
float DotQ4_0(int64_t n, const void* w, const void* x);
float DotQ5_0(int64_t n, const void* w, const void* x);
}  // namespace avx512

#undef RADIXLM_DECLARE_DOTS

}  // namespace radixlm::kernels::cpu
