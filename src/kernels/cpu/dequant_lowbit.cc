// Scalar dequantizers of the low-bit types, in ggml's element order and float arithmetic (each
// value is the same product of the same floats, so the result is bit for bit llama.cpp's).
#include <cstring>

#include "kernels/cpu/iq_grids.h"
#include "kernels/cpu/lowbit_impl.h"
#include "kernels/fp16.h"

namespace radixlm::kernels::cpu {
namespace {

// Byte j of a grid entry.
inline int GridByte(uint64_t entry, int j) { return static_cast<int>((entry >> (8 * j)) & 0xFF); }
inline int GridSByte(uint64_t entry, int j) {
  return static_cast<int8_t>((entry >> (8 * j)) & 0xFF);
}
inline float Sign(uint8_t mask, int j) { return (mask >> j) & 1 ? -1.0f : 1.0f; }

// 8 elements: scale * grid byte * sign.
inline void EmitSigned8(float scale, uint64_t grid, uint8_t signs, float* y) {
  for (int j = 0; j < 8; ++j) y[j] = scale * static_cast<float>(GridByte(grid, j)) * Sign(signs, j);
}

}  // namespace

void DequantizeQ2K(const BlockQ2K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = F16ToF32(x[b].d);
    const float dmin = F16ToF32(x[b].dmin);
    const uint8_t* q = x[b].qs;
    int is = 0;
    for (int half = 0; half < 2; ++half, q += 32) {
      for (int shift = 0; shift < 8; shift += 2) {
        for (int part = 0; part < 2; ++part) {
          const uint8_t sc = x[b].scales[is++];
          const float dl = d * static_cast<float>(sc & 0xF);
          const float ml = dmin * static_cast<float>(sc >> 4);
          for (int l = 0; l < 16; ++l) {
            *y++ = dl * static_cast<float>((q[16 * part + l] >> shift) & 3) - ml;
          }
        }
      }
    }
  }
}

void DequantizeQ3K(const BlockQ3K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = F16ToF32(x[b].d);
    int8_t scales[16];
    UnpackQ3KScales(x[b].scales, scales);
    const uint8_t* q = x[b].qs;
    const uint8_t* hm = x[b].hmask;
    int is = 0;
    uint8_t m = 1;
    for (int half = 0; half < 2; ++half, q += 32) {
      for (int shift = 0; shift < 8; shift += 2, m = static_cast<uint8_t>(m << 1)) {
        for (int part = 0; part < 2; ++part) {
          const float dl = d * static_cast<float>(scales[is++]);
          for (int l = 16 * part; l < 16 * part + 16; ++l) {
            const int v = ((q[l] >> shift) & 3) - (hm[l] & m ? 0 : 4);
            *y++ = dl * static_cast<float>(v);
          }
        }
      }
    }
  }
}

void DequantizeIQ4NL(const BlockIQ4NL* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK4_NL; ++b, y += kQK4_NL) {
    const float d = F16ToF32(x[b].d);
    for (int j = 0; j < kQK4_NL / 2; ++j) {
      y[j] = d * static_cast<float>(kIq4nlValues[x[b].qs[j] & 0xF]);
      y[j + kQK4_NL / 2] = d * static_cast<float>(kIq4nlValues[x[b].qs[j] >> 4]);
    }
  }
}

void DequantizeMXFP4(const BlockMXFP4* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_MXFP4; ++b, y += kQK_MXFP4) {
    const float d = E8M0HalfToFloat(x[b].e);
    for (int j = 0; j < kQK_MXFP4 / 2; ++j) {
      y[j] = static_cast<float>(kMxfp4Values[x[b].qs[j] & 0xF]) * d;
      y[j + kQK_MXFP4 / 2] = static_cast<float>(kMxfp4Values[x[b].qs[j] >> 4]) * d;
    }
  }
}

void DequantizeIQ4XS(const BlockIQ4XS* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = F16ToF32(x[b].d);
    const uint8_t* qs = x[b].qs;
    for (int ib = 0; ib < kQK_K / 32; ++ib, y += 32, qs += 16) {
      const int ls = ((x[b].scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) |
                     (((x[b].scales_h >> (2 * ib)) & 3) << 4);
      const float dl = d * static_cast<float>(ls - 32);
      for (int j = 0; j < 16; ++j) {
        y[j] = dl * static_cast<float>(kIq4nlValues[qs[j] & 0xF]);
        y[j + 16] = dl * static_cast<float>(kIq4nlValues[qs[j] >> 4]);
      }
    }
  }
}

void DequantizeIQ2XXS(const BlockIQ2XXS* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = F16ToF32(x[b].d);
    for (int ib = 0; ib < kQK_K / 32; ++ib) {
      uint32_t aux[2];
      std::memcpy(aux, x[b].qs + 4 * ib, sizeof(aux));
      const float db = d * (0.5f + static_cast<float>(aux[1] >> 28)) * 0.25f;
      for (int l = 0; l < 4; ++l, y += 8) {
        const uint8_t index = static_cast<uint8_t>(aux[0] >> (8 * l));
        EmitSigned8(db, kIq2xxsGrid[index], kIqSigns[(aux[1] >> (7 * l)) & 127], y);
      }
    }
  }
}

