// Scalar dequantizers, following ggml's dequantize_row_* element order exactly.
#include <cstring>

#include "kernels/cpu/quant_impl.h"
#include "kernels/fp16.h"

namespace radixlm::kernels::cpu {

void DequantizeQ4_0(const BlockQ4_0* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK4_0; ++b, y += kQK4_0) {
    const float d = F16ToF32(x[b].d);
    for (int j = 0; j < kQK4_0 / 2; ++j) {
      y[j] = static_cast<float>((x[b].qs[j] & 0x0F) - 8) * d;
      y[j + kQK4_0 / 2] = static_cast<float>((x[b].qs[j] >> 4) - 8) * d;
    }
  }
}

void DequantizeQ4_1(const BlockQ4_1* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK4_1; ++b, y += kQK4_1) {
    const float d = F16ToF32(x[b].d);
    const float m = F16ToF32(x[b].m);
    for (int j = 0; j < kQK4_1 / 2; ++j) {
      y[j] = static_cast<float>(x[b].qs[j] & 0x0F) * d + m;
      y[j + kQK4_1 / 2] = static_cast<float>(x[b].qs[j] >> 4) * d + m;
    }
  }
}

void DequantizeQ5_0(const BlockQ5_0* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK5_0; ++b, y += kQK5_0) {
    const float d = F16ToF32(x[b].d);
    uint32_t qh;
    std::memcpy(&qh, x[b].qh, sizeof(qh));
    for (int j = 0; j < kQK5_0 / 2; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
      const int h1 = static_cast<int>((qh >> (j + 16)) & 1u) << 4;
      y[j] = static_cast<float>(((x[b].qs[j] & 0x0F) | h0) - 16) * d;
      y[j + kQK5_0 / 2] = static_cast<float>(((x[b].qs[j] >> 4) | h1) - 16) * d;
    }
  }
}

void DequantizeQ5_1(const BlockQ5_1* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK5_1; ++b, y += kQK5_1) {
    const float d = F16ToF32(x[b].d);
    const float m = F16ToF32(x[b].m);
    uint32_t qh;
    std::memcpy(&qh, x[b].qh, sizeof(qh));
    for (int j = 0; j < kQK5_1 / 2; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
      const int h1 = static_cast<int>((qh >> (j + 16)) & 1u) << 4;
      y[j] = static_cast<float>((x[b].qs[j] & 0x0F) | h0) * d + m;
      y[j + kQK5_1 / 2] = static_cast<float>((x[b].qs[j] >> 4) | h1) * d + m;
    }
  }
}

void DequantizeQ8_0(const BlockQ8_0* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK8_0; ++b, y += kQK8_0) {
    const float d = F16ToF32(x[b].d);
    for (int j = 0; j < kQK8_0; ++j) y[j] = static_cast<float>(x[b].qs[j]) * d;
  }
}

void DequantizeQ4K(const BlockQ4K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = F16ToF32(x[b].d);
    const float dmin = F16ToF32(x[b].dmin);
    const uint8_t* q = x[b].qs;
    for (int j = 0, is = 0; j < kQK_K; j += 64, is += 2, q += 32) {
      uint8_t sc, m;
      GetScaleMinK4(is, x[b].scales, &sc, &m);
      const float d1 = d * sc, m1 = dmin * m;
      GetScaleMinK4(is + 1, x[b].scales, &sc, &m);
      const float d2 = d * sc, m2 = dmin * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
  }
}

void DequantizeQ5K(const BlockQ5K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = F16ToF32(x[b].d);
    const float dmin = F16ToF32(x[b].dmin);
    const uint8_t* ql = x[b].qs;
    const uint8_t* qh = x[b].qh;
    uint8_t u1 = 1, u2 = 2;
    for (int j = 0, is = 0; j < kQK_K; j += 64, is += 2, ql += 32) {
      uint8_t sc, m;
      GetScaleMinK4(is, x[b].scales, &sc, &m);
      const float d1 = d * sc, m1 = dmin * m;
      GetScaleMinK4(is + 1, x[b].scales, &sc, &m);
      const float d2 = d * sc, m2 = dmin * m;
      for (int l = 0; l < 32; ++l) {
        *y++ = d1 * static_cast<float>((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
      }
      for (int l = 0; l < 32; ++l) {
        *y++ = d2 * static_cast<float>((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
      }
      u1 = static_cast<uint8_t>(u1 << 2);
      u2 = static_cast<uint8_t>(u2 << 2);
    }
  }
}

void DequantizeQ6K(const BlockQ6K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = F16ToF32(x[b].d);
    const uint8_t* ql = x[b].ql;
    const uint8_t* qh = x[b].qh;
    const int8_t* sc = x[b].scales;
    for (int c = 0; c < kQK_K; c += 128, y += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l + 0] = d * sc[is + 0] * static_cast<float>(q1);
        y[l + 32] = d * sc[is + 2] * static_cast<float>(q2);
        y[l + 64] = d * sc[is + 4] * static_cast<float>(q3);
        y[l + 96] = d * sc[is + 6] * static_cast<float>(q4);
      }
    }
  }
}

void DequantizeQ8K(const BlockQ8K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, y += kQK_K) {
    for (int j = 0; j < kQK_K; ++j) y[j] = x[b].d * static_cast<float>(x[b].qs[j]);
  }
}

}  // namespace radixlm::kernels::cpu
