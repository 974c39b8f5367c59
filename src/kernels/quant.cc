#include "kernels/quant.h"

#include <cassert>
#include <cstring>

#include "kernels/cpu/isa.h"
#include "kernels/cpu/lowbit_impl.h"
#include "kernels/cpu/quant_impl.h"
#include "kernels/dot.h"
#include "kernels/fp16.h"

namespace radixlm::kernels {
namespace {

struct Geometry {
  int64_t block_size;
  size_t block_bytes;
};

Geometry GeometryOf(GgmlType t) {
  switch (t) {
    case GgmlType::kF32:
      return {1, 4};
    case GgmlType::kF16:
      return {1, 2};
    case GgmlType::kBF16:
      return {1, 2};
    case GgmlType::kQ4_0:
      return {kQK4_0, sizeof(BlockQ4_0)};
    case GgmlType::kQ4_1:
      return {kQK4_1, sizeof(BlockQ4_1)};
    case GgmlType::kQ5_0:
      return {kQK5_0, sizeof(BlockQ5_0)};
    case GgmlType::kQ5_1:
      return {kQK5_1, sizeof(BlockQ5_1)};
    case GgmlType::kQ8_0:
      return {kQK8_0, sizeof(BlockQ8_0)};
    case GgmlType::kQ4_K:
      return {kQK_K, sizeof(BlockQ4K)};
    case GgmlType::kQ5_K:
      return {kQK_K, sizeof(BlockQ5K)};
    case GgmlType::kQ6_K:
      return {kQK_K, sizeof(BlockQ6K)};
    case GgmlType::kQ8_K:
      return {kQK_K, sizeof(BlockQ8K)};
    case GgmlType::kQ2_K:
      return {kQK_K, sizeof(BlockQ2K)};
    case GgmlType::kQ3_K:
      return {kQK_K, sizeof(BlockQ3K)};
    case GgmlType::kIQ4_NL:
      return {kQK4_NL, sizeof(BlockIQ4NL)};
    case GgmlType::kMXFP4:
      return {kQK_MXFP4, sizeof(BlockMXFP4)};
    case GgmlType::kIQ4_XS:
      return {kQK_K, sizeof(BlockIQ4XS)};
    case GgmlType::kIQ2_XXS:
      return {kQK_K, sizeof(BlockIQ2XXS)};
    case GgmlType::kIQ2_XS:
      return {kQK_K, sizeof(BlockIQ2XS)};
    case GgmlType::kIQ2_S:
      return {kQK_K, sizeof(BlockIQ2S)};
    case GgmlType::kIQ3_XXS:
      return {kQK_K, sizeof(BlockIQ3XXS)};
    case GgmlType::kIQ3_S:
      return {kQK_K, sizeof(BlockIQ3S)};
    case GgmlType::kIQ1_S:
      return {kQK_K, sizeof(BlockIQ1S)};
    case GgmlType::kIQ1_M:
      return {kQK_K, sizeof(BlockIQ1M)};
    default:
      return {0, 0};
  }
}

bool UseAvx2() {
#if defined(RADIXLM_KERNELS_X86)
  return static_cast<int>(ActiveIsa()) >= static_cast<int>(Isa::kAvx2);
#else
  return false;
#endif
}

}  // namespace

bool IsSupportedType(GgmlType t) { return GeometryOf(t).block_size != 0; }
int64_t BlockSize(GgmlType t) { return GeometryOf(t).block_size; }
size_t BlockBytes(GgmlType t) { return GeometryOf(t).block_bytes; }

bool IsRowSizeValid(GgmlType t, int64_t n) {
  const Geometry g = GeometryOf(t);
  return g.block_size != 0 && n >= 0 && n % g.block_size == 0;
}

size_t RowBytes(GgmlType t, int64_t n) {
  assert(IsRowSizeValid(t, n));
  const Geometry g = GeometryOf(t);
  return static_cast<size_t>(n / g.block_size) * g.block_bytes;
}

void DequantizeRow(GgmlType t, const void* src, float* dst, int64_t n) {
  assert(IsRowSizeValid(t, n));
  switch (t) {
    case GgmlType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case GgmlType::kF16:
      F16ToF32Row(static_cast<const uint16_t*>(src), dst, n);
      return;
    case GgmlType::kBF16:
      Bf16ToF32Row(static_cast<const uint16_t*>(src), dst, n);
      return;
    case GgmlType::kQ4_0:
      cpu::DequantizeQ4_0(static_cast<const BlockQ4_0*>(src), dst, n);
      return;
    case GgmlType::kQ4_1:
      cpu::DequantizeQ4_1(static_cast<const BlockQ4_1*>(src), dst, n);
      return;
    case GgmlType::kQ5_0:
      cpu::DequantizeQ5_0(static_cast<const BlockQ5_0*>(src), dst, n);
      return;
    case GgmlType::kQ5_1:
      cpu::DequantizeQ5_1(static_cast<const BlockQ5_1*>(src), dst, n);
      return;
    case GgmlType::kQ8_0:
      cpu::DequantizeQ8_0(static_cast<const BlockQ8_0*>(src), dst, n);
      return;
    case GgmlType::kQ4_K:
      cpu::DequantizeQ4K(static_cast<const BlockQ4K*>(src), dst, n);
      return;
    case GgmlType::kQ5_K:
      cpu::DequantizeQ5K(static_cast<const BlockQ5K*>(src), dst, n);
      return;
    case GgmlType::kQ6_K:
      cpu::DequantizeQ6K(static_cast<const BlockQ6K*>(src), dst, n);
      return;
    case GgmlType::kQ8_K:
      cpu::DequantizeQ8K(static_cast<const BlockQ8K*>(src), dst, n);
      return;
    case GgmlType::kQ2_K:
      cpu::DequantizeQ2K(static_cast<const BlockQ2K*>(src), dst, n);
      return;
    case GgmlType::kQ3_K:
      cpu::DequantizeQ3K(static_cast<const BlockQ3K*>(src), dst, n);
      return;
    case GgmlType::kIQ4_NL:
      cpu::DequantizeIQ4NL(static_cast<const BlockIQ4NL*>(src), dst, n);
      return;
    case GgmlType::kMXFP4:
      cpu::DequantizeMXFP4(static_cast<const BlockMXFP4*>(src), dst, n);
      return;
    case GgmlType::kIQ4_XS:
      cpu::DequantizeIQ4XS(static_cast<const BlockIQ4XS*>(src), dst, n);
      return;
    case GgmlType::kIQ2_XXS:
      cpu::DequantizeIQ2XXS(static_cast<const BlockIQ2XXS*>(src), dst, n);
      return;
    case GgmlType::kIQ2_XS:
      cpu::DequantizeIQ2XS(static_cast<const BlockIQ2XS*>(src), dst, n);
      return;
    case GgmlType::kIQ2_S:
      cpu::DequantizeIQ2S(static_cast<const BlockIQ2S*>(src), dst, n);
      return;
    case GgmlType::kIQ3_XXS:
      cpu::DequantizeIQ3XXS(static_cast<const BlockIQ3XXS*>(src), dst, n);
      return;
    case GgmlType::kIQ3_S:
      cpu::DequantizeIQ3S(static_cast<const BlockIQ3S*>(src), dst, n);
      return;
    case GgmlType::kIQ1_S:
      cpu::DequantizeIQ1S(static_cast<const BlockIQ1S*>(src), dst, n);
      return;
    case GgmlType::kIQ1_M:
      cpu::DequantizeIQ1M(static_cast<const BlockIQ1M*>(src), dst, n);
      return;
    default:
      assert(false && "DequantizeRow: unsupported type");
  }
}

void QuantizeRow(GgmlType t, const float* src, void* dst, int64_t n) {
  assert(IsRowSizeValid(t, n));
  switch (t) {
    case GgmlType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case GgmlType::kF16:
      F32ToF16Row(src, static_cast<uint16_t*>(dst), n);
      return;
    case GgmlType::kBF16:
      F32ToBf16Row(src, static_cast<uint16_t*>(dst), n);
      return;
    case GgmlType::kQ4_0:
      cpu::QuantizeRefQ4_0(src, static_cast<BlockQ4_0*>(dst), n);
      return;
    case GgmlType::kQ4_1:
      cpu::QuantizeRefQ4_1(src, static_cast<BlockQ4_1*>(dst), n);
      return;
    case GgmlType::kQ5_0:
      cpu::QuantizeRefQ5_0(src, static_cast<BlockQ5_0*>(dst), n);
      return;
    case GgmlType::kQ5_1:
      cpu::QuantizeRefQ5_1(src, static_cast<BlockQ5_1*>(dst), n);
      return;
    case GgmlType::kQ8_0:
      QuantizeRowQ8_0(src, static_cast<BlockQ8_0*>(dst), n);
      return;
    case GgmlType::kQ4_K:
      cpu::QuantizeRefQ4K(src, static_cast<BlockQ4K*>(dst), n);
      return;
    case GgmlType::kQ5_K:
      cpu::QuantizeRefQ5K(src, static_cast<BlockQ5K*>(dst), n);
      return;
    case GgmlType::kQ6_K:
      cpu::QuantizeRefQ6K(src, static_cast<BlockQ6K*>(dst), n);
      return;
    case GgmlType::kMXFP4:
      cpu::QuantizeRefMXFP4(src, static_cast<BlockMXFP4*>(dst), n);
      return;
    case GgmlType::kQ8_K:
      QuantizeRowQ8K(src, static_cast<BlockQ8K*>(dst), n);
      return;
    default:
      assert(false && "QuantizeRow: unsupported type");
  }
}

void QuantizeRowQ8_0(const float* src, BlockQ8_0* dst, int64_t n) {
#if defined(RADIXLM_KERNELS_X86)
  if (UseAvx2()) return cpu::avx2::QuantizeQ8_0(src, dst, n);
#endif
  cpu::scalar::QuantizeQ8_0(src, dst, n);
}

void QuantizeRowQ8K(const float* src, BlockQ8K* dst, int64_t n) {
#if defined(RADIXLM_KERNELS_X86)
  if (UseAvx2()) return cpu::avx2::QuantizeQ8K(src, dst, n);
#endif
  cpu::scalar::QuantizeQ8K(src, dst, n);
}

}  // namespace radixlm::kernels
