#include "kernels/dot.h"

#include <cassert>
#include <cstdlib>
#include <cstring>

#include "kernels/cpu/isa.h"
#include "kernels/cpu/lowbit_impl.h"
#include "kernels/fp16.h"
#include "kernels/quant.h"

namespace radixlm::kernels {
namespace {

Isa DetectIsa() {
  Isa isa = Isa::kScalar;
#if defined(RADIXLM_KERNELS_X86)
  if (cpu::CpuHasAvx2()) isa = Isa::kAvx2;
#if defined(RADIXLM_KERNELS_AVX_VNNI)
  if (cpu::CpuHasAvxVnni()) isa = Isa::kAvxVnni;
#endif
#if defined(RADIXLM_KERNELS_AVX512)
  if (cpu::CpuHasAvx512()) isa = Isa::kAvx512;
#if defined(RADIXLM_KERNELS_AMX)
  if (isa == Isa::kAvx512 && cpu::CpuHasAmxInt8()) isa = Isa::kAmx;
#endif
#endif
#endif
  if (const char* cap = std::getenv("RADIXLM_ISA")) {
    Isa limit = Isa::kAmx;
    if (std::strcmp(cap, "scalar") == 0) limit = Isa::kScalar;
    if (std::strcmp(cap, "avx2") == 0) limit = Isa::kAvx2;
    if (std::strcmp(cap, "avx_vnni") == 0) limit = Isa::kAvxVnni;
    if (std::strcmp(cap, "avx512") == 0) limit = Isa::kAvx512;
    if (static_cast<int>(limit) < static_cast<int>(isa)) isa = limit;
  }
  return isa;
}

VecDotFn ScalarFn(GgmlType t) {
  namespace s = cpu::scalar;
  switch (t) {
    case GgmlType::kF32:
      return s::DotF32;
    case GgmlType::kF16:
      return s::DotF16;
    case GgmlType::kBF16:
      return s::DotBf16;
    case GgmlType::kQ4_0:
      return s::DotQ4_0;
    case GgmlType::kQ4_1:
      return s::DotQ4_1;
    case GgmlType::kQ5_0:
      return s::DotQ5_0;
    case GgmlType::kQ5_1:
      return s::DotQ5_1;
    case GgmlType::kQ8_0:
      return s::DotQ8_0;
    case GgmlType::kQ4_K:
      return s::DotQ4K;
    case GgmlType::kQ5_K:
      return s::DotQ5K;
    case GgmlType::kQ6_K:
      return s::DotQ6K;
    case GgmlType::kQ2_K:
      return s::DotQ2K;
    case GgmlType::kQ3_K:
      return s::DotQ3K;
    case GgmlType::kIQ4_NL:
      return s::DotIQ4NL;
    case GgmlType::kMXFP4:
      return s::DotMXFP4;
    case GgmlType::kIQ4_XS:
      return s::DotIQ4XS;
    case GgmlType::kIQ2_XXS:
      return s::DotIQ2XXS;
    case GgmlType::kIQ2_XS:
      return s::DotIQ2XS;
    case GgmlType::kIQ2_S:
      return s::DotIQ2S;
    case GgmlType::kIQ3_XXS:
      return s::DotIQ3XXS;
    case GgmlType::kIQ3_S:
      return s::DotIQ3S;
    case GgmlType::kIQ1_S:
      return s::DotIQ1S;
    case GgmlType::kIQ1_M:
      return s::DotIQ1M;
    default:
      return nullptr;
  }
}

VecDotFn Avx2Fn(GgmlType t) {
#if defined(RADIXLM_KERNELS_X86)
  namespace a = cpu::avx2;
  switch (t) {
    case GgmlType::kF32:
      return a::DotF32;
    case GgmlType::kF16:
      return a::DotF16;
    case GgmlType::kBF16:
      return a::DotBf16;
    case GgmlType::kQ4_0:
      return a::DotQ4_0;
    case GgmlType::kQ4_1:
      return a::DotQ4_1;
    case GgmlType::kQ5_0:
      return a::DotQ5_0;
    case GgmlType::kQ5_1:
      return a::DotQ5_1;
    case GgmlType::kQ8_0:
      return a::DotQ8_0;
    case GgmlType::kQ4_K:
      return a::DotQ4K;
    case GgmlType::kQ5_K:
      return a::DotQ5K;
    case GgmlType::kQ6_K:
      return a::DotQ6K;
    case GgmlType::kQ2_K:
      return a::DotQ2K;
    case GgmlType::kQ3_K:
      return a::DotQ3K;
    case GgmlType::kIQ4_NL:
      return a::DotIQ4NL;
    case GgmlType::kMXFP4:
      return a::DotMXFP4;
    case GgmlType::kIQ4_XS:
      return a::DotIQ4XS;
    case GgmlType::kIQ2_XXS:
      return a::DotIQ2XXS;
    case GgmlType::kIQ2_XS:
      return a::DotIQ2XS;
    case GgmlType::kIQ2_S:
      return a::DotIQ2S;
    case GgmlType::kIQ3_XXS:
      return a::DotIQ3XXS;
    case GgmlType::kIQ3_S:
      return a::DotIQ3S;
    case GgmlType::kIQ1_S:
      return a::DotIQ1S;
    case GgmlType::kIQ1_M:
      return a::DotIQ1M;
    default:
      return nullptr;
  }
#else
  return nullptr;
#endif
}

VecDotFn Avx512Fn(GgmlType t) {
#if defined(RADIXLM_KERNELS_X86) && defined(RADIXLM_KERNELS_AVX512)
  namespace a = cpu::avx512;
  switch (t) {
    case GgmlType::kF32:
      return a::DotF32;
    case GgmlType::kF16:
      return a::DotF16;
    case GgmlType::kQ4_0:
      return a::DotQ4_0;
    case GgmlType::kQ5_0:
      return a::DotQ5_0;
    case GgmlType::kQ8_0:
      return a::DotQ8_0;
    default:
      return nullptr;
  }
#else
  return nullptr;
#endif
}

constexpr int kMaxTypeId = 40;  // above every weight type's id (MXFP4: 39)

VecDot4Fn Avx2Dot4Fn(GgmlType t);
VecDot8Fn Avx2Dot8Fn(GgmlType t);
VecDot8Q8KFn Avx2Dot8Q8KFn(GgmlType t);

struct DispatchTable {
  VecDotFn fns[kMaxTypeId] = {};
  DispatchTable() {
    const Isa isa = ActiveIsa();
    for (uint32_t id = 0; id < kMaxTypeId; ++id) {
      const auto t = static_cast<GgmlType>(id);
      VecDotFn fn = nullptr;
      // The AVX-512 single-row kernels serve only where no AVX2 multi-row (4/8-token) kernel
      // exists: the tiled kernels are faster for prefill and batched decode, and one weight
      // type uses one arithmetic for every batch size (batch invariance). Agreement of every
      // SIMD path with the scalar reference is a test (tests/kernels/dot_test.cc).
      if (isa >= Isa::kAvx512 && Avx2Dot4Fn(t) == nullptr && Avx2Dot8Fn(t) == nullptr &&
          Avx2Dot8Q8KFn(t) == nullptr) {
        fn = Avx512Fn(t);
      }
      if (fn == nullptr && static_cast<int>(isa) >= static_cast<int>(Isa::kAvx2)) fn = Avx2Fn(t);
      if (fn == nullptr) fn = ScalarFn(t);
      fns[id] = fn;
    }
  }
};

const DispatchTable& Table() {
  static const DispatchTable table;
  return table;
}

}  // namespace

GgmlType ActivationType(GgmlType weight_type) {
  switch (weight_type) {
    case GgmlType::kF32:
    case GgmlType::kF16:
    case GgmlType::kBF16:
      return GgmlType::kF32;
    case GgmlType::kQ4_0:
    case GgmlType::kQ4_1:
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1:
    case GgmlType::kQ8_0:
    case GgmlType::kIQ4_NL:
    case GgmlType::kMXFP4:
      return GgmlType::kQ8_0;
    case GgmlType::kQ2_K:
    case GgmlType::kQ3_K:
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K:
    case GgmlType::kQ6_K:
    case GgmlType::kIQ4_XS:
    case GgmlType::kIQ2_XXS:
    case GgmlType::kIQ2_XS:
    case GgmlType::kIQ2_S:
    case GgmlType::kIQ3_XXS:
    case GgmlType::kIQ3_S:
    case GgmlType::kIQ1_S:
    case GgmlType::kIQ1_M:
      return GgmlType::kQ8_K;
    default:
      assert(false && "ActivationType: unsupported weight type");
      return GgmlType::kF32;
  }
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvxVnni:
      return "avx_vnni";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAmx:
      return "amx";
  }
  return "?";
}

