#include "kernels/packed_weights.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/iq_grids.h"
#include "kernels/cpu/isa.h"
#include "kernels/cpu/lowbit_impl.h"
#include "kernels/dot.h"
#include "kernels/fp16.h"
#include "kernels/matmul.h"
#include "kernels/packed_codebook.h"
#include "kernels/quant_blocks.h"
#include "util/check.h"

namespace radixlm::kernels {
namespace {

using gguf::GgmlType;

// One 32-column block of one weight row as integers u (0..255; the lookup types: the 4-bit
// level index) and per-sub-block d (and m). K-quants also keep their scales' GGUF form: the
// super-block's halves hd (and hmin), and the block's 6-bit sc and mn (Q4_K / Q5_K) or the two
// 16-column sub-blocks' int8 scales (Q6_K); IQ4_XS its half hd and 6-bit ls, MXFP4 its
// exponent byte e.
struct UnpackedBlock {
  uint8_t u[32];
  float d[2];
  float m[2];
  uint16_t hd = 0, hmin = 0;
  int8_t sc[2] = {0, 0};
  uint8_t mn = 0;
  uint8_t ls = 0, e = 0;
  uint8_t sub_scales[2] = {0, 0};  // Q3_K: the sub-blocks' 6-bit ls; Q2_K: sc | mn << 4
};

// u = v + 128 of each level v of the lookup types (packed_weights.h).
struct Levels {
  uint8_t u[16];
  constexpr explicit Levels(const int8_t* v) : u{} {
    for (int i = 0; i < 16; ++i) u[i] = static_cast<uint8_t>(v[i] + 128);
  }
};
constexpr Levels kIq4nlLevels(cpu::kIq4nlValues);
constexpr Levels kMxfp4Levels(cpu::kMxfp4Values);

uint8_t Nibble(const uint8_t* qs, int i) { return i < 16 ? qs[i] & 15 : qs[i - 16] >> 4; }

void UnpackBlock(GgmlType type, const uint8_t* row, int64_t b, UnpackedBlock* out) {
  out->m[0] = out->m[1] = 0.0f;
  switch (type) {
    case GgmlType::kQ4_0: {
      const auto& blk = reinterpret_cast<const BlockQ4_0*>(row)[b];
      for (int i = 0; i < 32; ++i) out->u[i] = Nibble(blk.qs, i);
      out->d[0] = out->d[1] = F16ToF32(blk.d);
      return;
    }
    case GgmlType::kQ4_1: {
      const auto& blk = reinterpret_cast<const BlockQ4_1*>(row)[b];
      for (int i = 0; i < 32; ++i) out->u[i] = Nibble(blk.qs, i);
      out->d[0] = out->d[1] = F16ToF32(blk.d);
      out->m[0] = out->m[1] = F16ToF32(blk.m);
      return;
    }
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1: {
      const uint8_t* qs;
      const uint8_t* qh;
      uint16_t d, m = 0;
      if (type == GgmlType::kQ5_0) {
        const auto& blk = reinterpret_cast<const BlockQ5_0*>(row)[b];
        qs = blk.qs, qh = blk.qh, d = blk.d;
      } else {
        const auto& blk = reinterpret_cast<const BlockQ5_1*>(row)[b];
        qs = blk.qs, qh = blk.qh, d = blk.d, m = blk.m;
      }
      uint32_t bits;
      std::memcpy(&bits, qh, 4);
      for (int i = 0; i < 32; ++i) {
        out->u[i] = static_cast<uint8_t>(Nibble(qs, i) | (((bits >> i) & 1) << 4));
      }
      out->d[0] = out->d[1] = F16ToF32(d);
      if (type == GgmlType::kQ5_1) out->m[0] = out->m[1] = F16ToF32(m);
      return;
    }
    case GgmlType::kQ8_0: {
      const auto& blk = reinterpret_cast<const BlockQ8_0*>(row)[b];
      for (int i = 0; i < 32; ++i) out->u[i] = static_cast<uint8_t>(blk.qs[i] + 128);
      out->d[0] = out->d[1] = F16ToF32(blk.d);
      return;
    }
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K: {
      const int j = static_cast<int>(b % 8);  // sub-block of 32 in the super-block
      const uint8_t* scales;
      const uint8_t* q;
      const uint8_t* qh = nullptr;
      uint16_t hd, hmin;
      if (type == GgmlType::kQ4_K) {
        const auto& blk = reinterpret_cast<const BlockQ4K*>(row)[b / 8];
        scales = blk.scales, q = blk.qs + 32 * (j / 2), hd = blk.d, hmin = blk.dmin;
      } else {
        const auto& blk = reinterpret_cast<const BlockQ5K*>(row)[b / 8];
        scales = blk.scales, q = blk.qs + 32 * (j / 2), hd = blk.d, hmin = blk.dmin;
        qh = blk.qh;
      }
      for (int l = 0; l < 32; ++l) {
        int u = (j % 2 == 0) ? (q[l] & 15) : (q[l] >> 4);
        if (qh != nullptr && (qh[l] & (1u << j))) u += 16;
        out->u[l] = static_cast<uint8_t>(u);
      }
      uint8_t sc, mn;
      GetScaleMinK4(j, scales, &sc, &mn);
      out->d[0] = out->d[1] = F16ToF32(hd) * sc;
      out->m[0] = out->m[1] = -(F16ToF32(hmin) * mn);
      out->hd = hd, out->hmin = hmin, out->sc[0] = static_cast<int8_t>(sc), out->mn = mn;
      return;
    }
    case GgmlType::kQ2_K:
    case GgmlType::kQ3_K: {
      // Block j of the super-block: bits 2 (j % 4).. of the 32 bytes at 32 (j / 4); Q3_K's
      // third bit is bit j of hmask[i], its sub-block scales 6-bit minus 32 (UnpackQ3KScales).
      const int j = static_cast<int>(b % 8);
      const uint8_t* q;
      if (type == GgmlType::kQ2_K) {
        const auto& blk = reinterpret_cast<const BlockQ2K*>(row)[b / 8];
        q = blk.qs + 32 * (j / 4);
        for (int s = 0; s < 2; ++s) {
          const uint8_t sb = blk.scales[2 * j + s];
          out->sub_scales[s] = sb;
          out->d[s] = F16ToF32(blk.d) * static_cast<float>(sb & 15);
          out->m[s] = -(F16ToF32(blk.dmin) * static_cast<float>(sb >> 4));
        }
        out->hd = blk.d, out->hmin = blk.dmin;
        for (int i = 0; i < 32; ++i) out->u[i] = (q[i] >> (2 * (j % 4))) & 3;
      } else {
        const auto& blk = reinterpret_cast<const BlockQ3K*>(row)[b / 8];
        q = blk.qs + 32 * (j / 4);
        int8_t scales[16];
        cpu::UnpackQ3KScales(blk.scales, scales);
        for (int s = 0; s < 2; ++s) {
          out->sub_scales[s] = static_cast<uint8_t>(scales[2 * j + s] + 32);
          out->d[s] = F16ToF32(blk.d) * static_cast<float>(scales[2 * j + s]);
        }
        out->hd = blk.d;
        for (int i = 0; i < 32; ++i) {
          out->u[i] =
              static_cast<uint8_t>(((q[i] >> (2 * (j % 4))) & 3) | ((blk.hmask[i] >> j) & 1) << 2);
        }
      }
      return;
    }
    case GgmlType::kIQ4_NL: {
      const auto& blk = reinterpret_cast<const BlockIQ4NL*>(row)[b];
      for (int i = 0; i < 32; ++i) out->u[i] = Nibble(blk.qs, i);
      out->d[0] = out->d[1] = F16ToF32(blk.d);
      return;
    }
    case GgmlType::kMXFP4: {
      const auto& blk = reinterpret_cast<const BlockMXFP4*>(row)[b];
      for (int i = 0; i < 32; ++i) out->u[i] = Nibble(blk.qs, i);
      out->d[0] = out->d[1] = cpu::E8M0HalfToFloat(blk.e);
      out->e = blk.e;
      return;
    }
    case GgmlType::kIQ4_XS: {
      const auto& blk = reinterpret_cast<const BlockIQ4XS*>(row)[b / 8];
      const int j = static_cast<int>(b % 8);
      for (int i = 0; i < 32; ++i) out->u[i] = Nibble(blk.qs + 16 * j, i);
      out->ls = static_cast<uint8_t>(((blk.scales_l[j / 2] >> (4 * (j % 2))) & 15) |
                                     ((blk.scales_h >> (2 * j)) & 3) << 4);
      out->hd = blk.d;
      out->d[0] = out->d[1] = F16ToF32(blk.d) * static_cast<float>(out->ls - 32);
      return;
    }
    case GgmlType::kQ6_K: {
      const auto& blk = reinterpret_cast<const BlockQ6K*>(row)[b / 8];
      const int e0 = static_cast<int>(b % 8) * 32;  // first element in the super-block
      const int half = e0 / 128, quarter = (e0 % 128) / 32;
      const uint8_t* ql = blk.ql + 64 * half + (quarter % 2) * 32;
      const uint8_t* qh = blk.qh + 32 * half;
      for (int l = 0; l < 32; ++l) {
        const int lo = quarter < 2 ? (ql[l] & 15) : (ql[l] >> 4);
        out->u[l] = static_cast<uint8_t>(lo | (((qh[l] >> (2 * quarter)) & 3) << 4));
      }
      const float d = F16ToF32(blk.d);
      out->hd = blk.d;
      for (int s = 0; s < 2; ++s) {
        out->sc[s] = blk.scales[8 * half + s + 2 * quarter];
        out->d[s] = d * out->sc[s];
      }
      return;
    }
    default:
      std::abort();
  }
}

struct TypeTraits {
  int sub, offset;
  bool has_min;
  int high_bits;  // every quant type but Q8_0 packs nibbles, plus this many bit planes
  ScaleForm form;
  const uint8_t* levels = nullptr;
  int low_bits = 4;  // 2: Q2_K, Q3_K
};

TypeTraits Traits(GgmlType t) {
  switch (t) {
    case GgmlType::kQ4_0:
      return {32, 8, false, 0, ScaleForm::kHalf};
    case GgmlType::kQ4_1:
      return {32, 0, true, 0, ScaleForm::kHalf};
    case GgmlType::kQ4_K:
      return {32, 0, true, 0, ScaleForm::kK4};
    case GgmlType::kQ5_0:
      return {32, 16, false, 1, ScaleForm::kHalf};
    case GgmlType::kQ5_1:
      return {32, 0, true, 1, ScaleForm::kHalf};
    case GgmlType::kQ5_K:
      return {32, 0, true, 1, ScaleForm::kK4};
    case GgmlType::kQ8_0:
      return {32, 128, false, -1, ScaleForm::kHalf};  // whole bytes, no nibbles
    case GgmlType::kQ6_K:
      return {16, 32, false, 2, ScaleForm::kQ6K};
    case GgmlType::kQ2_K:
      return {16, 0, true, 0, ScaleForm::kQ2K, nullptr, 2};
    case GgmlType::kQ3_K:
      return {16, 4, false, 1, ScaleForm::kQ3K, nullptr, 2};
    case GgmlType::kIQ4_NL:
      return {32, 128, false, 0, ScaleForm::kHalf, kIq4nlLevels.u};
    case GgmlType::kIQ4_XS:
      return {32, 128, false, 0, ScaleForm::kI6, kIq4nlLevels.u};
    case GgmlType::kMXFP4:
      return {32, 128, false, 0, ScaleForm::kE8M0, kMxfp4Levels.u};
    default:
      std::abort();
  }
}

// Scratch for QuantizePackedActivations, per calling thread and activation format.
struct ActScratch {
  std::vector<int8_t> qs, tq;  // + 64 for alignment
  std::vector<float> dx, dxs, tdx, tdxs;
  std::vector<int32_t> sum16, txsum, tsum16;
};

int8_t* Align64(int8_t* p) {
  return reinterpret_cast<int8_t*>((reinterpret_cast<uintptr_t>(p) + 63) &
                                   ~static_cast<uintptr_t>(63));
}

// Token t's quants and scales (row layout) into the tiled copy of PackedActivations.
void TileToken(PackedActivations& a, int64_t t, int8_t* tq, float* tdx, float* tdxs, int32_t* txsum,
               int32_t* tsum16) {
  const int64_t k = t / kActTile, i = t % kActTile;
  for (int64_t b = 0; b < a.nb; ++b) {
    const int64_t kb = k * a.nb + b, tb = t * a.nb + b;
    std::memcpy(tq + (kb * kActTile + i) * 32, a.qs + t * a.stride + 32 * b, 32);
    tdx[kb * kActTile + i] = a.dx[tb];
    tdxs[kb * kActTile + i] = a.dxs[tb];
    txsum[kb * kActTile + i] = a.sum16[2 * tb] + a.sum16[2 * tb + 1];
    tsum16[(kb * 2) * kActTile + i] = a.sum16[2 * tb];
    tsum16[(kb * 2 + 1) * kActTile + i] = a.sum16[2 * tb + 1];
  }
}
thread_local ActScratch t_act[2];               // act_block 32, 256
thread_local std::vector<uint16_t> t_act_bf16;  // kActBf16, + 32 for alignment

void ReferenceGroups(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens,
                     int64_t g0, int64_t g1, float* y, int64_t y_stride);

}  // namespace

std::unique_ptr<PackedWeights> PackFloatWeights(const WeightMatrix& w, ThreadPool* pool) {
  auto p = std::make_unique<PackedWeights>();
  p->source_type = w.type;
  p->rows = w.rows;
  p->cols = w.cols;
  p->groups = (w.rows + 15) / 16;
  p->act_block = 0;
  p->float_bytes = w.type == GgmlType::kF32 ? 4 : 2;
  p->quant_bytes = static_cast<size_t>(32 * 16 * p->float_bytes);
  const int64_t nb = w.cols / 32;
  p->group_bytes = (p->quant_bytes * nb + 63) / 64 * 64;
  p->stream_bytes = p->group_bytes / nb;
  const size_t total = p->group_bytes * static_cast<size_t>(p->groups);
  p->data = AllocPacked(total);  // zeroed: padding rows of the last group
  const auto* src = static_cast<const uint8_t*>(w.data);
  const int fb = p->float_bytes;
  ParallelFor(pool, p->groups, 16, [&](int64_t g0, int64_t g1, int) {
    for (int64_t g = g0; g < g1; ++g) {
      for (int r = 0; r < 16 && g * 16 + r < w.rows; ++r) {
        const uint8_t* row = src + (g * 16 + r) * w.row_bytes;
        for (int64_t k = 0; k < w.cols; ++k) {
          uint8_t* dst = const_cast<uint8_t*>(p->Block(g, k / 32)) +
                         static_cast<size_t>((k % 32) * 16 + r) * fb;
          std::memcpy(dst, row + k * fb, fb);
        }
      }
    }
  });
  return p;
}

std::unique_ptr<PackedWeights> PackBf16PairWeights(const WeightMatrix& w, ThreadPool* pool) {
  RADIXLM_CHECK(w.type == GgmlType::kBF16) << "k pairs are a layout of BF16 weights";
  auto p = PackFloatWeights(w, pool);  // sizes and the zeroed buffer; values rearranged below
  p->bf16_pairs = true;
  p->act_block = kActBf16;
  const auto* src = static_cast<const uint8_t*>(w.data);
  ParallelFor(pool, p->groups, 16, [&](int64_t g0, int64_t g1, int) {
    for (int64_t g = g0; g < g1; ++g) {
      for (int r = 0; r < 16 && g * 16 + r < w.rows; ++r) {
        const uint8_t* row = src + (g * 16 + r) * w.row_bytes;
        for (int64_t k = 0; k < w.cols; ++k) {
          const int64_t kk = k % 32;
          uint8_t* dst = const_cast<uint8_t*>(p->Block(g, k / 32)) +
                         static_cast<size_t>(64 * (kk / 2) + 4 * r + 2 * (kk % 2));
          std::memcpy(dst, row + 2 * k, 2);
        }
      }
    }
  });
  return p;
}

bool IsPackableType(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0:
    case GgmlType::kQ4_1:
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1:
    case GgmlType::kQ8_0:
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K:
    case GgmlType::kQ6_K:
    case GgmlType::kQ2_K:
    case GgmlType::kQ3_K:
    case GgmlType::kIQ4_NL:
    case GgmlType::kIQ4_XS:
    case GgmlType::kMXFP4:
    case GgmlType::kF32:
    case GgmlType::kF16:
    case GgmlType::kBF16:
      return true;
    default:
      return IsCodebookPackable(type);
  }
}

