// AVX-VNNI int8 GEMM over PackedWeights (vpdpbusd on ymm; gemm_avx2_impl.h), for CPUs with
// AVX-VNNI but no AVX-512 VNNI. Compiled with -mavx2 -mfma -mf16c -mavxvnni.
#include "kernels/cpu/gemm_avx2_impl.h"
#include "kernels/cpu/gemm_packed.h"

namespace radixlm::kernels::cpu::avxvnni {

void PackedGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
                int64_t g1, float* y, int64_t y_stride) {
  PackedGemm256<true>(w, a, n_tokens, g0, g1, y, y_stride);
}

}  // namespace radixlm::kernels::cpu::avxvnni
