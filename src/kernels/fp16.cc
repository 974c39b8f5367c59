// Dispatch of the half-precision row conversions (scalar reference in cpu/quantize_ref.cc,
// F16C/AVX2 in cpu/avx2_rows.cc).
#include "kernels/fp16.h"

#include <algorithm>

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

// E5M2 is F16's top byte: widen (shift) or round to it in stack chunks, converting between F16
// and float with the dispatched row functions above.
void E5M2ToF32Row(const uint8_t* src, float* dst, int64_t n) {
  uint16_t half[256];
  for (int64_t i = 0; i < n; i += 256) {
    const int64_t m = std::min<int64_t>(256, n - i);
    for (int64_t j = 0; j < m; ++j) half[j] = static_cast<uint16_t>(src[i + j] << 8);
    F16ToF32Row(half, dst + i, m);
  }
}

void F32ToE5M2Row(const float* src, uint8_t* dst, int64_t n) {
  uint16_t half[256];
  for (int64_t i = 0; i < n; i += 256) {
    const int64_t m = std::min<int64_t>(256, n - i);
    F32ToF16Row(src + i, half, m);
    for (int64_t j = 0; j < m; ++j) {
      // An F16 inf may come from a finite float, which saturates (F32ToE5M2).
      dst[i + j] = (half[j] & 0x7fffu) == 0x7c00u ? F32ToE5M2(src[i + j]) : F16ToE5M2(half[j]);
    }
  }
}

}  // namespace radixlm::kernels
