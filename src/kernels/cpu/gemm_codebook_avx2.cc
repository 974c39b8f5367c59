// AVX2 packed GEMM of the codebook types (vpmaddubsw + vpmaddwd; gemm_codebook_avx2_impl.h).
// Compiled with -mavx2 -mfma -mf16c.
#include "kernels/cpu/gemm_codebook_avx2_impl.h"
#include "kernels/cpu/gemm_packed.h"

namespace radixlm::kernels::cpu::avx2 {

void CodebookGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
                  int64_t g1, float* y, int64_t y_stride) {
  codebook256::CodebookGemm256<false>(w, a, n_tokens, g0, g1, y, y_stride);
}

}  // namespace radixlm::kernels::cpu::avx2
