// Reference quantizers for the K-quant weight types (Q4_K, Q5_K, Q6_K). Unweighted versions of
// ggml's scale searches (make_qkx2_quants / make_qx_quants): good round-trip error, not fast.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/quant_impl.h"
#include "kernels/fp16.h"

namespace radixlm::kernels::cpu {
namespace {

inline int NearestInt(float x) { return static_cast<int>(std::nearbyint(x)); }

// Finds scale > 0 and offset m >= 0 so that x[i] ~= scale * q[i] - m with q in [0, nmax],
// minimizing squared error over a small grid of candidate scales (each refined by least
// squares). Writes q into L.
void AsymmetricSearch(const float* x, int n, int nmax, float* scale_out, float* m_out, uint8_t* L) {
  float mn = std::min(0.0f, *std::min_element(x, x + n));
  const float mx = *std::max_element(x, x + n);
  if (mx <= mn) {
    std::fill(L, L + n, 0);
    *scale_out = 0.0f;
    *m_out = -mn;
    return;
  }
  float best_scale = (mx - mn) / nmax, best_min = mn, best_err = INFINITY;
  uint8_t tmp[kQK_K];
  for (int step = -1; step <= 20; ++step) {
    // step -1: the plain min/max grid; otherwise ggml's rmin=-1, rdelta=0.1 sweep.
    const float iscale = step < 0 ? nmax / (mx - mn) : (-1.0f + 0.1f * step + nmax) / (mx - mn);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0, sum_x = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(NearestInt(iscale * (x[i] - mn)), 0, nmax);
      tmp[i] = static_cast<uint8_t>(l);
      sum_l += l;
      sum_l2 += static_cast<float>(l) * l;
      sum_xl += static_cast<float>(l) * x[i];
      sum_x += x[i];
    }
    const float det = n * sum_l2 - sum_l * sum_l;
    if (det <= 0) continue;
    float scale = (n * sum_xl - sum_x * sum_l) / det;
    float min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (min > 0) {
      min = 0;
      scale = sum_xl / sum_l2;
    }
    float err = 0;
    for (int i = 0; i < n; ++i) {
      const float diff = scale * tmp[i] + min - x[i];
      err += diff * diff;
    }
    if (err < best_err) {
      best_err = err;
      best_scale = scale;
      best_min = min;
    }
  }
  *scale_out = std::max(0.0f, best_scale);
  *m_out = -best_min;
}

// Shared by Q4_K and Q5_K: per 32-element sub-block scale/min quantized to 6 bits against the
// super-block d/dmin. Writes d, dmin (half bits), the packed scales, and L (q in [0, nmax]).
void QuantizeKSuperBlock(const float* x, int nmax, uint16_t* d_out, uint16_t* dmin_out,
                         uint8_t* packed_scales, uint8_t* L) {
  float scales[8], mins[8];
  for (int j = 0; j < 8; ++j) AsymmetricSearch(x + 32 * j, 32, nmax, &scales[j], &mins[j], L);
  const float max_scale = *std::max_element(scales, scales + 8);
  const float max_min = *std::max_element(mins, mins + 8);
  const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  uint8_t ls[8], lm[8];
  for (int j = 0; j < 8; ++j) {
    ls[j] = static_cast<uint8_t>(std::min(63, NearestInt(inv_scale * scales[j])));
    lm[j] = static_cast<uint8_t>(std::min(63, NearestInt(inv_min * mins[j])));
  }
  *d_out = F32ToF16(max_scale / 63.0f);
  *dmin_out = F32ToF16(max_min / 63.0f);
  std::memset(packed_scales, 0, kKScaleSize);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      packed_scales[j] = ls[j];
      packed_scales[j + 4] = lm[j];
    } else {
      packed_scales[j + 4] = static_cast<uint8_t>((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
      packed_scales[j - 4] |= static_cast<uint8_t>((ls[j] >> 4) << 6);
      packed_scales[j] |= static_cast<uint8_t>((lm[j] >> 4) << 6);
    }
  }
  // Requantize against the scales actually stored.
  const float d = F16ToF32(*d_out), dmin = F16ToF32(*dmin_out);
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    GetScaleMinK4(j, packed_scales, &sc, &m);
    const float dl = d * sc, dm = dmin * m;
    for (int i = 0; i < 32; ++i) {
      const int l = dl != 0.0f ? NearestInt((x[32 * j + i] + dm) / dl) : 0;
      L[32 * j + i] = static_cast<uint8_t>(std::clamp(l, 0, nmax));
    }
  }
}

