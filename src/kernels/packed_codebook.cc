#include "kernels/packed_codebook.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/iq_grids.h"
#include "kernels/cpu/lowbit_impl.h"
#include "kernels/fp16.h"
#include "kernels/quant.h"
#include "kernels/quant_blocks.h"
#include "util/check.h"

namespace radixlm::kernels {
namespace {

using gguf::GgmlType;

constexpr const CodebookLayout* kLayouts[] = {&kIq3xxsLayout, &kIq2xxsLayout, &kIq3sLayout,
                                              &kIq2xsLayout,  &kIq2sLayout,   &kIq1sLayout,
                                              &kIq1mLayout};

uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The 4 (IQ3) or 8 (IQ2) magnitudes of a grid entry, each times the sign of its bit in `signs`
// (bit i: element i negative), into q.
void SignedGrid(uint64_t grid, int n, int signs, int8_t* q) {
  for (int i = 0; i < n; ++i) {
    const int mag = static_cast<int>((grid >> (8 * i)) & 255);
    q[i] = static_cast<int8_t>((signs >> i) & 1 ? -mag : mag);
  }
}

void DecodeIq3xxs(const uint8_t* blk, CodebookBlock* out) {
  const uint8_t* qs = blk + 2;
  for (int ib = 0; ib < 8; ++ib) {
    const uint32_t aux = Load32(qs + 64 + 4 * ib);
    for (int l = 0; l < 4; ++l) {
      const int signs = cpu::kIqSigns[(aux >> (7 * l)) & 127];
      for (int h = 0; h < 2; ++h) {
        SignedGrid(cpu::kIq3xxsGrid[qs[8 * ib + 2 * l + h]], 4, signs >> (4 * h),
                   out->q + 32 * ib + 8 * l + 4 * h);
      }
    }
    out->scale[2 * ib] = out->scale[2 * ib + 1] = static_cast<int8_t>(2 * (aux >> 28) + 1);
  }
}

void DecodeIq2xxs(const uint8_t* blk, CodebookBlock* out) {
  for (int ib = 0; ib < 8; ++ib) {
    const uint8_t* idx = blk + 2 + 8 * ib;
    const uint32_t aux = Load32(idx + 4);
    for (int l = 0; l < 4; ++l) {
      SignedGrid(cpu::kIq2xxsGrid[idx[l]], 8, cpu::kIqSigns[(aux >> (7 * l)) & 127],
                 out->q + 32 * ib + 8 * l);
    }
    out->scale[2 * ib] = out->scale[2 * ib + 1] = static_cast<int8_t>(2 * (aux >> 28) + 1);
  }
}

void DecodeIq3s(const uint8_t* blk, CodebookBlock* out) {
  const uint8_t *qs = blk + 2, *qh = blk + 66, *signs = blk + 74, *scales = blk + 106;
  for (int ib = 0; ib < 8; ++ib) {
    for (int c = 0; c < 8; ++c) {
      const int index = qs[8 * ib + c] | (((qh[ib] >> c) & 1) << 8);
      SignedGrid(cpu::kIq3sGrid[index], 4, signs[4 * ib + c / 2] >> (4 * (c % 2)),
                 out->q + 32 * ib + 4 * c);
    }
    const int ls = (scales[ib / 2] >> (4 * (ib % 2))) & 15;
    out->scale[2 * ib] = out->scale[2 * ib + 1] = static_cast<int8_t>(2 * ls + 1);
  }
}

// The two 4-bit scales of a byte (16 columns each) as 2 s + 1.
void HalfScales(uint8_t sc, int8_t* scale) {
  scale[0] = static_cast<int8_t>(2 * (sc & 15) + 1);
  scale[1] = static_cast<int8_t>(2 * (sc >> 4) + 1);
}

void DecodeIq2xs(const uint8_t* blk, CodebookBlock* out) {
  for (int ib = 0; ib < 8; ++ib) {
    for (int l = 0; l < 4; ++l) {
      uint16_t q;
      std::memcpy(&q, blk + 2 + 8 * ib + 2 * l, 2);
      SignedGrid(cpu::kIq2xsGrid[q & 511], 8, cpu::kIqSigns[q >> 9], out->q + 32 * ib + 8 * l);
    }
    HalfScales(blk[66 + ib], out->scale + 2 * ib);
  }
}

void DecodeIq2s(const uint8_t* blk, CodebookBlock* out) {
  const uint8_t *qs = blk + 2, *signs = blk + 34, *qh = blk + 66, *scales = blk + 74;
  for (int ib = 0; ib < 8; ++ib) {
    for (int l = 0; l < 4; ++l) {
      const int index = qs[4 * ib + l] | (((qh[ib] >> (2 * l)) & 3) << 8);
      SignedGrid(cpu::kIq2sGrid[index], 8, signs[4 * ib + l], out->q + 32 * ib + 8 * l);
    }
    HalfScales(scales[ib], out->scale + 2 * ib);
  }
}

// IQ1: the 8 int8 grid values g of an entry as 8 g + shift (shift +-1, the +-1/8 times 8).
void ShiftedGrid(uint64_t grid, int shift, int8_t* q) {
  for (int i = 0; i < 8; ++i) {
    q[i] = static_cast<int8_t>(8 * static_cast<int8_t>(grid >> (8 * i)) + shift);
  }
}

void DecodeIq1s(const uint8_t* blk, CodebookBlock* out) {
  for (int ib = 0; ib < 8; ++ib) {
    uint16_t qh;
    std::memcpy(&qh, blk + 34 + 2 * ib, 2);
    for (int l = 0; l < 4; ++l) {
      const int index = blk[2 + 4 * ib + l] | (((qh >> (3 * l)) & 7) << 8);
      ShiftedGrid(cpu::kIq1sGrid[index], qh & 0x8000 ? -1 : 1, out->q + 32 * ib + 8 * l);
    }
    out->scale[2 * ib] = out->scale[2 * ib + 1] = static_cast<int8_t>(2 * ((qh >> 12) & 7) + 1);
  }
}

void DecodeIq1m(const uint8_t* blk, CodebookBlock* out) {
  for (int ib = 0; ib < 8; ++ib) {
    uint16_t qh, sc;
    std::memcpy(&qh, blk + 32 + 2 * ib, 2);
    std::memcpy(&sc, blk + 48 + 2 * (ib / 2), 2);
    for (int l = 0; l < 4; ++l) {
      const int h = qh >> (4 * l);
      ShiftedGrid(cpu::kIq1sGrid[blk[4 * ib + l] | ((h & 7) << 8)], h & 8 ? -1 : 1,
                  out->q + 32 * ib + 8 * l);
    }
    for (int half = 0; half < 2; ++half) {
      const int ls = (sc >> (6 * (ib % 2) + 3 * half)) & 7;
      out->scale[2 * ib + half] = static_cast<int8_t>(2 * ls + 1);
    }
  }
}

}  // namespace

const CodebookLayout* FindCodebookLayout(GgmlType type) {
  for (const CodebookLayout* l : kLayouts) {
    if (l->type == type) return l;
  }
  return nullptr;
}

bool IsCodebookPackable(GgmlType type) {
  if (FindCodebookLayout(type) == nullptr) return false;
  // Below the avx512 level, the types whose packed GEMM beat their dot kernels at every token
  // count measured (bench/RESULTS.md, "below the avx512 level"): vpmaddubsw's three operations
  // per chunk and token leave the AVX2 kernel level with the 4- and 8-row dots for the others.
  switch (ActivePackedGemmPath()) {
    case PackedGemmPath::kAvx512Vnni:
    case PackedGemmPath::kAmx:
      return true;
    case PackedGemmPath::kAvxVnni:
      return type != GgmlType::kIQ2_XS && type != GgmlType::kIQ1_M;
    case PackedGemmPath::kAvx2:
      return type == GgmlType::kIQ3_XXS || type == GgmlType::kIQ1_S;
    default:
      return false;
  }
}

std::unique_ptr<PackedWeights> PackCodebookWeights(const WeightMatrix& w, ThreadPool* pool) {
  const CodebookLayout* layout = FindCodebookLayout(w.type);
  RADIXLM_CHECK(layout != nullptr) << "not a packed codebook type";
  RADIXLM_CHECK(w.cols % kQK_K == 0) << "codebook columns must be whole super-blocks";
  RADIXLM_CHECK(8 * layout->BlockBytes() + layout->SuperBytes() == 16 * BlockBytes(w.type));
  auto p = std::make_unique<PackedWeights>();
  p->source_type = w.type;
  p->rows = w.rows;
  p->cols = w.cols;
  p->groups = (w.rows + 15) / 16;
  p->act_block = 256;  // Q8_K, as the dot kernels quantize for the codebook types
  p->scale_form = ScaleForm::kCodebook;
  p->quant_bytes = layout->BlockBytes();
  p->super_bytes = layout->SuperBytes();
  const int64_t nb = w.cols / 32;
  p->group_bytes = (p->quant_bytes * nb + p->super_bytes * (nb / 8) + 63) / 64 * 64;
  p->stream_bytes = p->group_bytes / nb;
  p->data = AllocPacked(p->group_bytes * static_cast<size_t>(p->groups));  // zeroed padding
  const auto* src = static_cast<const uint8_t*>(w.data);
  const size_t gguf_bytes = BlockBytes(w.type);
  ParallelFor(pool, p->groups, 16, [&](int64_t g0, int64_t g1, int) {
    for (int64_t g = g0; g < g1; ++g) {
      for (int r = 0; r < 16 && g * 16 + r < w.rows; ++r) {
        const uint8_t* row = src + (g * 16 + r) * w.row_bytes;
        for (int64_t b = 0; b < nb; ++b) {
          const uint8_t* sb = row + (b / 8) * gguf_bytes;
          const int j = static_cast<int>(b % 8);
          auto* blk = const_cast<uint8_t*>(p->Block(g, b));
          for (int f = 0; f < layout->n_block; ++f) {
            const CodebookField& fd = layout->block[f];
            std::memcpy(blk + layout->BlockFieldOffset(f) + fd.width * r,
                        sb + fd.src + fd.stride * j, fd.width);
          }
          if (j != 0) continue;
          auto* sup = const_cast<uint8_t*>(p->Supers(g, b));
          for (int f = 0; f < layout->n_super; ++f) {
            const CodebookField& fd = layout->super[f];
            std::memcpy(sup + layout->SuperFieldOffset(f) + fd.width * r, sb + fd.src, fd.width);
          }
        }
      }
    }
  });
  return p;
}

void UnpackCodebookBlock(const PackedWeights& w, int64_t group, int64_t super, int lane,
                         uint8_t* block) {
  const CodebookLayout* layout = FindCodebookLayout(w.source_type);
  for (int j = 0; j < 8; ++j) {
    const uint8_t* blk = w.Block(group, 8 * super + j);
    for (int f = 0; f < layout->n_block; ++f) {
      const CodebookField& fd = layout->block[f];
      std::memcpy(block + fd.src + fd.stride * j,
                  blk + layout->BlockFieldOffset(f) + fd.width * lane, fd.width);
    }
  }
  const uint8_t* sup = w.Supers(group, 8 * super);
  for (int f = 0; f < layout->n_super; ++f) {
    const CodebookField& fd = layout->super[f];
    std::memcpy(block + fd.src, sup + layout->SuperFieldOffset(f) + fd.width * lane, fd.width);
  }
}

void DecodeCodebookBlock(GgmlType type, const uint8_t* block, CodebookBlock* out) {
  uint16_t h;
  std::memcpy(&h, block, 2);
  if (type == GgmlType::kIQ1_M) h = cpu::IQ1MHalfScale(*reinterpret_cast<const BlockIQ1M*>(block));
  out->d = F16ToF32(h);
  switch (type) {
    case GgmlType::kIQ3_XXS:
      return DecodeIq3xxs(block, out);
    case GgmlType::kIQ2_XXS:
      return DecodeIq2xxs(block, out);
    case GgmlType::kIQ3_S:
      return DecodeIq3s(block, out);
    case GgmlType::kIQ2_XS:
      return DecodeIq2xs(block, out);
    case GgmlType::kIQ2_S:
      return DecodeIq2s(block, out);
    case GgmlType::kIQ1_S:
      return DecodeIq1s(block, out);
    case GgmlType::kIQ1_M:
      return DecodeIq1m(block, out);
    default:
      RADIXLM_CHECK(false) << "not a packed codebook type";
  }
}

void CodebookReferenceGroups(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens,
                             int64_t g0, int64_t g1, float* y, int64_t y_stride) {
  const float out_scale = FindCodebookLayout(w.source_type)->out_scale;
  std::vector<uint8_t> gguf(BlockBytes(w.source_type));
  CodebookBlock cb;
  for (int64_t r = g0 * 16; r < std::min(w.rows, g1 * 16); ++r) {
    const int64_t g = r / 16;
    const int lane = static_cast<int>(r % 16);
    for (int64_t t = 0; t < n_tokens; ++t) {
      float acc = 0.0f;
      for (int64_t s = 0; s < a.nb / 8; ++s) {
        UnpackCodebookBlock(w, g, s, lane, gguf.data());
        DecodeCodebookBlock(w.source_type, gguf.data(), &cb);
        const int8_t* xq = a.qs + t * a.stride + s * 256;
        int32_t isum = 0;
        for (int h = 0; h < 16; ++h) {
          int32_t dot = 0;
          for (int k = 16 * h; k < 16 * h + 16; ++k) dot += cb.q[k] * xq[k];
          isum += cb.scale[h] * dot;
        }
        acc = std::fma(static_cast<float>(isum), cb.d * a.dx[t * a.nb + 8 * s], acc);
      }
      y[t * y_stride + r] = out_scale * acc;
    }
  }
}

}  // namespace radixlm::kernels