namespace {

float HalfAt(const uint8_t* p, int i) {
  uint16_t h;
  std::memcpy(&h, p + 2 * i, 2);
  return F16ToF32(h);
}

// The 6-bit sc and mn of row `lane` in a kK4 block's 24 scale bytes (kQ3K: the two
// sub-blocks' ls).
void K4ScaleMin(const uint8_t* sp, int lane, int* sc, int* mn) {
  const int hi = (sp[16 + lane / 2] >> (4 * (lane % 2))) & 15;
  *sc = (sp[lane] & 15) | (hi & 3) << 4;
  *mn = (sp[lane] >> 4) | (hi >> 2) << 4;
}

}  // namespace

float PackedWeights::ScaleD(int64_t group, int64_t block, int s, int lane) const {
  const uint8_t* sp = Scales(group, block);
  switch (scale_form) {
    case ScaleForm::kHalf:
      return HalfAt(sp, lane);
    case ScaleForm::kK4: {
      int sc, mn;
      K4ScaleMin(sp, lane, &sc, &mn);
      return HalfAt(Supers(group, block), lane) * static_cast<float>(sc);
    }
    case ScaleForm::kQ6K:
      return HalfAt(Supers(group, block), lane) *
             static_cast<float>(static_cast<int8_t>(sp[16 * s + lane]));
    case ScaleForm::kQ3K: {
      int ls[2];
      K4ScaleMin(sp, lane, &ls[0], &ls[1]);
      return HalfAt(Supers(group, block), lane) * static_cast<float>(ls[s] - 32);
    }
    case ScaleForm::kQ2K:
      return HalfAt(Supers(group, block), lane) * static_cast<float>(sp[16 * s + lane] & 15);
    case ScaleForm::kI6: {
      const int ls = ((sp[lane / 2] >> (4 * (lane % 2))) & 15) |
                     ((sp[8 + lane / 4] >> (2 * (lane % 4))) & 3) << 4;
      return HalfAt(Supers(group, block), lane) * static_cast<float>(ls - 32);
    }
    case ScaleForm::kE8M0:
      return cpu::E8M0HalfToFloat(sp[lane]);
    case ScaleForm::kCodebook:  // packed_codebook.h
    case ScaleForm::kNone:
      break;
  }
  return 0.0f;
}

