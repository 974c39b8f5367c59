// Dispatch of the half-precision row conversions (scalar reference in cpu/quantize_ref.cc,
// F16C/AVX2 in cpu/avx2_rows.cc).
#include "kernels/fp16.h"

#include "kernels/cpu/isa.h"
#include "kernels/dot.h"

namespace radixlm::kernels {
namespace {

bool UseAvx2() {
#if defined(RADIXLM_KERNELS_X86)
  return static_cast<int>(ActiveIsa()) >= static_cast<int>(Isa::kAvx2);
#else
  return false;
#endif
}

}  // namespace

void F16ToF32Row(const uint16_t* src, float* dst, int64_t n) {
#if defined(RADIXLM_KERNELS_X86)
  if (UseAvx2()) return cpu::avx2::F16ToF32Row(src, dst, n);
#endif
  cpu::scalar::F16ToF32Row(src, dst, n);
}

void F32ToF16Row(const float* src, uint16_t* dst, int64_t n) {
#if defined(RADIXLM_KERNELS_X86)
  if (UseAvx2()) return cpu::avx2::F32ToF16Row(src, dst, n);
#endif
  cpu::scalar::F32ToF16Row(src, dst, n);
}

void Bf16ToF32Row(const uint16_t* src, float* dst, int64_t n) {
#if defined(RADIXLM_KERNELS_X86)
  if (UseAvx2()) return cpu::avx2::Bf16ToF32Row(src, dst, n);
#endif
  cpu::scalar::Bf16ToF32Row(src, dst, n);
}

void F32ToBf16Row(const float* src, uint16_t* dst, int64_t n) {
#if defined(RADIXLM_KERNELS_X86)
  if (UseAvx2()) return cpu::avx2::F32ToBf16Row(src, dst, n);
#endif
  cpu::scalar::F32ToBf16Row(src, dst, n);
}

}  // namespace radixlm::kernels
