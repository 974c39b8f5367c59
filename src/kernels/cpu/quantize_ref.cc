// Reference quantizers for the 32-element block types (ggml's *_ref schemes) and the scalar
// activation quantizers / half-row conversions (the reference for the SIMD versions).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/isa.h"
#include "kernels/cpu/lowbit_impl.h"
#include "kernels/cpu/quant_impl.h"
#include "kernels/fp16.h"

namespace radixlm::kernels::cpu {
namespace {

// Value with the largest magnitude (keeps its sign), and the magnitude.
inline void SignedAbsMax(const float* x, int n, float* max_signed, float* amax) {
  float best = 0.0f, best_abs = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (std::fabs(x[j]) > best_abs) {
      best_abs = std::fabs(x[j]);
      best = x[j];
    }
  }
  *max_signed = best;
  *amax = best_abs;
}

inline void MinMax(const float* x, int n, float* mn, float* mx) {
  float lo = x[0], hi = x[0];
  for (int j = 1; j < n; ++j) {
    lo = std::min(lo, x[j]);
    hi = std::max(hi, x[j]);
  }
  *mn = lo;
  *mx = hi;
}

}  // namespace

// The largest |x| of a block sets the exponent so that it lands in the top levels (4..6 of
// E2M1); each value takes the nearest level (the first on ties), as ggml's reference does.
void QuantizeRefMXFP4(const float* x, BlockMXFP4* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK_MXFP4; ++i, x += kQK_MXFP4) {
    float amax = 0.0f;
    for (int j = 0; j < kQK_MXFP4; ++j) amax = std::max(amax, std::fabs(x[j]));
    const uint8_t e =
        amax > 0.0f ? static_cast<uint8_t>(std::floor(std::log2(amax)) - 2 + 127) : uint8_t{0};
    const float d = E8M0HalfToFloat(e);
    auto nearest = [&](float v) {
      int best = 0;
      float best_err = std::fabs(kMxfp4Values[0] * d - v);
      for (int k = 1; k < 16; ++k) {
        const float err = std::fabs(kMxfp4Values[k] * d - v);
        if (err < best_err) {
          best = k;
          best_err = err;
        }
      }
      return best;
    };
    y[i].e = e;
    for (int j = 0; j < kQK_MXFP4 / 2; ++j) {
      y[i].qs[j] =
          static_cast<uint8_t>(nearest(x[j]) | (nearest(x[j + kQK_MXFP4 / 2]) << 4));
    }
  }
}

// Symmetric 4-bit: d = max / -8 so the extreme value maps to -8 exactly; q = x/d + 8.
void QuantizeRefQ4_0(const float* x, BlockQ4_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK4_0; ++b, x += kQK4_0) {
    float max, amax;
    SignedAbsMax(x, kQK4_0, &max, &amax);
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = F32ToF16(d);
    for (int j = 0; j < kQK4_0 / 2; ++j) {
      const int q0 = std::min(15, static_cast<int>(x[j] * id + 8.5f));
      const int q1 = std::min(15, static_cast<int>(x[j + kQK4_0 / 2] * id + 8.5f));
      y[b].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

void QuantizeRefQ4_1(const float* x, BlockQ4_1* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK4_1; ++b, x += kQK4_1) {
    float mn, mx;
    MinMax(x, kQK4_1, &mn, &mx);
    const float d = (mx - mn) / 15.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = F32ToF16(d);
    y[b].m = F32ToF16(mn);
    for (int j = 0; j < kQK4_1 / 2; ++j) {
      const int q0 = std::clamp(static_cast<int>((x[j] - mn) * id + 0.5f), 0, 15);
      const int q1 = std::clamp(static_cast<int>((x[j + kQK4_1 / 2] - mn) * id + 0.5f), 0, 15);
      y[b].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

void QuantizeRefQ5_0(const float* x, BlockQ5_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK5_0; ++b, x += kQK5_0) {
    float max, amax;
    SignedAbsMax(x, kQK5_0, &max, &amax);
    const float d = max / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = F32ToF16(d);
    uint32_t qh = 0;
    for (int j = 0; j < kQK5_0 / 2; ++j) {
      const int q0 = std::min(31, static_cast<int>(x[j] * id + 16.5f));
      const int q1 = std::min(31, static_cast<int>(x[j + kQK5_0 / 2] * id + 16.5f));
      y[b].qs[j] = static_cast<uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
      qh |= static_cast<uint32_t>((q0 & 0x10) >> 4) << j;
      qh |= static_cast<uint32_t>((q1 & 0x10) >> 4) << (j + kQK5_0 / 2);
    }
    std::memcpy(y[b].qh, &qh, sizeof(qh));
  }
}

void QuantizeRefQ5_1(const float* x, BlockQ5_1* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK5_1; ++b, x += kQK5_1) {
    float mn, mx;
    MinMax(x, kQK5_1, &mn, &mx);
    const float d = (mx - mn) / 31.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = F32ToF16(d);
    y[b].m = F32ToF16(mn);
    uint32_t qh = 0;
    for (int j = 0; j < kQK5_1 / 2; ++j) {
      const int q0 = std::clamp(static_cast<int>((x[j] - mn) * id + 0.5f), 0, 31);
      const int q1 = std::clamp(static_cast<int>((x[j + kQK5_1 / 2] - mn) * id + 0.5f), 0, 31);
      y[b].qs[j] = static_cast<uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
      qh |= static_cast<uint32_t>((q0 & 0x10) >> 4) << j;
      qh |= static_cast<uint32_t>((q1 & 0x10) >> 4) << (j + kQK5_1 / 2);
    }
    std::memcpy(y[b].qh, &qh, sizeof(qh));
  }
}

namespace scalar {

void QuantizeQ8_0(const float* src, BlockQ8_0* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK8_0; ++b, src += kQK8_0) {
    float amax = 0.0f;
    for (int j = 0; j < kQK8_0; ++j) amax = std::max(amax, std::fabs(src[j]));
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    dst[b].d = F32ToF16(d);
    for (int j = 0; j < kQK8_0; ++j) {
      dst[b].qs[j] = static_cast<int8_t>(std::nearbyint(src[j] * id));
    }
  }
}

void QuantizeQ8K(const float* src, BlockQ8K* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, src += kQK_K) {
    float amax = 0.0f;
    for (int j = 0; j < kQK_K; ++j) amax = std::max(amax, std::fabs(src[j]));
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    dst[b].d = amax != 0.0f ? 1.0f / id : 0.0f;
    for (int j = 0; j < kQK_K; ++j) {
      dst[b].qs[j] = static_cast<int8_t>(std::nearbyint(src[j] * id));
    }
    for (int g = 0; g < kQK_K / 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += dst[b].qs[g * 16 + j];
      dst[b].bsums[g] = static_cast<int16_t>(sum);
    }
  }
}

void F16ToF32Row(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = F16ToF32(src[i]);
}
void F32ToF16Row(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = F32ToF16(src[i]);
}
void Bf16ToF32Row(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = Bf16ToF32(src[i]);
}
void F32ToBf16Row(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = F32ToBf16(src[i]);
}

}  // namespace scalar
}  // namespace radixlm::kernels::cpu
