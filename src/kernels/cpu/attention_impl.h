// Per-ISA inner kernel of attention (internal; dispatched by kernels/attention.cc).
#pragma once

#include <cstdint>

namespace radixlm::kernels::cpu {

// Online-softmax update of one (query, head) pair with a block of keys.
//   q: [head_dim]; k, v: [n, head_dim] (float, already converted from the cache)
//   only keys [lo, hi) of the block are visible (0 <= lo <= hi <= n)
//   score_j = scale * dot(q, k_j), soft-capped if softcap > 0
// State (m = running max, l = running sum of exp, acc = running sum of p * v) is updated so
// that acc / l is the attention output over all keys seen so far. m starts at -inf, l and acc
// at 0. No allocation; n <= kAttendBlockMax.
inline constexpr int kAttendBlockMax = 64;
using AttendBlockFn = void (*)(const float* q, const float* k, const float* v, int n, int lo,
                               int hi, int head_dim, float scale, float softcap, float* m, float* l,
                               float* acc);

namespace scalar {
void AttendBlock(const float* q, const float* k, const float* v, int n, int lo, int hi,
                 int head_dim, float scale, float softcap, float* m, float* l, float* acc);
}  // namespace scalar
namespace avx2 {
void AttendBlock(const float* q, const float* k, const float* v, int n, int lo, int hi,
                 int head_dim, float scale, float softcap, float* m, float* l, float* acc);
}  // namespace avx2

}  // namespace radixlm::kernels::cpu