float PackedWeights::ScaleM(int64_t group, int64_t block, int lane, int s) const {
  if (!has_min) return 0.0f;
  const uint8_t* sp = Scales(group, block);
  if (scale_form == ScaleForm::kHalf) return HalfAt(sp, 16 + lane);
  if (scale_form == ScaleForm::kQ2K) {
    return -(HalfAt(Supers(group, block), 16 + lane) * static_cast<float>(sp[16 * s + lane] >> 4));
  }
  int sc, mn;
  K4ScaleMin(sp, lane, &sc, &mn);
  return -(HalfAt(Supers(group, block), 16 + lane) * static_cast<float>(mn));
}

float PackedFloat(const PackedWeights& w, const uint8_t* blk, int lane, int k) {
  if (w.bf16_pairs) {
    uint16_t h;
    std::memcpy(&h, blk + 64 * (k / 2) + 4 * lane + 2 * (k % 2), 2);
    return Bf16ToF32(h);
  }
  const size_t i = static_cast<size_t>(k) * 16 + lane;
  if (w.float_bytes == 4) {
    float v;
    std::memcpy(&v, blk + 4 * i, 4);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, blk + 2 * i, 2);
  return w.source_type == GgmlType::kF16 ? F16ToF32(h) : Bf16ToF32(h);
}

