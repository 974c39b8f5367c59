// Vectorizable softmax building blocks shared by the sampler and the logprob code (internal).
//
// ExpNonPositive replaces std::exp on the softmax path: libm's expf is a call per element that
// the compiler cannot vectorize, and a 262k-token row needs 262k of them per decode step. The
// polynomial here is branch-free, so the row loops (softmax_math.cc) vectorize without
// -ffast-math; on x86-64 they are also cloned for AVX2 and picked at load time.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

namespace radixlm::softmax_math {

// Everything below is written without floating-point compares or branches in the loop bodies:
// under the default -ftrapping-math GCC will not if-convert a float compare, which would keep
// the loops scalar. Selections are done on the bit patterns instead.

// exp(x) for x <= 0 (softmax numerators after subtracting the max). Relative error below 3e-7
// for x >= -87; exactly 0 below that and for -inf; exactly 1 at 0. +NaN in, NaN out.
inline float ExpNonPositive(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  constexpr uint32_t kMinus87 = 0xC2AE0000u;  // bits of -87.0f
  // Negative floats order by magnitude as unsigned bits, and non-negative ones sit below
  // 0x80000000: bits <= kMinus87 <=> x >= -87 (or x >= +0).
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t in_range = 0u - static_cast<uint32_t>(bits <= kMinus87);
  const float clamped = std::bit_cast<float>((bits & in_range) | (kMinus87 & ~in_range));
  const float shifted = clamped * kLog2e + kRoundMagic;
  const float n = shifted - kRoundMagic;  // round(x / ln2), in [-126, 0]
  const float r = clamped - n * kLn2Hi - n * kLn2Lo;
  // Cephes expf minimax polynomial on [-ln2/2, ln2/2].
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  // 2^n from the integer sitting in shifted's low mantissa bits.
  const int32_t n_int = std::bit_cast<int32_t>(shifted) - std::bit_cast<int32_t>(kRoundMagic);
  const float scale = std::bit_cast<float>((n_int + 127) << 23);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(y * scale) & in_range);
}

// For non-negative (non-NaN) floats, ordering by bit pattern equals ordering by value.
inline float ZeroBelow(float p, uint32_t threshold_bits) {
  const uint32_t bits = std::bit_cast<uint32_t>(p);
  return std::bit_cast<float>(bits & (0u - static_cast<uint32_t>(bits >= threshold_bits)));
}

// The largest value (NaN ignored; -inf for an empty or all-NaN / all--inf row) and whether any
// NaN is present.
float MaxIgnoringNan(std::span<const float> values, bool* has_nan);

// out[i] = ExpNonPositive((in[i] - max) * scale) (in[i] <= max, not NaN); returns the sum of
// out, accumulated in float blocks folded into a double so it stays accurate at 262k elements.
double ExpShiftedAndSum(std::span<const float> in, float max, float scale, std::span<float> out);

// The same sum without storing the terms.
double SumExpShifted(std::span<const float> in, float max, float scale);

}  // namespace radixlm::softmax_math