Isa ActiveIsa() {
  static const Isa isa = DetectIsa();
  return isa;
}

bool IsaAvailable(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return true;
    case Isa::kAvx2:
#if defined(RADIXLM_KERNELS_X86)
      return cpu::CpuHasAvx2();
#else
      return false;
#endif
    case Isa::kAvxVnni:
#if defined(RADIXLM_KERNELS_AVX_VNNI)
      return cpu::CpuHasAvxVnni();
#else
      return false;
#endif
    case Isa::kAvx512:
#if defined(RADIXLM_KERNELS_X86) && defined(RADIXLM_KERNELS_AVX512)
      return cpu::CpuHasAvx512();
#else
      return false;
#endif
    case Isa::kAmx:
#if defined(RADIXLM_KERNELS_X86) && defined(RADIXLM_KERNELS_AMX)
      return cpu::CpuHasAvx512() && cpu::CpuHasAmxInt8();
#else
      return false;
#endif
  }
  return false;
}

namespace {

VecDot4Fn Avx2Dot4Fn(GgmlType t) {
#if defined(RADIXLM_KERNELS_X86)
  namespace a = cpu::avx2;
  switch (t) {
    case GgmlType::kQ4_0:
      return a::Dot4Q4_0;
    case GgmlType::kQ5_0:
      return a::Dot4Q5_0;
    case GgmlType::kQ8_0:
      return a::Dot4Q8_0;
    case GgmlType::kQ4_K:
      return a::Dot4Q4K;
    case GgmlType::kQ6_K:
      return a::Dot4Q6K;
    case GgmlType::kQ2_K:
      return a::Dot4Q2K;
    case GgmlType::kQ3_K:
      return a::Dot4Q3K;
    case GgmlType::kIQ4_XS:
      return a::Dot4IQ4XS;
    case GgmlType::kIQ4_NL:
      return a::Dot4IQ4NL;
    case GgmlType::kMXFP4:
      return a::Dot4MXFP4;
    case GgmlType::kIQ3_XXS:
      return a::Dot4IQ3XXS;
    case GgmlType::kIQ3_S:
      return a::Dot4IQ3S;
    case GgmlType::kIQ2_XXS:
      return a::Dot4IQ2XXS;
    case GgmlType::kIQ2_XS:
      return a::Dot4IQ2XS;
    case GgmlType::kIQ2_S:
      return a::Dot4IQ2S;
    case GgmlType::kIQ1_S:
      return a::Dot4IQ1S;
    case GgmlType::kIQ1_M:
      return a::Dot4IQ1M;
    default:
      return nullptr;
  }
#else
  (void)t;
  return nullptr;
#endif
}

VecDot8Fn Avx2Dot8Fn(GgmlType t) {
#if defined(RADIXLM_KERNELS_X86)
  namespace a = cpu::avx2;
  switch (t) {
    case GgmlType::kQ4_0:
      return a::Dot8Q4_0;
    case GgmlType::kQ5_0:
      return a::Dot8Q5_0;
    case GgmlType::kQ8_0:
      return a::Dot8Q8_0;
    default:
      return nullptr;
  }
#else
  (void)t;
  return nullptr;
#endif
}

VecDot8Q8KFn Avx2Dot8Q8KFn(GgmlType t) {
#if defined(RADIXLM_KERNELS_X86)
  namespace a = cpu::avx2;
  switch (t) {
    case GgmlType::kIQ3_XXS:
      return a::Dot8IQ3XXS;
    case GgmlType::kIQ3_S:
      return a::Dot8IQ3S;
    case GgmlType::kIQ2_XXS:
      return a::Dot8IQ2XXS;
    case GgmlType::kIQ2_XS:
      return a::Dot8IQ2XS;
    case GgmlType::kIQ2_S:
      return a::Dot8IQ2S;
    case GgmlType::kIQ1_S:
      return a::Dot8IQ1S;
    case GgmlType::kIQ1_M:
      return a::Dot8IQ1M;
    default:
      return nullptr;
  }
#else
  (void)t;
  return nullptr;
#endif
}

// The AVX-512 multi-row kernels of the codebook types (bit for bit the AVX2 single-row ones).
#if defined(RADIXLM_KERNELS_X86) && defined(RADIXLM_KERNELS_AVX512)
#define RADIXLM_CODEBOOK_ROWS(N) \
  case GgmlType::kIQ3_XXS:       \
    return a::Dot##N##IQ3XXS;    \
  case GgmlType::kIQ3_S:         \
    return a::Dot##N##IQ3S;      \
  case GgmlType::kIQ2_XXS:       \
    return a::Dot##N##IQ2XXS;    \
  case GgmlType::kIQ2_XS:        \
    return a::Dot##N##IQ2XS;     \
  case GgmlType::kIQ2_S:         \
    return a::Dot##N##IQ2S;      \
  case GgmlType::kIQ1_S:         \
    return a::Dot##N##IQ1S;      \
  case GgmlType::kIQ1_M:         \
    return a::Dot##N##IQ1M;
VecDot4Fn Avx512Dot4Fn(GgmlType t) {
  namespace a = cpu::avx512;
  switch (t) {
    RADIXLM_CODEBOOK_ROWS(4)
    default:
      return nullptr;
  }
}
VecDot8Q8KFn Avx512Dot8Q8KFn(GgmlType t) {
  namespace a = cpu::avx512;
  switch (t) {
    RADIXLM_CODEBOOK_ROWS(8)
    default:
      return nullptr;
  }
}
#undef RADIXLM_CODEBOOK_ROWS
#else
VecDot4Fn Avx512Dot4Fn(GgmlType) { return nullptr; }
VecDot8Q8KFn Avx512Dot8Q8KFn(GgmlType) { return nullptr; }
#endif

// Whether the dispatched single-row kernel is the AVX2 one, which every multi-row kernel
// matches bit for bit. Where it is another one (AVX-512, scalar), MatMul uses the single-row
// kernel for every token: a token's result must not depend on how many tokens share the call
// (batch invariance).
bool DispatchesAvx2SingleRow(GgmlType t) {
  const VecDotFn single = GetVecDotFn(t);
  return single != nullptr && single == Avx2Fn(t);
}

}  // namespace

