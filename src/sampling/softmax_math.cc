#include "sampling/softmax_math.h"

#include <algorithm>
#include <limits>

// Row loops get an AVX2 clone next to the baseline (SSE2) one on x86-64, chosen at load time
// (GCC function multiversioning). No FMA: both clones round identically, so results do not
// depend on the machine.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RADIXLM_ROW_LOOP __attribute__((target_clones("avx2", "default")))
#else
#define RADIXLM_ROW_LOOP
#endif

namespace radixlm::softmax_math {

RADIXLM_ROW_LOOP
float MaxIgnoringNan(std::span<const float> values, bool* has_nan) {
  constexpr int32_t kNone = std::numeric_limits<int32_t>::min();
  int32_t best = kNone;
  uint32_t nan = 0;
  for (float x : values) {
    const uint32_t bits = std::bit_cast<uint32_t>(x);
    const uint32_t is_nan = 0u - static_cast<uint32_t>((bits & 0x7FFFFFFFu) > 0x7F800000u);
    const int32_t s = static_cast<int32_t>(bits);
    const uint32_t key = static_cast<uint32_t>(s ^ ((s >> 31) & 0x7FFFFFFF));
    const int32_t candidate = static_cast<int32_t>((key & ~is_nan) | (0x80000000u & is_nan));
    best = candidate > best ? candidate : best;
    nan |= is_nan;
  }
  *has_nan = nan != 0;
  if (best == kNone) return -std::numeric_limits<float>::infinity();
  return std::bit_cast<float>(best ^ ((best >> 31) & 0x7FFFFFFF));
}

namespace {

// Shared body of the two sums; inlined into each clone so it is compiled for that target.
[[gnu::always_inline]] inline double ExpAndSumBody(const float* in, size_t n, float max,
                                                   float scale, float* out) {
  for (size_t i = 0; i < n; ++i) out[i] = ExpNonPositive((in[i] - max) * scale);
  double total = 0.0;
  constexpr size_t kBlock = 256;
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    float lanes[8] = {};
    for (size_t j = 0; j < kBlock; j += 8) {
      for (size_t k = 0; k < 8; ++k) lanes[k] += out[i + j + k];
    }
    total += ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
             ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  }
  for (; i < n; ++i) total += out[i];
  return total;
}

}  // namespace

RADIXLM_ROW_LOOP
double ExpShiftedAndSum(std::span<const float> in, float max, float scale, std::span<float> out) {
  return ExpAndSumBody(in.data(), in.size(), max, scale, out.data());
}

// The terms go through a stack block that stays in L1.
RADIXLM_ROW_LOOP
double SumExpShifted(std::span<const float> in, float max, float scale) {
  constexpr size_t kBlock = 1024;
  float block[kBlock];
  double total = 0.0;
  for (size_t i = 0; i < in.size(); i += kBlock) {
    const size_t len = std::min(kBlock, in.size() - i);
    total += ExpAndSumBody(in.data() + i, len, max, scale, block);
  }
  return total;
}

}  // namespace radixlm::softmax_math
