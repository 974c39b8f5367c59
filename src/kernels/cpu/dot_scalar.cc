// Scalar reference dot products. Integer sums per block are exact; each block contributes
// (weight scale * activation scale) * block_sum in float, the same association the SIMD paths
// use, so the paths differ only in float summation order.
#include <cstring>

#include "kernels/cpu/isa.h"
#include "kernels/fp16.h"

namespace radixlm::kernels::cpu::scalar {

float DotF32(int64_t n, const void* w, const void* x) {
  const float* a = static_cast<const float*>(w);
  const float* b = static_cast<const float*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

float DotF16(int64_t n, const void* w, const void* x) {
  const uint16_t* a = static_cast<const uint16_t*>(w);
  const float* b = static_cast<const float*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += F16ToF32(a[i]) * b[i];
  return sum;
}

float DotBf16(int64_t n, const void* w, const void* x) {
  const uint16_t* a = static_cast<const uint16_t*>(w);
  const float* b = static_cast<const float*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += Bf16ToF32(a[i]) * b[i];
  return sum;
}

float DotQ4_0(int64_t n, const void* w, const void* x) {
  const BlockQ4_0* a = static_cast<const BlockQ4_0*>(w);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK8_0; ++i) {
    int sumi = 0;
    for (int j = 0; j < 16; ++j) {
      sumi += ((a[i].qs[j] & 0x0F) - 8) * b[i].qs[j];
      sumi += ((a[i].qs[j] >> 4) - 8) * b[i].qs[j + 16];
    }
    sum += (F16ToF32(a[i].d) * F16ToF32(b[i].d)) * static_cast<float>(sumi);
  }
  return sum;
}

float DotQ4_1(int64_t n, const void* w, const void* x) {
  const BlockQ4_1* a = static_cast<const BlockQ4_1*>(w);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK8_0; ++i) {
    int sumi = 0, sumy = 0;
    for (int j = 0; j < 16; ++j) {
      sumi += (a[i].qs[j] & 0x0F) * b[i].qs[j] + (a[i].qs[j] >> 4) * b[i].qs[j + 16];
      sumy += b[i].qs[j] + b[i].qs[j + 16];
    }
    const float dy = F16ToF32(b[i].d);
    sum += (F16ToF32(a[i].d) * dy) * static_cast<float>(sumi) +
           (F16ToF32(a[i].m) * dy) * static_cast<float>(sumy);
  }
  return sum;
}

float DotQ5_0(int64_t n, const void* w, const void* x) {
  const BlockQ5_0* a = static_cast<const BlockQ5_0*>(w);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK8_0; ++i) {
    uint32_t qh;
    std::memcpy(&qh, a[i].qh, sizeof(qh));
    int sumi = 0;
    for (int j = 0; j < 16; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
      const int h1 = static_cast<int>((qh >> (j + 16)) & 1u) << 4;
      sumi += (((a[i].qs[j] & 0x0F) | h0) - 16) * b[i].qs[j];
      sumi += (((a[i].qs[j] >> 4) | h1) - 16) * b[i].qs[j + 16];
    }
    sum += (F16ToF32(a[i].d) * F16ToF32(b[i].d)) * static_cast<float>(sumi);
  }
  return sum;
}

float DotQ5_1(int64_t n, const void* w, const void* x) {
  const BlockQ5_1* a = static_cast<const BlockQ5_1*>(w);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK8_0; ++i) {
    uint32_t qh;
    std::memcpy(&qh, a[i].qh, sizeof(qh));
    int sumi = 0, sumy = 0;
    for (int j = 0; j < 16; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
      const int h1 = static_cast<int>((qh >> (j + 16)) & 1u) << 4;
      sumi += ((a[i].qs[j] & 0x0F) | h0) * b[i].qs[j];
      sumi += ((a[i].qs[j] >> 4) | h1) * b[i].qs[j + 16];
      sumy += b[i].qs[j] + b[i].qs[j + 16];
    }
    const float dy = F16ToF32(b[i].d);
    sum += (F16ToF32(a[i].d) * dy) * static_cast<float>(sumi) +
           (F16ToF32(a[i].m) * dy) * static_cast<float>(sumy);
  }
  return sum;
}

