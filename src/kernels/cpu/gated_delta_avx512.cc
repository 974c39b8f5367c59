// GatedDeltaStep with the value index in AVX-512 lanes (gated_delta_impl.h): blocks of up to
// 128 value indices, their sums in registers.
#include <immintrin.h>

#include "kernels/cpu/gated_delta_chunk_impl.h"
#include "kernels/cpu/gated_delta_impl.h"
#include "kernels/gated_delta.h"

namespace radixlm::kernels::cpu::avx512 {
namespace {

struct Avx512 {
  using Reg = __m512;
  static constexpr int kLanes = 16;
  static Reg Zero() { return _mm512_setzero_ps(); }
  static Reg Set1(float x) { return _mm512_set1_ps(x); }
  static Reg Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, Reg x) { _mm512_storeu_ps(p, x); }
  static Reg Add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static Reg Sub(Reg a, Reg b) { return _mm512_sub_ps(a, b); }
  static Reg Mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
  static Reg Fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
};

}  // namespace

void GatedDeltaStep(float* m, const float* q, const float* k, const float* v, float decay,
                    float beta, int64_t s, float* out) {
  GatedDeltaStepVec<Avx512, 8>(m, q, k, v, decay, beta, s, out);
}

void GatedDeltaChunk(float* m, const GatedDeltaTokens& x, int64_t n, int64_t s, float* scratch) {
  GatedDeltaChunkVec<Avx512, 8, 2>(m, x, n, s, scratch);
}

}  // namespace radixlm::kernels::cpu::avx512
