// AVX2 dot products of the 32-element block types with Q8_0 activations.
// Per block: exact int32 partial sums in 8 lanes, converted to float and scaled by
// d_w * d_x (FMA into float accumulators). The symmetric types use one accumulator, as ggml's
// ggml_vec_dot_q{4,5,8}_0_q8_0 and tinyBLAS_Q0_AVX do, so results are bit-identical to
// llama.cpp's.
#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/isa.h"

namespace radixlm::kernels::cpu::avx2 {
namespace {

inline __m256i LoadQ8(const int8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// Signed weight bytes of one block (element order) for the symmetric types.
inline __m256i WeightBytes(const BlockQ4_0& b) {
  return _mm256_sub_epi8(NibblesToBytes(b.qs), _mm256_set1_epi8(8));
}
inline __m256i WeightBytes(const BlockQ5_0& b) {
  // nibble | (hbit ? 0 : 0xF0) == (nibble | hbit << 4) - 16 as int8.
  const __m256i hi =
      _mm256_andnot_si256(BitsToBytes(b.qh), _mm256_set1_epi8(static_cast<char>(0xF0)));
  return _mm256_or_si256(NibblesToBytes(b.qs), hi);
}
inline __m256i WeightBytes(const BlockQ8_0& b) { return LoadQ8(b.qs); }

template <typename Block>
float DotSymmetric(int64_t n, const void* w, const void* x) {
  const Block* a = static_cast<const Block*>(w);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(x);
  const int64_t nb = n / kQK8_0;
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const __m256 d = _mm256_set1_ps(HalfToFloat(a[i].d) * HalfToFloat(y[i].d));
    const __m256i p = DotI8PairsI32(WeightBytes(a[i]), LoadQ8(y[i].qs));
    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(p), acc);
  }
  return HsumF32(acc);
}

// Unsigned weight bytes of the offset types (value = d * q + m).
inline __m256i WeightBytesU(const BlockQ4_1& b) { return NibblesToBytes(b.qs); }
inline __m256i WeightBytesU(const BlockQ5_1& b) {
  const __m256i hi = _mm256_and_si256(BitsToBytes(b.qh), _mm256_set1_epi8(0x10));
  return _mm256_or_si256(NibblesToBytes(b.qs), hi);
}

template <typename Block>
float DotOffset(int64_t n, const void* w, const void* x) {
  const Block* a = static_cast<const Block*>(w);
  const BlockQ8_0* y = static_cast<const BlockQ8_0*>(x);
  const int64_t nb = n / kQK8_0;
  __m256 acc = _mm256_setzero_ps(), acc_m = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const float dy = HalfToFloat(y[i].d);
    const __m256i qy = LoadQ8(y[i].qs);
    const __m256i p = DotU8I8I32(WeightBytesU(a[i]), qy);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(HalfToFloat(a[i].d) * dy), _mm256_cvtepi32_ps(p), acc);
    acc_m = _mm256_fmadd_ps(_mm256_set1_ps(HalfToFloat(a[i].m) * dy),
                            _mm256_cvtepi32_ps(SumI8Quads(qy)), acc_m);
  }
  return HsumF32(_mm256_add_ps(acc, acc_m));
}

// One weight row against 4 activation rows: the weight block is unpacked once and reused.
// Bit-identical to DotSymmetric per row (batch invariance: a token's result must not depend on
// which other tokens share its MatMul call): the same per-block products in the same single
// accumulator per row, and the same final HsumF32.
template <typename Block>
void Dot4Symmetric(int64_t n, const void* w, const void* x, size_t x_stride, float* out) {
  const Block* a = static_cast<const Block*>(w);
  const auto* xb = static_cast<const uint8_t*>(x);
  const BlockQ8_0* y[4];
  for (int j = 0; j < 4; ++j) y[j] = reinterpret_cast<const BlockQ8_0*>(xb + j * x_stride);
  const int64_t nb = n / kQK8_0;
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  for (int64_t i = 0; i < nb; ++i) {
    const __m256i qx = WeightBytes(a[i]);
    const float dw = HalfToFloat(a[i].d);
    for (int j = 0; j < 4; ++j) {
      const __m256 d = _mm256_set1_ps(dw * HalfToFloat(y[j][i].d));
      const __m256i p = DotI8PairsI32(qx, LoadQ8(y[j][i].qs));
      acc[j] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(p), acc[j]);
    }
  }
  for (int j = 0; j < 4; ++j) out[j] = HsumF32(acc[j]);
}

