#include "kernels/packed_codebook.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/iq_grids.h"
#include "kernels/fp16.h"
#include "kernels/quant_blocks.h"
#include "util/check.h"

namespace radixlm::kernels {
namespace {

using gguf::GgmlType;

constexpr size_t kIq3xxsBlockBytes = 192;  // per group and 32 columns: indices, then words

uint32_t SignScaleWord(const uint8_t* blk, int lane) {
  uint32_t aux;
  std::memcpy(&aux, blk + 128 + 4 * lane, 4);
  return aux;
}

}  // namespace

bool IsCodebookPackable(GgmlType type) {
  if (type != GgmlType::kIQ3_XXS) return false;
  const PackedGemmPath path = ActivePackedGemmPath();
  return path == PackedGemmPath::kAvx512Vnni || path == PackedGemmPath::kAmx;
}

std::unique_ptr<PackedWeights> PackCodebookWeights(const WeightMatrix& w, ThreadPool* pool) {
  RADIXLM_CHECK(w.type == GgmlType::kIQ3_XXS) << "not a packed codebook type";
  RADIXLM_CHECK(w.cols % kQK_K == 0) << "IQ3_XXS columns must be whole super-blocks";
  auto p = std::make_unique<PackedWeights>();
  p->source_type = w.type;
  p->rows = w.rows;
  p->cols = w.cols;
  p->groups = (w.rows + 15) / 16;
  p->act_block = 256;  // Q8_K, as the dot kernels quantize for IQ3_XXS
  p->scale_form = ScaleForm::kIq3Xxs;
  p->quant_bytes = kIq3xxsBlockBytes;
  p->super_bytes = 32;
  const int64_t nb = w.cols / 32;
  p->group_bytes = (p->quant_bytes * nb + p->super_bytes * (nb / 8) + 63) / 64 * 64;
  p->stream_bytes = p->group_bytes / nb;
  p->data = AllocPacked(p->group_bytes * static_cast<size_t>(p->groups));  // zeroed padding
  const auto* src = static_cast<const uint8_t*>(w.data);
  ParallelFor(pool, p->groups, 16, [&](int64_t g0, int64_t g1, int) {
    for (int64_t g = g0; g < g1; ++g) {
      for (int r = 0; r < 16 && g * 16 + r < w.rows; ++r) {
        const auto* row = reinterpret_cast<const BlockIQ3XXS*>(src + (g * 16 + r) * w.row_bytes);
        for (int64_t b = 0; b < nb; ++b) {
          const BlockIQ3XXS& sb = row[b / 8];
          const int j = static_cast<int>(b % 8);
          auto* dst = const_cast<uint8_t*>(p->Block(g, b));
          for (int c = 0; c < 8; ++c) dst[16 * c + r] = sb.qs[8 * j + c];
          std::memcpy(dst + 128 + 4 * r, sb.qs + kQK_K / 4 + 4 * j, 4);
          if (j == 0) std::memcpy(const_cast<uint8_t*>(p->Supers(g, b)) + 2 * r, &sb.d, 2);
        }
      }
    }
  });
  return p;
}

int CodebookWeight(const PackedWeights& w, int64_t group, int64_t block, int lane, int k) {
  const uint8_t* blk = w.Block(group, block);
  const int c = k / 4;
  const int mag = static_cast<int>((cpu::kIq3xxsGrid[blk[16 * c + lane]] >> (8 * (k % 4))) & 255);
  const uint32_t aux = SignScaleWord(blk, lane);
  const int signs = cpu::kIqSigns[(aux >> (7 * (k / 8))) & 127];
  return (signs >> (k % 8)) & 1 ? -mag : mag;
}

int CodebookBlockScale(const PackedWeights& w, int64_t group, int64_t block, int lane) {
  return 2 * static_cast<int>(SignScaleWord(w.Block(group, block), lane) >> 28) + 1;
}

float CodebookOutScale(const PackedWeights&) { return 0.25f; }

void CodebookReferenceGroups(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens,
                             int64_t g0, int64_t g1, float* y, int64_t y_stride) {
  const float out_scale = CodebookOutScale(w);
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = g0 * 16; r < std::min(w.rows, g1 * 16); ++r) {
      const int64_t g = r / 16;
      const int lane = static_cast<int>(r % 16);
      float acc = 0.0f;
      for (int64_t s = 0; s < a.nb / 8; ++s) {
        int32_t isum = 0;
        for (int64_t b = 8 * s; b < 8 * s + 8; ++b) {
          const int8_t* xq = a.qs + t * a.stride + b * 32;
          int32_t dot = 0;
          for (int k = 0; k < 32; ++k) dot += CodebookWeight(w, g, b, lane, k) * xq[k];
          isum += CodebookBlockScale(w, g, b, lane) * dot;
        }
        uint16_t h;
        std::memcpy(&h, w.Supers(g, 8 * s) + 2 * lane, 2);
        acc = std::fma(static_cast<float>(isum), F16ToF32(h) * a.dx[t * a.nb + 8 * s], acc);
      }
      y[t * y_stride + r] = out_scale * acc;
    }
  }
}

}  // namespace radixlm::kernels
