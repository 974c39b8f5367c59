// Scalar reference dot products of the low-bit types. Per super-block (IQ4_NL: per block of 32)
// the products are summed exactly in integers, then scaled once in float by
// (weight scale * activation scale), as the SIMD paths do.
#include <cstring>

#include "kernels/cpu/iq_grids.h"
#include "kernels/cpu/lowbit_impl.h"
#include "kernels/fp16.h"

namespace radixlm::kernels::cpu::scalar {
namespace {

inline int GridByte(uint64_t entry, int j) { return static_cast<int>((entry >> (8 * j)) & 0xFF); }

// sum_j grid[j] * (+-y[j]) over 8 elements, sign bit j of `signs` negating element j.
inline int SignedGridDot8(uint64_t grid, uint8_t signs, const int8_t* y) {
  int s = 0;
  for (int j = 0; j < 8; ++j) {
    const int v = GridByte(grid, j) * y[j];
    s += (signs >> j) & 1 ? -v : v;
  }
  return s;
}

}  // namespace

float DotQ2K(int64_t n, const void* w, const void* x) {
  const BlockQ2K* a = static_cast<const BlockQ2K*>(w);
  const BlockQ8K* b = static_cast<const BlockQ8K*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int summ = 0;
    for (int j = 0; j < 16; ++j) summ += (a[i].scales[j] >> 4) * b[i].bsums[j];
    int sumi = 0, is = 0;
    const uint8_t* q = a[i].qs;
    const int8_t* y = b[i].qs;
    for (int half = 0; half < 2; ++half, q += 32) {
      for (int shift = 0; shift < 8; shift += 2) {
        for (int part = 0; part < 2; ++part, y += 16) {
          int s = 0;
          for (int l = 0; l < 16; ++l) s += ((q[16 * part + l] >> shift) & 3) * y[l];
          sumi += (a[i].scales[is++] & 0xF) * s;
        }
      }
    }
    sum += (b[i].d * F16ToF32(a[i].d)) * static_cast<float>(sumi) -
           (b[i].d * F16ToF32(a[i].dmin)) * static_cast<float>(summ);
  }
  return sum;
}

float DotQ3K(int64_t n, const void* w, const void* x) {
  const BlockQ3K* a = static_cast<const BlockQ3K*>(w);
  const BlockQ8K* b = static_cast<const BlockQ8K*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int8_t scales[16];
    UnpackQ3KScales(a[i].scales, scales);
    int sumi = 0, is = 0;
    const uint8_t* q = a[i].qs;
    const uint8_t* hm = a[i].hmask;
    const int8_t* y = b[i].qs;
    uint8_t m = 1;
    for (int half = 0; half < 2; ++half, q += 32) {
      for (int shift = 0; shift < 8; shift += 2, m = static_cast<uint8_t>(m << 1)) {
        for (int part = 0; part < 2; ++part, y += 16) {
          int s = 0;
          for (int l = 16 * part; l < 16 * part + 16; ++l) {
            s += (((q[l] >> shift) & 3) - (hm[l] & m ? 0 : 4)) * y[l - 16 * part];
          }
          sumi += scales[is++] * s;
        }
      }
    }
    sum += (b[i].d * F16ToF32(a[i].d)) * static_cast<float>(sumi);
  }
  return sum;
}

float DotIQ4NL(int64_t n, const void* w, const void* x) {
  const BlockIQ4NL* a = static_cast<const BlockIQ4NL*>(w);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK4_NL; ++i) {
    int sumi = 0;
    for (int j = 0; j < 16; ++j) {
      sumi += kIq4nlValues[a[i].qs[j] & 0xF] * b[i].qs[j];
      sumi += kIq4nlValues[a[i].qs[j] >> 4] * b[i].qs[j + 16];
    }
    sum += (F16ToF32(a[i].d) * F16ToF32(b[i].d)) * static_cast<float>(sumi);
  }
  return sum;
}

// ggml's order: the activation's scale times the weight's, times the block's integer sum.
float DotMXFP4(int64_t n, const void* w, const void* x) {
  const BlockMXFP4* a = static_cast<const BlockMXFP4*>(w);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_MXFP4; ++i) {
    int sumi = 0;
    for (int j = 0; j < 16; ++j) {
      sumi += kMxfp4Values[a[i].qs[j] & 0xF] * b[i].qs[j];
      sumi += kMxfp4Values[a[i].qs[j] >> 4] * b[i].qs[j + 16];
    }
    sum += (F16ToF32(b[i].d) * E8M0HalfToFloat(a[i].e)) * static_cast<float>(sumi);
  }
  return sum;
}