// One weight row against 8 activation rows, register-tiled (8 accumulators): the weight block
// is unpacked once per 8 rows, the activations are split Q8_0 (quants packed 32 bytes per block,
// so no load crosses a cache line when rows are 32-byte aligned; scales as float, block-major,
// converted once per MatMul), and the 8 scale products d_w * d_x of a block come from one
// vector multiply. Bit-identical to DotSymmetric per row: the same int32 lane sums, the same
// float products d_w * d_x (IEEE multiplication is exact-rounded and commutative), the same
// single FMA accumulator per row and the same final HsumF32.
template <typename Block>
void Dot8Symmetric(int64_t n, const void* w, const void* x, size_t x_stride,
                   const float* x_scales, float* out) {
  const Block* a = static_cast<const Block*>(w);
  const auto* xb = static_cast<const uint8_t*>(x);
  const int64_t nb = n / kQK8_0;
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0, acc4 = acc0,
         acc5 = acc0, acc6 = acc0, acc7 = acc0;
  alignas(32) float d[8];
  for (int64_t i = 0; i < nb; ++i) {
    const __m256i qw = WeightBytes(a[i]);
    const __m256i aw = _mm256_sign_epi8(qw, qw);
    _mm256_store_ps(d, _mm256_mul_ps(_mm256_set1_ps(HalfToFloat(a[i].d)),
                                     _mm256_loadu_ps(x_scales + 8 * i)));
    const uint8_t* xi = xb + i * kQK8_0;
    auto step = [&](int j, __m256& acc) {
      const __m256i sy = _mm256_sign_epi8(Load256(xi + j * x_stride), qw);
      const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(aw, sy), ones);
      acc = _mm256_fmadd_ps(_mm256_broadcast_ss(d + j), _mm256_cvtepi32_ps(p), acc);
    };
    step(0, acc0);
    step(1, acc1);
    step(2, acc2);
    step(3, acc3);
    step(4, acc4);
    step(5, acc5);
    step(6, acc6);
    step(7, acc7);
  }
  out[0] = HsumF32(acc0);
  out[1] = HsumF32(acc1);
  out[2] = HsumF32(acc2);
  out[3] = HsumF32(acc3);
  out[4] = HsumF32(acc4);
  out[5] = HsumF32(acc5);
  out[6] = HsumF32(acc6);
  out[7] = HsumF32(acc7);
}

}  // namespace

void Dot8Q4_0(int64_t n, const void* w, const void* x, size_t s, const float* xs, float* out) {
  Dot8Symmetric<BlockQ4_0>(n, w, x, s, xs, out);
}
void Dot8Q5_0(int64_t n, const void* w, const void* x, size_t s, const float* xs, float* out) {
  Dot8Symmetric<BlockQ5_0>(n, w, x, s, xs, out);
}
void Dot8Q8_0(int64_t n, const void* w, const void* x, size_t s, const float* xs, float* out) {
  Dot8Symmetric<BlockQ8_0>(n, w, x, s, xs, out);
}

void Dot4Q4_0(int64_t n, const void* w, const void* x, size_t s, float* out) {
  Dot4Symmetric<BlockQ4_0>(n, w, x, s, out);
}
void Dot4Q5_0(int64_t n, const void* w, const void* x, size_t s, float* out) {
  Dot4Symmetric<BlockQ5_0>(n, w, x, s, out);
}
void Dot4Q8_0(int64_t n, const void* w, const void* x, size_t s, float* out) {
  Dot4Symmetric<BlockQ8_0>(n, w, x, s, out);
}

float DotQ4_0(int64_t n, const void* w, const void* x) { return DotSymmetric<BlockQ4_0>(n, w, x); }
float DotQ5_0(int64_t n, const void* w, const void* x) { return DotSymmetric<BlockQ5_0>(n, w, x); }
float DotQ8_0(int64_t n, const void* w, const void* x) { return DotSymmetric<BlockQ8_0>(n, w, x); }
float DotQ4_1(int64_t n, const void* w, const void* x) { return DotOffset<BlockQ4_1>(n, w, x); }
float DotQ5_1(int64_t n, const void* w, const void* x) { return DotOffset<BlockQ5_1>(n, w, x); }

}  // namespace radixlm::kernels::cpu::avx2
