// AVX-VNNI packed GEMM of the codebook types (vpdpbusd on ymm; gemm_codebook_avx2_impl.h).
// Compiled with -mavx2 -mfma -mf16c -mavxvnni.
#include "kernels/cpu/gemm_codebook_avx2_impl.h"
#include "kernels/cpu/gemm_packed.h"

namespace radixlm::kernels::cpu::avxvnni {

void CodebookGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
                  int64_t g1, float* y, int64_t y_stride) {
  codebook256::CodebookGemm256<true>(w, a, n_tokens, g0, g1, y, y_stride);
}

}  // namespace radixlm::kernels::cpu::avxvnni