void SplitQ8_0x8(int64_t n, const void* x, size_t x_stride, int8_t* qs, size_t qs_stride,
                 float* scales) {
  const int64_t nb = n / kQK8_0;
  for (int j = 0; j < 8; ++j) {
    const auto* blocks =
        reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(x) + j * x_stride);
    int8_t* row = qs + j * qs_stride;
    for (int64_t i = 0; i < nb; ++i) {
      std::memcpy(row + i * kQK8_0, blocks[i].qs, kQK8_0);
      scales[8 * i + j] = F16ToF32(blocks[i].d);
    }
  }
}

VecDot8Fn GetVecDot8Fn(GgmlType weight_type) {
  return DispatchesAvx2SingleRow(weight_type) ? Avx2Dot8Fn(weight_type) : nullptr;
}

VecDot8Q8KFn GetVecDot8Q8KFn(GgmlType weight_type) {
  return DispatchesAvx2SingleRow(weight_type) ? GetVecDot8Q8KFnForIsa(weight_type, ActiveIsa())
                                              : nullptr;
}

VecDot4Fn GetVecDot4Fn(GgmlType weight_type) {
  return DispatchesAvx2SingleRow(weight_type) ? GetVecDot4FnForIsa(weight_type, ActiveIsa())
                                              : nullptr;
}