PackedGemmPath ActivePackedGemmPath() {
  static const PackedGemmPath path = [] {
    const Isa isa = ActiveIsa();
#if defined(RADIXLM_KERNELS_AVX512_VNNI)
    if (isa >= Isa::kAvx512 && cpu::CpuHasAvx512Vnni()) {
      return isa == Isa::kAmx ? PackedGemmPath::kAmx : PackedGemmPath::kAvx512Vnni;
    }
#endif
#if defined(RADIXLM_KERNELS_X86)
#if defined(RADIXLM_KERNELS_AVX_VNNI)
    if (isa >= Isa::kAvxVnni && cpu::CpuHasAvxVnni()) return PackedGemmPath::kAvxVnni;
#endif
    if (isa >= Isa::kAvx2) return PackedGemmPath::kAvx2;
#endif
    (void)isa;
    return PackedGemmPath::kNone;
  }();
  return path;
}

const char* PackedGemmPathName(PackedGemmPath path) {
  switch (path) {
    case PackedGemmPath::kNone:
      return "none";
    case PackedGemmPath::kAvx2:
      return "avx2";
    case PackedGemmPath::kAvxVnni:
      return "avx_vnni";
    case PackedGemmPath::kAvx512Vnni:
      return "avx512_vnni";
    case PackedGemmPath::kAmx:
      return "amx+avx512_vnni";
  }
  return "?";
}

bool PackedGemmAvailable() { return ActivePackedGemmPath() != PackedGemmPath::kNone; }

Bf16GemmPath ActiveBf16GemmPath() {
  static const Bf16GemmPath path = [] {
    const Isa isa = ActiveIsa();
    (void)isa;
#if defined(RADIXLM_KERNELS_AMX_BF16)
    if (isa == Isa::kAmx && cpu::CpuHasAmxBf16() && cpu::CpuHasAvx512Bf16()) {
      return Bf16GemmPath::kAmxBf16;
    }
#endif
#if defined(RADIXLM_KERNELS_AVX512_BF16)
    if (isa >= Isa::kAvx512 && cpu::CpuHasAvx512Bf16()) return Bf16GemmPath::kAvx512Bf16;
#endif
    return Bf16GemmPath::kNone;
  }();
  return path;
}

const char* Bf16GemmPathName(Bf16GemmPath path) {
  switch (path) {
    case Bf16GemmPath::kNone:
      return "none";
    case Bf16GemmPath::kAvx512Bf16:
      return "avx512_bf16";
    case Bf16GemmPath::kAmxBf16:
      return "amx_bf16";
  }
  return "?";
}