float DotIQ4XS(int64_t n, const void* w, const void* x) {
  const BlockIQ4XS* a = static_cast<const BlockIQ4XS*>(w);
  const BlockQ8K* b = static_cast<const BlockQ8K*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi = 0;
    const uint8_t* qs = a[i].qs;
    const int8_t* y = b[i].qs;
    for (int ib = 0; ib < kQK_K / 32; ++ib, qs += 16, y += 32) {
      const int ls = ((a[i].scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) |
                     (((a[i].scales_h >> (2 * ib)) & 3) << 4);
      int s = 0;
      for (int j = 0; j < 16; ++j) {
        s += kIq4nlValues[qs[j] & 0xF] * y[j] + kIq4nlValues[qs[j] >> 4] * y[j + 16];
      }
      sumi += (ls - 32) * s;
    }
    sum += (b[i].d * F16ToF32(a[i].d)) * static_cast<float>(sumi);
  }
  return sum;
}

// IQ2_XXS / IQ2_XS / IQ2_S: an element is d * (2 * ls + 1) / 8 * grid * sign, so the integer
// sum is over (2 * ls + 1) * grid * sign * y and the float factor is d_w * d_x / 8.
float DotIQ2XXS(int64_t n, const void* w, const void* x) {
  const BlockIQ2XXS* a = static_cast<const BlockIQ2XXS*>(w);
  const BlockQ8K* b = static_cast<const BlockQ8K*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi = 0;
    const int8_t* y = b[i].qs;
    for (int ib = 0; ib < kQK_K / 32; ++ib) {
      uint32_t aux[2];
      std::memcpy(aux, a[i].qs + 4 * ib, sizeof(aux));
      int s = 0;
      for (int l = 0; l < 4; ++l, y += 8) {
        const uint8_t index = static_cast<uint8_t>(aux[0] >> (8 * l));
        s += SignedGridDot8(kIq2xxsGrid[index], kIqSigns[(aux[1] >> (7 * l)) & 127], y);
      }
      sumi += (2 * static_cast<int>(aux[1] >> 28) + 1) * s;
    }
    sum += (b[i].d * F16ToF32(a[i].d)) * 0.125f * static_cast<float>(sumi);
  }
  return sum;
}

float DotIQ2XS(int64_t n, const void* w, const void* x) {
  const BlockIQ2XS* a = static_cast<const BlockIQ2XS*>(w);
  const BlockQ8K* b = static_cast<const BlockQ8K*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi = 0;
    const int8_t* y = b[i].qs;
    for (int ib = 0; ib < kQK_K / 32; ++ib) {
      int s[2] = {0, 0};
      for (int l = 0; l < 4; ++l, y += 8) {
        const uint16_t q = a[i].qs[4 * ib + l];
        s[l / 2] += SignedGridDot8(kIq2xsGrid[q & 511], kIqSigns[q >> 9], y);
      }
      sumi += (2 * (a[i].scales[ib] & 0xF) + 1) * s[0] + (2 * (a[i].scales[ib] >> 4) + 1) * s[1];
    }
    sum += (b[i].d * F16ToF32(a[i].d)) * 0.125f * static_cast<float>(sumi);
  }
  return sum;
}

float DotIQ2S(int64_t n, const void* w, const void* x) {
  const BlockIQ2S* a = static_cast<const BlockIQ2S*>(w);
  const BlockQ8K* b = static_cast<const BlockQ8K*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi = 0;
    const int8_t* y = b[i].qs;
    const uint8_t* qs = a[i].qs;
    const uint8_t* signs = a[i].qs + kQK_K / 8;
    for (int ib = 0; ib < kQK_K / 32; ++ib, qs += 4, signs += 4) {
      int s[2] = {0, 0};
      for (int l = 0; l < 4; ++l, y += 8) {
        const int index = qs[l] | ((a[i].qh[ib] << (8 - 2 * l)) & 0x300);
        s[l / 2] += SignedGridDot8(kIq2sGrid[index], signs[l], y);
      }
      sumi += (2 * (a[i].scales[ib] & 0xF) + 1) * s[0] + (2 * (a[i].scales[ib] >> 4) + 1) * s[1];
    }
    sum += (b[i].d * F16ToF32(a[i].d)) * 0.125f * static_cast<float>(sumi);
  }
  return sum;
}

// IQ3_XXS: an element is d * (2 * ls + 1) / 4 * grid * sign.
float DotIQ3XXS(int64_t n, const void* w, const void* x) {
  const BlockIQ3XXS* a = static_cast<const BlockIQ3XXS*>(w);
  const BlockQ8K* b = static_cast<const BlockQ8K*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi = 0;
    const int8_t* y = b[i].qs;
    const uint8_t* qs = a[i].qs;
    const uint8_t* scales_and_signs = a[i].qs + kQK_K / 4;
    for (int ib = 0; ib < kQK_K / 32; ++ib, qs += 8) {
      uint32_t aux;
      std::memcpy(&aux, scales_and_signs + 4 * ib, sizeof(aux));
      int s = 0;
      for (int l = 0; l < 4; ++l, y += 8) {
        const uint64_t grid = kIq3xxsGrid[qs[2 * l]] | uint64_t{kIq3xxsGrid[qs[2 * l + 1]]} << 32;
        s += SignedGridDot8(grid, kIqSigns[(aux >> (7 * l)) & 127], y);
      }
      sumi += (2 * static_cast<int>(aux >> 28) + 1) * s;
    }
    sum += (b[i].d * F16ToF32(a[i].d)) * 0.25f * static_cast<float>(sumi);
  }
  return sum;
}