VecDot4Fn GetVecDot4FnForIsa(GgmlType weight_type, Isa isa) {
  if (!IsaAvailable(isa)) return nullptr;
  if (isa >= Isa::kAvx512) {
    if (const VecDot4Fn fn = Avx512Dot4Fn(weight_type)) return fn;
  }
  return isa >= Isa::kAvx2 ? Avx2Dot4Fn(weight_type) : nullptr;
}

VecDot8Q8KFn GetVecDot8Q8KFnForIsa(GgmlType weight_type, Isa isa) {
  if (!IsaAvailable(isa)) return nullptr;
  if (isa >= Isa::kAvx512) {
    if (const VecDot8Q8KFn fn = Avx512Dot8Q8KFn(weight_type)) return fn;
  }
  return isa >= Isa::kAvx2 ? Avx2Dot8Q8KFn(weight_type) : nullptr;
}

VecDotFn GetVecDotFn(GgmlType weight_type) {
  const auto id = static_cast<uint32_t>(weight_type);
  return id < kMaxTypeId ? Table().fns[id] : nullptr;
}

float VecDot(GgmlType weight_type, int64_t n, const void* weight_row, const void* x) {
  VecDotFn fn = GetVecDotFn(weight_type);
  assert(fn != nullptr);
  return fn(n, weight_row, x);
}

VecDotFn GetVecDotFnForIsa(GgmlType weight_type, Isa isa) {
  if (!IsaAvailable(isa)) return nullptr;
  switch (isa) {
    case Isa::kScalar:
      return ScalarFn(weight_type);
    case Isa::kAvx2:
    case Isa::kAvxVnni:  // AVX-VNNI has no dot kernels of its own
      return Avx2Fn(weight_type);
    case Isa::kAvx512:
    case Isa::kAmx:  // AMX has no dot kernels of its own
      return Avx512Fn(weight_type);
  }
  return nullptr;
}

}  // namespace radixlm::kernels