std::unique_ptr<PackedWeights> PackWeights(const WeightMatrix& w, ThreadPool* pool) {
  if (w.type == GgmlType::kBF16 && ActiveBf16GemmPath() != Bf16GemmPath::kNone) {
    return PackBf16PairWeights(w, pool);
  }
  if (w.type == GgmlType::kF32 || w.type == GgmlType::kF16 || w.type == GgmlType::kBF16) {
    return PackFloatWeights(w, pool);
  }
  if (FindCodebookLayout(w.type) != nullptr) return PackCodebookWeights(w, pool);
  const TypeTraits tr = Traits(w.type);
  auto p = std::make_unique<PackedWeights>();
  p->source_type = w.type;
  p->rows = w.rows;
  p->cols = w.cols;
  p->groups = (w.rows + 15) / 16;
  p->sub = tr.sub;
  p->offset = tr.offset;
  p->has_min = tr.has_min;
  p->nibbles = tr.high_bits >= 0;
  p->low_bits = tr.low_bits;
  p->high_bits = std::max(0, tr.high_bits);
  p->scale_form = tr.form;
  p->levels = tr.levels;
  p->act_block = ActivationType(w.type) == GgmlType::kQ8_K ? 256 : 32;
  p->quant_bytes = p->nibbles ? 64 * static_cast<size_t>(p->low_bits + p->high_bits) : 512;
  switch (tr.form) {
    case ScaleForm::kHalf:
      p->scale_bytes = tr.has_min ? 64 : 32;
      break;
    case ScaleForm::kK4:
      p->scale_bytes = 24;
      p->super_bytes = 64;
      break;
    case ScaleForm::kQ6K:
      p->scale_bytes = 32;
      p->super_bytes = 32;
      break;
    case ScaleForm::kQ3K:
      p->scale_bytes = 24;
      p->super_bytes = 32;
      break;
    case ScaleForm::kQ2K:
      p->scale_bytes = 32;
      p->super_bytes = 64;
      break;
    case ScaleForm::kI6:
      p->scale_bytes = 12;
      p->super_bytes = 32;
      break;
    case ScaleForm::kE8M0:
      p->scale_bytes = 16;
      break;
    case ScaleForm::kCodebook:
    case ScaleForm::kNone:
      std::abort();
  }
  const int64_t nb = w.cols / 32;
  RADIXLM_CHECK(p->super_bytes == 0 || nb % 8 == 0) << "K-quant columns must be whole blocks";
  p->group_bytes =
      ((p->quant_bytes + p->scale_bytes) * nb + p->super_bytes * (nb / 8) + 63) / 64 * 64;
  p->stream_bytes = p->group_bytes / nb;
  const size_t total = p->group_bytes * static_cast<size_t>(p->groups);
  // Zeroed: padding rows and alignment padding; bit planes and scale nibbles are or-ed in.
  p->data = AllocPacked(total);
  const auto* src = static_cast<const uint8_t*>(w.data);
  auto put_half = [](uint8_t* dst, int i, uint16_t h) { std::memcpy(dst + 2 * i, &h, 2); };
  auto pack_groups = [&](int64_t g0, int64_t g1, int) {
    UnpackedBlock ub;
    for (int64_t g = g0; g < g1; ++g) {
      for (int64_t b = 0; b < nb; ++b) {
        auto* dst = const_cast<uint8_t*>(p->Block(g, b));
        auto* scales = const_cast<uint8_t*>(p->Scales(g, b));
        auto* supers = const_cast<uint8_t*>(p->Supers(g, b));
        for (int r = 0; r < 16; ++r) {
          const int64_t row = g * 16 + r;
          if (row >= w.rows) break;
          UnpackBlock(w.type, src + row * w.row_bytes, b, &ub);
          if (p->low_bits == 2) {
            for (int k = 0; k < 32; ++k) {
              const int c = k / 4;
              dst[(c % 2) * 64 + 4 * r + k % 4] |=
                  static_cast<uint8_t>((ub.u[k] & 3) << (2 * (c / 2)));
              if (p->high_bits == 1) {
                dst[128 + 4 * r + k % 4] |= static_cast<uint8_t>(((ub.u[k] >> 2) & 1) << c);
              }
            }
          } else if (p->nibbles) {
            for (int c = 0; c < 4; ++c) {
              for (int k = 0; k < 4; ++k) {
                dst[c * 64 + 4 * r + k] = static_cast<uint8_t>((ub.u[4 * c + k] & 15) |
                                                               (ub.u[4 * (c + 4) + k] & 15) << 4);
              }
            }
            for (int k = 0; k < 32 && p->high_bits == 1; ++k) {
              dst[256 + 4 * r + k % 4] |= static_cast<uint8_t>(((ub.u[k] >> 4) & 1) << (k / 4));
            }
            for (int k = 0; k < 32 && p->high_bits == 2; ++k) {
              const int c = k / 4;
              dst[256 + 64 * (c / 4) + 4 * r + k % 4] |=
                  static_cast<uint8_t>(((ub.u[k] >> 4) & 3) << (2 * (c % 4)));
            }
          } else {
            for (int c = 0; c < 8; ++c) std::memcpy(dst + c * 64 + 4 * r, ub.u + 4 * c, 4);
          }
          switch (tr.form) {
            case ScaleForm::kHalf:
              put_half(scales, r, F32ToF16(ub.d[0]));
              RADIXLM_DCHECK(F16ToF32(F32ToF16(ub.d[0])) == ub.d[0]);  // one of the GGUF's halves
              if (tr.has_min) put_half(scales, 16 + r, F32ToF16(ub.m[0]));
              break;
            case ScaleForm::kK4: {
              const int sc = static_cast<uint8_t>(ub.sc[0]), mn = ub.mn;
              scales[r] = static_cast<uint8_t>((sc & 15) | (mn & 15) << 4);
              scales[16 + r / 2] |=
                  static_cast<uint8_t>(((sc >> 4) | (mn >> 4) << 2) << (4 * (r % 2)));
              put_half(supers, r, ub.hd);
              put_half(supers, 16 + r, ub.hmin);
              break;
            }
            case ScaleForm::kQ6K:
              scales[r] = static_cast<uint8_t>(ub.sc[0]);
              scales[16 + r] = static_cast<uint8_t>(ub.sc[1]);
              put_half(supers, r, ub.hd);
              break;
            case ScaleForm::kQ3K: {
              const int l0 = ub.sub_scales[0], l1 = ub.sub_scales[1];
              scales[r] = static_cast<uint8_t>((l0 & 15) | (l1 & 15) << 4);
              scales[16 + r / 2] |=
                  static_cast<uint8_t>(((l0 >> 4) | (l1 >> 4) << 2) << (4 * (r % 2)));
              put_half(supers, r, ub.hd);
              break;
            }
            case ScaleForm::kQ2K:
              scales[r] = ub.sub_scales[0];
              scales[16 + r] = ub.sub_scales[1];
              put_half(supers, r, ub.hd);
              put_half(supers, 16 + r, ub.hmin);
              break;
            case ScaleForm::kI6:
              scales[r / 2] |= static_cast<uint8_t>((ub.ls & 15) << (4 * (r % 2)));
              scales[8 + r / 4] |= static_cast<uint8_t>((ub.ls >> 4) << (2 * (r % 4)));
              put_half(supers, r, ub.hd);
              break;
            case ScaleForm::kE8M0:
              scales[r] = ub.e;
              break;
            case ScaleForm::kCodebook:
            case ScaleForm::kNone:
              break;
          }
        }
      }
    }
  };
  ParallelFor(pool, p->groups, 16, pack_groups);
  return p;
}