// IQ3_S: an element is d * (2 * sc + 1) * grid * sign.
float DotIQ3S(int64_t n, const void* w, const void* x) {
  const BlockIQ3S* a = static_cast<const BlockIQ3S*>(w);
  const BlockQ8K* b = static_cast<const BlockQ8K*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi = 0;
    const int8_t* y = b[i].qs;
    const uint8_t* qs = a[i].qs;
    const uint8_t* signs = a[i].signs;
    for (int ib = 0; ib < kQK_K / 32; ++ib, qs += 8, signs += 4) {
      const int qh = a[i].qh[ib];
      int s = 0;
      for (int l = 0; l < 4; ++l, y += 8) {
        const int i1 = qs[2 * l] | ((qh << (8 - 2 * l)) & 256);
        const int i2 = qs[2 * l + 1] | ((qh << (7 - 2 * l)) & 256);
        s += SignedGridDot8(kIq3sGrid[i1] | uint64_t{kIq3sGrid[i2]} << 32, signs[l], y);
      }
      sumi += (2 * ((a[i].scales[ib / 2] >> (4 * (ib % 2))) & 0xF) + 1) * s;
    }
    sum += (b[i].d * F16ToF32(a[i].d)) * static_cast<float>(sumi);
  }
  return sum;
}

// IQ1_S: an element is d * (2 * ls + 1) * (grid + delta), delta = +-1/8 per 32 elements: the
// grid part and the delta part (from the activation's 16-element sums) are separate integers.
float DotIQ1S(int64_t n, const void* w, const void* x) {
  const BlockIQ1S* a = static_cast<const BlockIQ1S*>(w);
  const BlockQ8K* b = static_cast<const BlockQ8K*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi = 0, sumi_delta = 0;
    const int8_t* y = b[i].qs;
    const uint8_t* qs = a[i].qs;
    for (int ib = 0; ib < kQK_K / 32; ++ib, qs += 4) {
      const int qh = a[i].qh[ib];
      int s = 0;
      for (int l = 0; l < 4; ++l, y += 8) {
        const uint64_t grid = kIq1sGrid[qs[l] | (((qh >> (3 * l)) & 7) << 8)];
        for (int j = 0; j < 8; ++j) s += static_cast<int8_t>(grid >> (8 * j)) * y[j];
      }
      const int ls = 2 * ((qh >> 12) & 7) + 1;
      const int ysum = b[i].bsums[2 * ib] + b[i].bsums[2 * ib + 1];
      sumi += ls * s;
      sumi_delta += (qh & 0x8000 ? -ls : ls) * ysum;
    }
    sum += (b[i].d * F16ToF32(a[i].d)) *
           (static_cast<float>(sumi) + kIq1Delta * static_cast<float>(sumi_delta));
  }
  return sum;
}

// IQ1_M: as IQ1_S with a scale per 16 elements and a delta sign per 8.
float DotIQ1M(int64_t n, const void* w, const void* x) {
  const BlockIQ1M* a = static_cast<const BlockIQ1M*>(w);
  const BlockQ8K* b = static_cast<const BlockQ8K*>(x);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sumi = 0, sumi_delta = 0;
    const int8_t* y = b[i].qs;
    const uint8_t* qs = a[i].qs;
    const uint8_t* qh = a[i].qh;
    for (int ib = 0; ib < kQK_K / 32; ++ib, qs += 4, qh += 2) {
      const int sc = a[i].scales[2 * (ib / 2)] | (a[i].scales[2 * (ib / 2) + 1] << 8);
      for (int l = 0; l < 4; ++l, y += 8) {
        const int ls = 2 * ((sc >> (6 * (ib % 2) + 3 * (l / 2))) & 7) + 1;
        const int h = qh[l / 2] >> (4 * (l % 2));
        const uint64_t grid = kIq1sGrid[qs[l] | ((h & 7) << 8)];
        int s = 0, ysum = 0;
        for (int j = 0; j < 8; ++j) {
          s += static_cast<int8_t>(grid >> (8 * j)) * y[j];
          ysum += y[j];
        }
        sumi += ls * s;
        sumi_delta += (h & 8 ? -ls : ls) * ysum;
      }
    }
    sum += (b[i].d * F16ToF32(IQ1MHalfScale(a[i]))) *
           (static_cast<float>(sumi) + kIq1Delta * static_cast<float>(sumi_delta));
  }
  return sum;
}

}  // namespace radixlm::kernels::cpu::scalar
