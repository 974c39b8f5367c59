// AVX2 dots of one weight row of a codebook type (IQ3_XXS, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S,
// IQ1_S, IQ1_M) against 4 or 8 Q8_K activation rows: each 32-element group is decoded once (grid
// gathers, signs, scales; iquant_avx2.h) and multiplied with every row, so the decode cost (the
// larger part of a single-row dot) is paid once per 4 or 8 tokens. out[j] is bit for bit the
// single-row kernel's result (batch invariance; DotIqRows).
#include "kernels/cpu/iquant_avx2.h"

namespace radixlm::kernels::cpu::avx2 {

void Dot4IQ3XXS(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  DotIqRows<Iq3xxsDecoder, 4>(n, w, x, x_stride, out);
}
void Dot8IQ3XXS(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  DotIqRows<Iq3xxsDecoder, 8>(n, w, x, x_stride, out);
}
void Dot4IQ3S(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  DotIqRows<Iq3sDecoder, 4>(n, w, x, x_stride, out);
}
void Dot8IQ3S(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  DotIqRows<Iq3sDecoder, 8>(n, w, x, x_stride, out);
}
void Dot4IQ2XXS(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  DotIqRows<Iq2xxsDecoder, 4>(n, w, x, x_stride, out);
}
void Dot8IQ2XXS(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  DotIqRows<Iq2xxsDecoder, 8>(n, w, x, x_stride, out);
}
void Dot4IQ2XS(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  DotIqRows<Iq2xsDecoder, 4>(n, w, x, x_stride, out);
}
void Dot8IQ2XS(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  DotIqRows<Iq2xsDecoder, 8>(n, w, x, x_stride, out);
}
void Dot4IQ2S(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  DotIqRows<Iq2sDecoder, 4>(n, w, x, x_stride, out);
}
void Dot8IQ2S(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  DotIqRows<Iq2sDecoder, 8>(n, w, x, x_stride, out);
}
void Dot4IQ1S(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  DotIqRows<Iq1sDecoder, 4>(n, w, x, x_stride, out);
}
void Dot8IQ1S(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  DotIqRows<Iq1sDecoder, 8>(n, w, x, x_stride, out);
}
void Dot4IQ1M(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  DotIqRows<Iq1mDecoder, 4>(n, w, x, x_stride, out);
}
void Dot8IQ1M(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  DotIqRows<Iq1mDecoder, 8>(n, w, x, x_stride, out);
}

}  // namespace radixlm::kernels::cpu::avx2