float DotQ8_0(int64_t n, const void* w, const void* x) {
  const BlockQ8_0* a = static_cast<const BlockQ8_0*>(w);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK8_0; ++i) {
    int sumi = 0;
    for (int j = 0; j < kQK8_0; ++j) sumi += a[i].qs[j] * b[i].qs[j];
    sum += (F16ToF32(a[i].d) * F16ToF32(b[i].d)) * static_cast<float>(sumi);
  }
  return sum;
}

float DotQ4K(int64_t n, const void* w, const void* x) {
  const BlockQ4K* a = static_cast<const BlockQ4K*>(w);
  const BlockQ8K* b = static_cast<const BlockQ8K*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi = 0, summ = 0;
    const uint8_t* q = a[i].qs;
    const int8_t* y = b[i].qs;
    for (int j = 0; j < 8; j += 2, q += 32, y += 64) {
      uint8_t sc0, m0, sc1, m1;
      GetScaleMinK4(j, a[i].scales, &sc0, &m0);
      GetScaleMinK4(j + 1, a[i].scales, &sc1, &m1);
      int s0 = 0, s1 = 0;
      for (int l = 0; l < 32; ++l) {
        s0 += (q[l] & 0xF) * y[l];
        s1 += (q[l] >> 4) * y[l + 32];
      }
      sumi += sc0 * s0 + sc1 * s1;
      summ += m0 * (b[i].bsums[2 * j] + b[i].bsums[2 * j + 1]);
      summ += m1 * (b[i].bsums[2 * j + 2] + b[i].bsums[2 * j + 3]);
    }
    sum += (b[i].d * F16ToF32(a[i].d)) * static_cast<float>(sumi) -
           (b[i].d * F16ToF32(a[i].dmin)) * static_cast<float>(summ);
  }
  return sum;
}

float DotQ5K(int64_t n, const void* w, const void* x) {
  const BlockQ5K* a = static_cast<const BlockQ5K*>(w);
  const BlockQ8K* b = static_cast<const BlockQ8K*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi = 0, summ = 0;
    const uint8_t* q = a[i].qs;
    const uint8_t* qh = a[i].qh;
    const int8_t* y = b[i].qs;
    uint8_t u1 = 1, u2 = 2;
    for (int j = 0; j < 8; j += 2, q += 32, y += 64) {
      uint8_t sc0, m0, sc1, m1;
      GetScaleMinK4(j, a[i].scales, &sc0, &m0);
      GetScaleMinK4(j + 1, a[i].scales, &sc1, &m1);
      int s0 = 0, s1 = 0;
      for (int l = 0; l < 32; ++l) {
        s0 += ((q[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) * y[l];
        s1 += ((q[l] >> 4) + (qh[l] & u2 ? 16 : 0)) * y[l + 32];
      }
      u1 = static_cast<uint8_t>(u1 << 2);
      u2 = static_cast<uint8_t>(u2 << 2);
      sumi += sc0 * s0 + sc1 * s1;
      summ += m0 * (b[i].bsums[2 * j] + b[i].bsums[2 * j + 1]);
      summ += m1 * (b[i].bsums[2 * j + 2] + b[i].bsums[2 * j + 3]);
    }
    sum += (b[i].d * F16ToF32(a[i].d)) * static_cast<float>(sumi) -
           (b[i].d * F16ToF32(a[i].dmin)) * static_cast<float>(summ);
  }
  return sum;
}

float DotQ6K(int64_t n, const void* w, const void* x) {
  const BlockQ6K* a = static_cast<const BlockQ6K*>(w);
  const BlockQ8K* b = static_cast<const BlockQ8K*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const uint8_t* ql = a[i].ql;
    const uint8_t* qh = a[i].qh;
    const int8_t* sc = a[i].scales;
    const int8_t* y = b[i].qs;
    int sumi = 0;
    for (int c = 0; c < kQK_K; c += 128, ql += 64, qh += 32, sc += 8, y += 128) {
      int s[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // per 16-element sub-block of this chunk
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        s[is + 0] += (((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32) * y[l];
        s[is + 2] += (((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32) * y[l + 32];
        s[is + 4] += (((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32) * y[l + 64];
        s[is + 6] += (((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32) * y[l + 96];
      }
      for (int k = 0; k < 8; ++k) sumi += sc[k] * s[k];
    }
    sum += (b[i].d * F16ToF32(a[i].d)) * static_cast<float>(sumi);
  }
  return sum;
}

}  // namespace radixlm::kernels::cpu::scalar
