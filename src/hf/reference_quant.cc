#include "hf/reference_quant.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "kernels/fp16.h"
#include "kernels/quant_blocks.h"

namespace radixlm::hf {
namespace {

constexpr int kQK = 256;                // values per K-quant super-block
constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS: below it a group is all zero

// ggml's nearest_int: round half to even through the float adder (|x| <= 4194303).
int NearestInt(float x) {
  const float biased = x + 12582912.0f;
  return static_cast<int>(std::bit_cast<uint32_t>(biased) & 0x007fffff) - 0x00400000;
}

float RoundHalfAway(float x) {
  const float a = std::fabs(x);
  const float b = std::floor(a) + std::floor(2 * (a - std::floor(a)));
  return x < 0 ? -b : b;
}

// make_qkx2_quants with nmax 15, rmin -1, rdelta 0.1, 20 steps, squared error: the affine
// scale and min of 32 values (x ~ scale * L + min) of least weighted error among the candidate
// scales. Returns the scale; *neg_min = -min (min <= 0).
float AffineScaleMin(const float* x, const float* weights, uint8_t* L, float* neg_min) {
  constexpr int kN = 32, kNmax = 15, kSteps = 20;
  constexpr float kRmin = -1.0f, kRdelta = 0.1f;
  float min = x[0];
  float max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < kN; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill(L, L + kN, 0);
    *neg_min = -min;
    return 0.0f;
  }
  float iscale = kNmax / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < kN; ++i) {
    const int l = NearestInt(iscale * (x[i] - min));
    L[i] = static_cast<uint8_t>(std::max(0, std::min(kNmax, l)));
    const float diff = scale * L[i] + min - x[i];
    best_error += weights[i] * (diff * diff);
  }
  uint8_t candidate[kN];
  for (int step = 0; step <= kSteps; ++step) {
    iscale = (kRmin + kRdelta * step + kNmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < kN; ++i) {
      const int l = std::max(0, std::min(kNmax, NearestInt(iscale * (x[i] - min))));
      candidate[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      sum_l += w * l;
      sum_l2 += w * l * l;
      sum_xl += w * l * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (!(det > 0)) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (this_min > 0) {
      this_min = 0;
      this_scale = sum_xl / sum_l2;
    }
    float error = 0;
    for (int i = 0; i < kN; ++i) {
      const float diff = this_scale * candidate[i] + this_min - x[i];
      error += weights[i] * (diff * diff);
    }
    if (error < best_error) {
      std::memcpy(L, candidate, kN);
      best_error = error;
      scale = this_scale;
      min = this_min;
    }
  }
  *neg_min = -min;
  return scale;
}

// make_qx_quants with nmax 32, rmse_type 1 (weights x^2), no importance: the symmetric scale
// of 16 values (x ~ scale * (L - 32)) of least weighted error among 19 candidates.
float SymmetricScale(const float* x, int8_t* L) {
  constexpr int kN = 16, kNmax = 32;
  float max = 0;
  float amax = 0;
  for (int i = 0; i < kN; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    std::fill(L, L + kN, 0);
    return 0.0f;
  }
  auto level = [&](float iscale, int i) {
    return std::max(-kNmax, std::min(kNmax - 1, NearestInt(iscale * x[i])));
  };
  float iscale = -kNmax / max;
  float sumlx = 0;
  float suml2 = 0;
  for (int i = 0; i < kN; ++i) {
    const int l = level(iscale, i);
    L[i] = static_cast<int8_t>(l + kNmax);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * l;
    suml2 += w * l * l;
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    iscale = -(kNmax + 0.1f * step) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < kN; ++i) {
      const int l = level(iscale, i);
      const float w = x[i] * x[i];
      sumlx += w * x[i] * l;
      suml2 += w * l * l;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < kN; ++i) L[i] = static_cast<int8_t>(level(iscale, i) + kNmax);
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// ggml's get_scale_min_k4: the j-th 6-bit scale and min of a Q4_K block.
void ScaleMinK4(int j, const uint8_t* q, uint8_t* d, uint8_t* m) {
  if (j < 4) {
    *d = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

void QuantizeBlockQ4K(const float* x, kernels::BlockQ4K* y) {
  uint8_t L[kQK];
  float weights[32];
  float mins[kQK / 32];
  float scales[kQK / 32];
  float max_scale = 0;  // scales are positive, as the min is deducted
  float max_min = 0;
  for (int j = 0; j < kQK / 32; ++j) {
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] = AffineScaleMin(x + 32 * j, weights, L + 32 * j, &mins[j]);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  for (int j = 0; j < kQK / 32; ++j) {
    // ggml stores nearest_int's result in a uint8_t before clamping to 63.
    const uint8_t ls =
        std::min<uint8_t>(63, static_cast<uint8_t>(NearestInt(inv_scale * scales[j])));
    const uint8_t lm = std::min<uint8_t>(63, static_cast<uint8_t>(NearestInt(inv_min * mins[j])));
    if (j < 4) {
      y->scales[j] = ls;
      y->scales[j + 4] = lm;
    } else {
      y->scales[j + 4] = (ls & 0xF) | ((lm & 0xF) << 4);
      y->scales[j - 4] |= ((ls >> 4) << 6);
      y->scales[j] |= ((lm >> 4) << 6);
    }
  }
  y->d = kernels::F32ToF16(max_scale / 63.f);
  y->dmin = kernels::F32ToF16(max_min / 63.f);
  for (int j = 0; j < kQK / 32; ++j) {
    uint8_t sc, m;
    ScaleMinK4(j, y->scales, &sc, &m);
    const float d = kernels::F16ToF32(y->d) * sc;
    if (d == 0) continue;  // the sub-block keeps the levels the search chose
    const float dm = kernels::F16ToF32(y->dmin) * m;
    for (int i = 0; i < 32; ++i) {
      const int l = NearestInt((x[32 * j + i] + dm) / d);
      L[32 * j + i] = static_cast<uint8_t>(std::max(0, std::min(15, l)));
    }
  }
  uint8_t* q = y->qs;
  for (int j = 0; j < kQK; j += 64, q += 32) {
    for (int l = 0; l < 32; ++l) q[l] = L[j + l] | (L[j + l + 32] << 4);
  }
}

void QuantizeBlockQ6K(const float* x, kernels::BlockQ6K* y) {
  int8_t L[kQK];
  float scales[kQK / 16];
  float max_scale = 0;
  float max_abs_scale = 0;
  for (int ib = 0; ib < kQK / 16; ++ib) {
    const float scale = SymmetricScale(x + 16 * ib, L + 16 * ib);
    scales[ib] = scale;
    const float abs_scale = std::fabs(scale);
    if (abs_scale > max_abs_scale) {
      max_abs_scale = abs_scale;
      max_scale = scale;
    }
  }
  if (max_abs_scale < kGroupMaxEps) {
    std::memset(y, 0, sizeof(*y));
    return;
  }
  const float iscale = -128.f / max_scale;
  y->d = kernels::F32ToF16(1 / iscale);
  for (int ib = 0; ib < kQK / 16; ++ib) {
    y->scales[ib] = static_cast<int8_t>(std::min(127, NearestInt(iscale * scales[ib])));
  }
  for (int j = 0; j < kQK / 16; ++j) {
    const float d = kernels::F16ToF32(y->d) * y->scales[j];
    if (d == 0) continue;  // the sub-block keeps the levels the search chose
    for (int i = 0; i < 16; ++i) {
      const int l = std::max(-32, std::min(31, NearestInt(x[16 * j + i] / d)));
      L[16 * j + i] = static_cast<int8_t>(l + 32);
    }
  }
  uint8_t* ql = y->ql;
  uint8_t* qh = y->qh;
  for (int j = 0; j < kQK; j += 128, ql += 64, qh += 32) {
    for (int l = 0; l < 32; ++l) {
      const uint8_t q1 = L[j + l] & 0xF;
      const uint8_t q2 = L[j + l + 32] & 0xF;
      const uint8_t q3 = L[j + l + 64] & 0xF;
      const uint8_t q4 = L[j + l + 96] & 0xF;
      ql[l] = q1 | (q3 << 4);
      ql[l + 32] = q2 | (q4 << 4);
      qh[l] = (L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) |
              ((L[j + l + 96] >> 4) << 6);
    }
  }
}

}  // namespace

void QuantizeRowQ8_0Reference(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b, src += 32, dst += 34) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(src[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const uint16_t dh = kernels::F32ToF16(d);
    std::memcpy(dst, &dh, 2);
    for (int j = 0; j < 32; ++j) {
      dst[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(RoundHalfAway(src[j] * id)));
    }
  }
}

void QuantizeRowQ4KReference(const float* src, uint8_t* dst, int64_t n) {
  auto* blocks = reinterpret_cast<kernels::BlockQ4K*>(dst);
  for (int64_t b = 0; b < n / kQK; ++b) QuantizeBlockQ4K(src + b * kQK, blocks + b);
}

void QuantizeRowQ6KReference(const float* src, uint8_t* dst, int64_t n) {
  auto* blocks = reinterpret_cast<kernels::BlockQ6K*>(dst);
  for (int64_t b = 0; b < n / kQK; ++b) QuantizeBlockQ6K(src + b * kQK, blocks + b);
}

}  // namespace radixlm::hf