// Symmetric 16-element sub-block for Q6_K: x ~= scale * q, q in [-32, 31].
float SymmetricSearch16(const float* x) {
  float max = 0, amax = 0;
  for (int i = 0; i < 16; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  if (amax == 0) return 0.0f;
  float best_scale = max / -32.0f, best_err = INFINITY;
  for (int step = -9; step <= 9; ++step) {
    const float iscale = -(32.0f + 0.1f * step) / max;
    float sum_xl = 0, sum_l2 = 0;
    int8_t q[16];
    for (int i = 0; i < 16; ++i) {
      q[i] = static_cast<int8_t>(std::clamp(NearestInt(iscale * x[i]), -32, 31));
      sum_xl += x[i] * q[i];
      sum_l2 += static_cast<float>(q[i]) * q[i];
    }
    if (sum_l2 <= 0) continue;
    const float scale = sum_xl / sum_l2;
    float err = 0;
    for (int i = 0; i < 16; ++i) {
      const float diff = scale * q[i] - x[i];
      err += diff * diff;
    }
    if (err < best_err) {
      best_err = err;
      best_scale = scale;
    }
  }
  return best_scale;
}

}  // namespace

void QuantizeRefQ4K(const float* x, BlockQ4K* y, int64_t n) {
  uint8_t L[kQK_K];
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    QuantizeKSuperBlock(x, 15, &y[b].d, &y[b].dmin, y[b].scales, L);
    uint8_t* q = y[b].qs;
    for (int j = 0; j < kQK_K; j += 64, q += 32) {
      for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
    }
  }
}

void QuantizeRefQ5K(const float* x, BlockQ5K* y, int64_t n) {
  uint8_t L[kQK_K];
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    QuantizeKSuperBlock(x, 31, &y[b].d, &y[b].dmin, y[b].scales, L);
    std::memset(y[b].qh, 0, sizeof(y[b].qh));
    uint8_t* ql = y[b].qs;
    uint8_t m1 = 1, m2 = 2;
    for (int j = 0; j < kQK_K; j += 64, ql += 32) {
      for (int l = 0; l < 32; ++l) {
        int l1 = L[j + l], l2 = L[j + l + 32];
        if (l1 > 15) {
          l1 -= 16;
          y[b].qh[l] |= m1;
        }
        if (l2 > 15) {
          l2 -= 16;
          y[b].qh[l] |= m2;
        }
        ql[l] = static_cast<uint8_t>(l1 | (l2 << 4));
      }
      m1 = static_cast<uint8_t>(m1 << 2);
      m2 = static_cast<uint8_t>(m2 << 2);
    }
  }
}

void QuantizeRefQ6K(const float* x, BlockQ6K* y, int64_t n) {
  uint8_t L[kQK_K];
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    float scales[16];
    float max_scale = 0, max_abs = 0;
    for (int j = 0; j < 16; ++j) {
      scales[j] = SymmetricSearch16(x + 16 * j);
      if (std::fabs(scales[j]) > max_abs) {
        max_abs = std::fabs(scales[j]);
        max_scale = scales[j];
      }
    }
    const float iscale = max_abs > 0 ? -128.0f / max_scale : 0.0f;
    y[b].d = F32ToF16(max_abs > 0 ? 1.0f / iscale : 0.0f);
    const float d = F16ToF32(y[b].d);
    for (int j = 0; j < 16; ++j) {
      const int ls = std::clamp(NearestInt(iscale * scales[j]), -128, 127);
      y[b].scales[j] = static_cast<int8_t>(ls);
      const float dl = d * ls;
      for (int i = 0; i < 16; ++i) {
        const int l = dl != 0.0f ? NearestInt(x[16 * j + i] / dl) : 0;
        L[16 * j + i] = static_cast<uint8_t>(std::clamp(l, -32, 31) + 32);
      }
    }
    uint8_t* ql = y[b].ql;
    uint8_t* qh = y[b].qh;
    for (int j = 0; j < kQK_K; j += 128, ql += 64, qh += 32) {
      for (int l = 0; l < 32; ++l) {
        const uint8_t q1 = L[j + l] & 0xF, q2 = L[j + l + 32] & 0xF;
        const uint8_t q3 = L[j + l + 64] & 0xF, q4 = L[j + l + 96] & 0xF;
        ql[l] = static_cast<uint8_t>(q1 | (q3 << 4));
        ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
        qh[l] = static_cast<uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) |
                                     ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
      }
    }
  }
}

}  // namespace radixlm::kernels::cpu