PackedActivations QuantizePackedActivations(const float* x, int64_t n_tokens, int64_t cols,
                                            int act_block, ThreadPool* pool,
                                            const RowPrologue* prologue,
                                            std::span<const RowRange> live) {
  const int64_t nb = cols / 32;
  if (act_block == 0) {
    RunRowPrologue(prologue, n_tokens, pool);  // nothing to quantize
    PackedActivations a;
    a.xf = x;
    a.xf_stride = cols;
    a.nb = nb;
    return a;
  }
  if (act_block == kActBf16) {
    const int64_t tiled = (n_tokens + kActTile - 1) / kActTile * kActTile;
    const auto need = static_cast<size_t>(tiled * cols + 32);
    if (t_act_bf16.size() < need) t_act_bf16.resize(need);
    auto* xb = reinterpret_cast<uint16_t*>(Align64(reinterpret_cast<int8_t*>(t_act_bf16.data())));
    auto round = [&](int64_t t0, int64_t t1, int) {
      if (prologue != nullptr) (*prologue)(t0, t1);
      F32ToBf16Row(x + t0 * cols, xb + t0 * cols, (t1 - t0) * cols);
    };
    if (n_tokens >= 16) {
      ParallelFor(pool, n_tokens, 1, round);
    } else {
      round(0, n_tokens, 0);
    }
    PackedActivations a;
    a.xb = xb;
    a.xb_stride = cols;
    a.nb = nb;
    return a;
  }
  const size_t stride = static_cast<size_t>((cols + 63) / 64 * 64);
  ActScratch& s = t_act[act_block == 32 ? 0 : 1];
  const size_t need = stride * static_cast<size_t>(n_tokens) + 64;
  const int64_t tiled = (n_tokens + kActTile - 1) / kActTile * kActTile;  // tokens, padded
  const auto tiled_blocks = static_cast<size_t>(tiled * nb);
  if (s.qs.size() < need) s.qs.resize(need);
  if (s.tq.size() < 32 * tiled_blocks + 64) s.tq.resize(32 * tiled_blocks + 64);
  if (s.dx.size() < static_cast<size_t>(nb * n_tokens)) {
    s.dx.resize(nb * n_tokens);
    s.dxs.resize(nb * n_tokens);
    s.sum16.resize(2 * nb * n_tokens);
  }
  if (s.tdx.size() < tiled_blocks) {
    s.tdx.resize(tiled_blocks);
    s.tdxs.resize(tiled_blocks);
    s.txsum.resize(tiled_blocks);
    s.tsum16.resize(2 * tiled_blocks);
  }
  int8_t* qs = Align64(s.qs.data());
  int8_t* tq = Align64(s.tq.data());
  PackedActivations a;
  a.qs = qs;
  a.stride = stride;
  a.nb = nb;
  a.dx = s.dx.data();
  a.sum16 = s.sum16.data();
  a.dxs = s.dxs.data();
  a.tq = tq;
  a.tdx = s.tdx.data();
  a.tdxs = s.tdxs.data();
  a.txsum = s.txsum.data();
  a.tsum16 = s.tsum16.data();
  const PackedGemmPath path = ActivePackedGemmPath();
  auto QuantizeRow = cpu::QuantizeActivationRowScalar;
#if defined(RADIXLM_KERNELS_AVX512_VNNI)
  if (path == PackedGemmPath::kAvx512Vnni || path == PackedGemmPath::kAmx) {
    QuantizeRow = cpu::avx512vnni::QuantizeActivationRow;
  }
#endif
#if defined(RADIXLM_KERNELS_X86)
  if (path == PackedGemmPath::kAvx2 || path == PackedGemmPath::kAvxVnni) {
    QuantizeRow = cpu::avx2::QuantizeActivationRow;
  }
#endif
  auto quantize = [&](int64_t t0, int64_t t1, int) {
    if (prologue != nullptr) (*prologue)(t0, t1);
    for (int64_t t = t0; t < t1; ++t) {
      QuantizeRow(x + t * cols, cols, act_block, qs + t * stride, s.dx.data() + t * nb,
                  s.sum16.data() + 2 * t * nb, s.dxs.data() + t * nb);
      TileToken(a, t, tq, s.tdx.data(), s.tdxs.data(), s.txsum.data(), s.tsum16.data());
    }
  };
  if (!live.empty()) {
    // Only the live rows (a mixture of experts' segments, each padded to whole tiles: at
    // batch 1 one row in 16), over one index space of those rows, contiguous runs together.
    thread_local std::vector<int64_t> live_rows;
    std::vector<int64_t>& rows = live_rows;  // this thread's, as the workers will see it
    rows.clear();
    for (const RowRange& r : live) {
      for (int64_t t = r.first; t < r.first + r.rows; ++t) rows.push_back(t);
    }
    auto quantize_live = [&](int64_t i0, int64_t i1, int thread) {
      for (int64_t i = i0; i < i1;) {
        int64_t j = i + 1;
        while (j < i1 && rows[j] == rows[j - 1] + 1) ++j;
        quantize(rows[i], rows[j - 1] + 1, thread);
        i = j;
      }
    };
    const auto n_live = static_cast<int64_t>(rows.size());
    if (n_live >= 16) {
      ParallelFor(pool, n_live, 1, quantize_live);
    } else {
      quantize_live(0, n_live, 0);
    }
    return a;
  }
  if (n_tokens >= 16) {
    ParallelFor(pool, n_tokens, 1, quantize);
  } else {
    quantize(0, n_tokens, 0);
  }
  // The last tile's padding tokens keep what the scratch held (zeros, or an earlier call's
  // finite quants and scales): kernels may read them but never store their outputs, and
  // zeroing them cost a decode step more than quantizing its one token.
  return a;
}