void DequantizeIQ2XS(const BlockIQ2XS* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = F16ToF32(x[b].d);
    for (int ib = 0; ib < kQK_K / 32; ++ib) {
      const float db[2] = {d * (0.5f + static_cast<float>(x[b].scales[ib] & 0xF)) * 0.25f,
                           d * (0.5f + static_cast<float>(x[b].scales[ib] >> 4)) * 0.25f};
      for (int l = 0; l < 4; ++l, y += 8) {
        const uint16_t q = x[b].qs[4 * ib + l];
        EmitSigned8(db[l / 2], kIq2xsGrid[q & 511], kIqSigns[q >> 9], y);
      }
    }
  }
}

void DequantizeIQ2S(const BlockIQ2S* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = F16ToF32(x[b].d);
    const uint8_t* qs = x[b].qs;
    const uint8_t* signs = x[b].qs + kQK_K / 8;
    for (int ib = 0; ib < kQK_K / 32; ++ib, qs += 4, signs += 4) {
      const float db[2] = {d * (0.5f + static_cast<float>(x[b].scales[ib] & 0xF)) * 0.25f,
                           d * (0.5f + static_cast<float>(x[b].scales[ib] >> 4)) * 0.25f};
      for (int l = 0; l < 4; ++l, y += 8) {
        const int index = qs[l] | ((x[b].qh[ib] << (8 - 2 * l)) & 0x300);
        EmitSigned8(db[l / 2], kIq2sGrid[index], signs[l], y);
      }
    }
  }
}

void DequantizeIQ3XXS(const BlockIQ3XXS* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = F16ToF32(x[b].d);
    const uint8_t* qs = x[b].qs;
    const uint8_t* scales_and_signs = x[b].qs + kQK_K / 4;
    for (int ib = 0; ib < kQK_K / 32; ++ib, qs += 8) {
      uint32_t aux;
      std::memcpy(&aux, scales_and_signs + 4 * ib, sizeof(aux));
      const float db = d * (0.5f + static_cast<float>(aux >> 28)) * 0.5f;
      for (int l = 0; l < 4; ++l, y += 8) {
        const uint64_t grid = kIq3xxsGrid[qs[2 * l]] | uint64_t{kIq3xxsGrid[qs[2 * l + 1]]} << 32;
        EmitSigned8(db, grid, kIqSigns[(aux >> (7 * l)) & 127], y);
      }
    }
  }
}

void DequantizeIQ3S(const BlockIQ3S* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = F16ToF32(x[b].d);
    const uint8_t* qs = x[b].qs;
    const uint8_t* signs = x[b].signs;
    for (int ib = 0; ib < kQK_K / 32; ++ib, qs += 8, signs += 4) {
      const int sc = (x[b].scales[ib / 2] >> (4 * (ib % 2))) & 0xF;
      const float db = d * static_cast<float>(1 + 2 * sc);
      const int qh = x[b].qh[ib];
      for (int l = 0; l < 4; ++l, y += 8) {
        const int i1 = qs[2 * l] | ((qh << (8 - 2 * l)) & 256);
        const int i2 = qs[2 * l + 1] | ((qh << (7 - 2 * l)) & 256);
        EmitSigned8(db, kIq3sGrid[i1] | uint64_t{kIq3sGrid[i2]} << 32, signs[l], y);
      }
    }
  }
}

void DequantizeIQ1S(const BlockIQ1S* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = F16ToF32(x[b].d);
    const uint8_t* qs = x[b].qs;
    for (int ib = 0; ib < kQK_K / 32; ++ib, qs += 4) {
      const int qh = x[b].qh[ib];
      const float dl = d * static_cast<float>(2 * ((qh >> 12) & 7) + 1);
      const float delta = qh & 0x8000 ? -kIq1Delta : kIq1Delta;
      for (int l = 0; l < 4; ++l, y += 8) {
        const uint64_t grid = kIq1sGrid[qs[l] | (((qh >> (3 * l)) & 7) << 8)];
        for (int j = 0; j < 8; ++j) y[j] = dl * (static_cast<float>(GridSByte(grid, j)) + delta);
      }
    }
  }
}

void DequantizeIQ1M(const BlockIQ1M* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = F16ToF32(IQ1MHalfScale(x[b]));
    const uint8_t* qs = x[b].qs;
    const uint8_t* qh = x[b].qh;
    for (int ib = 0; ib < kQK_K / 32; ++ib, qs += 4, qh += 2) {
      const int sc = x[b].scales[2 * (ib / 2)] | (x[b].scales[2 * (ib / 2) + 1] << 8);
      const float dl[2] = {d * static_cast<float>(2 * ((sc >> (6 * (ib % 2) + 0)) & 7) + 1),
                           d * static_cast<float>(2 * ((sc >> (6 * (ib % 2) + 3)) & 7) + 1)};
      for (int l = 0; l < 4; ++l, y += 8) {
        const int h = qh[l / 2] >> (4 * (l % 2));  // this group's nibble
        const uint64_t grid = kIq1sGrid[qs[l] | ((h & 7) << 8)];
        const float delta = h & 8 ? -kIq1Delta : kIq1Delta;
        for (int j = 0; j < 8; ++j) {
          y[j] = dl[l / 2] * (static_cast<float>(GridSByte(grid, j)) + delta);
        }
      }
    }
  }
}

}  // namespace radixlm::kernels::cpu