PackedActivations SlicePackedActivations(const PackedActivations& a, int64_t first_token) {
  assert(first_token % kActTile == 0);
  PackedActivations s = a;
  if (a.xf != nullptr) {  // float weights: the rows themselves
    s.xf = a.xf + first_token * a.xf_stride;
    return s;
  }
  if (a.xb != nullptr) {  // bf16 rows
    s.xb = a.xb + first_token * a.xb_stride;
    return s;
  }
  const int64_t t = first_token, tiles = first_token / kActTile;
  s.qs = a.qs + t * static_cast<int64_t>(a.stride);
  s.dx = a.dx + t * a.nb;
  s.dxs = a.dxs + t * a.nb;
  s.sum16 = a.sum16 + 2 * t * a.nb;
  s.tq = a.tq + tiles * a.nb * kActTile * 32;
  s.tdx = a.tdx + tiles * a.nb * kActTile;
  s.tdxs = a.tdxs + tiles * a.nb * kActTile;
  s.txsum = a.txsum + tiles * a.nb * kActTile;
  s.tsum16 = a.tsum16 + tiles * a.nb * 2 * kActTile;
  return s;
}

void PackedGemmGroups(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens,
                      int64_t g0, int64_t g1, float* y, int64_t y_stride) {
  if (w.bf16_pairs) {
#if defined(RADIXLM_KERNELS_AMX_BF16)
    if (ActiveBf16GemmPath() == Bf16GemmPath::kAmxBf16) {
      return cpu::amxbf16::Bf16Gemm(w, a, n_tokens, g0, g1, y, y_stride);
    }
#endif
#if defined(RADIXLM_KERNELS_AVX512_BF16)
    if (ActiveBf16GemmPath() != Bf16GemmPath::kNone) {
      return cpu::avx512bf16::Bf16Gemm(w, a, n_tokens, g0, g1, y, y_stride);
    }
#endif
    return ReferenceGroups(w, a, n_tokens, g0, g1, y, y_stride);
  }
  if (w.float_bytes != 0) {
#if defined(RADIXLM_KERNELS_AVX512)
    if (ActiveIsa() >= Isa::kAvx512)
      return cpu::avx512::FloatGemm(w, a, n_tokens, g0, g1, y, y_stride);
#endif
#if defined(RADIXLM_KERNELS_X86)
    if (ActiveIsa() >= Isa::kAvx2) return cpu::avx2::FloatGemm(w, a, n_tokens, g0, g1, y, y_stride);
#endif
    return ReferenceGroups(w, a, n_tokens, g0, g1, y, y_stride);
  }
  if (w.scale_form == ScaleForm::kCodebook) {
    switch (ActivePackedGemmPath()) {
#if defined(RADIXLM_KERNELS_AVX512_VNNI)
      case PackedGemmPath::kAvx512Vnni:
        return cpu::avx512vnni::CodebookGemm(w, a, n_tokens, g0, g1, y, y_stride);
      case PackedGemmPath::kAmx:  // AMX-INT8 tiles for full tiles of 16 tokens
        return cpu::avx512vnni::CodebookGemm(w, a, n_tokens, g0, g1, y, y_stride,
                                             cpu::avx512vnni::CodebookAmxBuilt());
#endif
#if defined(RADIXLM_KERNELS_AVX_VNNI)
      case PackedGemmPath::kAvxVnni:
        return cpu::avxvnni::CodebookGemm(w, a, n_tokens, g0, g1, y, y_stride);
#endif
#if defined(RADIXLM_KERNELS_X86)
      case PackedGemmPath::kAvx2:
        return cpu::avx2::CodebookGemm(w, a, n_tokens, g0, g1, y, y_stride);
#endif
      default:
        return CodebookReferenceGroups(w, a, n_tokens, g0, g1, y, y_stride);
    }
  }
  switch (ActivePackedGemmPath()) {
#if defined(RADIXLM_KERNELS_AVX512_VNNI)
    case PackedGemmPath::kAvx512Vnni:
    case PackedGemmPath::kAmx: {
      const bool amx = ActivePackedGemmPath() == PackedGemmPath::kAmx && cpu::amx::Supports(w);
      cpu::avx512vnni::PackedGemm(w, a, n_tokens, g0, g1, y, y_stride, amx);
      return;
    }
#endif
#if defined(RADIXLM_KERNELS_AVX_VNNI)
    case PackedGemmPath::kAvxVnni:
      cpu::avxvnni::PackedGemm(w, a, n_tokens, g0, g1, y, y_stride);
      return;
#endif
#if defined(RADIXLM_KERNELS_X86)
    case PackedGemmPath::kAvx2:
      cpu::avx2::PackedGemm(w, a, n_tokens, g0, g1, y, y_stride);
      return;
#endif
    default:
      ReferenceGroups(w, a, n_tokens, g0, g1, y, y_stride);
  }
}

void PackedGemmReference(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens,
                         float* y, int64_t y_stride) {
  ReferenceGroups(w, a, n_tokens, 0, w.groups, y, y_stride);
}

namespace cpu {

void QuantizeActivationRowScalar(const float* x, int64_t n, int act_block, int8_t* qs, float* dx,
                                 int32_t* sum16, float* dxs) {
  for (int64_t a = 0; a < n / act_block; ++a) {
    const float* xa = x + act_block * a;
    float amax = 0.0f;
    for (int k = 0; k < act_block; ++k) amax = std::max(amax, std::fabs(xa[k]));
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    const float d =
        act_block == 32 ? F16ToF32(F32ToF16(amax / 127.0f)) : (amax != 0.0f ? 1.0f / id : 0.0f);
    for (int64_t b = act_block / 32 * a; b < act_block / 32 * (a + 1); ++b) {
      int32_t sums[2] = {0, 0};
      for (int k = 0; k < 32; ++k) {
        const int q = static_cast<int>(std::nearbyint(x[32 * b + k] * id));
        qs[32 * b + k] = static_cast<int8_t>(q);
        sums[k / 16] += q;
      }
      dx[b] = d;
      sum16[2 * b] = sums[0];
      sum16[2 * b + 1] = sums[1];
      dxs[b] = d * static_cast<float>(sums[0] + sums[1]);
    }
  }
}

}  // namespace cpu

namespace {

void ReferenceGroups(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens,
                     int64_t g0, int64_t g1, float* y, int64_t y_stride) {
  if (w.bf16_pairs) {  // vdpbf16ps's order: the pairs in turn, the odd column first
    for (int64_t t = 0; t < n_tokens; ++t) {
      const uint16_t* xb = a.xb + t * a.xb_stride;
      for (int64_t r = g0 * 16; r < std::min(w.rows, g1 * 16); ++r) {
        float acc = 0.0f;
        for (int64_t k = 0; k < w.cols; k += 2) {
          const uint8_t* blk = w.Block(r / 16, k / 32);
          const int lane = static_cast<int>(r % 16), kk = static_cast<int>(k % 32);
          const float p1 = PackedFloat(w, blk, lane, kk + 1) * Bf16ToF32(xb[k + 1]);
          const float p0 = PackedFloat(w, blk, lane, kk) * Bf16ToF32(xb[k]);
          acc = acc + p1;
          acc = acc + p0;
        }
        y[t * y_stride + r] = acc;
      }
    }
    return;
  }
  if (w.float_bytes != 0) {
    for (int64_t t = 0; t < n_tokens; ++t) {
      for (int64_t r = g0 * 16; r < std::min(w.rows, g1 * 16); ++r) {
        float acc = 0.0f;
        for (int64_t k = 0; k < w.cols; ++k) {
          const float wv = PackedFloat(w, w.Block(r / 16, k / 32), static_cast<int>(r % 16),
                                       static_cast<int>(k % 32));
          acc = std::fma(wv, a.xf[t * a.xf_stride + k], acc);
        }
        y[t * y_stride + r] = acc;
      }
    }
    return;
  }
  if (w.scale_form == ScaleForm::kCodebook) {
    return CodebookReferenceGroups(w, a, n_tokens, g0, g1, y, y_stride);
  }
  const int n_scales = 32 / w.sub;
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = g0 * 16; r < std::min(w.rows, g1 * 16); ++r) {
      const int64_t g = r / 16, lane = r % 16;
      float acc = 0.0f;
      for (int64_t b = 0; b < a.nb; ++b) {
        const uint8_t* blk = w.Block(g, b);
        const int ln = static_cast<int>(lane);
        const int8_t* xq = a.qs + t * a.stride + b * 32;
        const int64_t tb = t * a.nb + b;
        int32_t isum[2] = {0, 0};
        for (int k = 0; k < 32; ++k) {
          const int u = PackedQuant(w, blk, static_cast<int>(lane), k);
          isum[k * n_scales / 32] += u * xq[k];
        }
        if (n_scales == 1) {
          const int32_t s = isum[0] - w.offset * (a.sum16[2 * tb] + a.sum16[2 * tb + 1]);
          acc = std::fma(static_cast<float>(s), w.ScaleD(g, b, 0, ln) * a.dx[tb], acc);
          if (w.has_min) acc = std::fma(w.ScaleM(g, b, ln), a.dxs[tb], acc);
        } else {
          for (int h = 0; h < 2; ++h) {
            const int32_t s = isum[h] - w.offset * a.sum16[2 * tb + h];
            acc = std::fma(static_cast<float>(s), w.ScaleD(g, b, h, ln) * a.dx[tb], acc);
            // Q2_K's min per 16 columns: m times dx times the 16 quants' sum.
            if (w.has_min) {
              acc = std::fma(w.ScaleM(g, b, ln, h),
                             a.dx[tb] * static_cast<float>(a.sum16[2 * tb + h]), acc);
            }
          }
        }
      }
      y[t * y_stride + r] = acc;
    }
  }
}

}  // namespace

}  // namespace radixlm::kernels
